package org.sandbox4j.cli;

import picocli.CommandLine.Option;

/** {@code --scope} and {@code --thread}: which conversation a sandbox belongs to. */
final class ConversationOptions {

    @Option(names = "--scope", paramLabel = "SCOPE",
            description = "The scope sandboxes belong to (env SANDBOX4J_SCOPE; default: your user name).")
    String scope;

    @Option(names = "--thread", paramLabel = "THREAD",
            description = "The conversation thread. Name one to keep a warm sandbox across invocations; by default "
                    + "each invocation gets its own, disposed of when it ends, so nothing is shared silently.")
    String thread;

    /** The scope: the flag, the environment, the config file, else the user's name. */
    String scope(Configuration configuration) {
        String resolved = configuration.value(Setting.SCOPE, scope).orElse(System.getProperty("user.name"));
        if (resolved.isBlank()) {
            throw CliFailure.usage("the scope cannot be blank");
        }
        return resolved;
    }
}
