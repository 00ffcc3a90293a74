package org.sandbox4j.cli;

import picocli.CommandLine.Model.CommandSpec;

/** {@code --scope} and {@code --thread}: which conversation a sandbox belongs to. */
final class ConversationOptions {

    String scope;
    String thread;

    /** Declares the options on {@code spec}, writing this object's fields. */
    void addTo(CommandSpec spec) {
        spec.addOption(CliSpec.option("--scope", "SCOPE", String.class, () -> scope, value -> scope = value,
                "The scope sandboxes belong to (env SANDBOX4J_SCOPE; default: your user name).").build());
        spec.addOption(CliSpec.option("--thread", "THREAD", String.class, () -> thread, value -> thread = value,
                "The conversation thread. Name one to keep a warm sandbox across invocations; by default each "
                        + "invocation gets its own, disposed of when it ends, so nothing is shared silently.")
                .build());
    }

    /** The scope: the flag, the environment, the config file, else the user's name. */
    String scope(Configuration configuration) {
        String resolved = configuration.value(Setting.SCOPE, scope).orElse(System.getProperty("user.name"));
        if (resolved.isBlank()) {
            throw CliFailure.usage("the scope cannot be blank");
        }
        return resolved;
    }
}
