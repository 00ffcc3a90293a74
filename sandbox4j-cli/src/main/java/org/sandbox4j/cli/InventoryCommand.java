package org.sandbox4j.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.function.Function;

import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.core.SandboxInventory;
import org.sandbox4j.core.SandboxQuery;
import picocli.CommandLine.Model.CommandSpec;

/**
 * What {@code ls} and {@code purge} share: the conversation they ask about (a scope, or one
 * {@code --thread} of it) and the backends they ask, every known one that keeps an inventory and
 * can run here.
 */
abstract class InventoryCommand implements Callable<Integer> {

    final Sandbox4jCommand root;
    final CommandSpec spec;
    final ConversationOptions conversation = new ConversationOptions();
    final DockerOptions docker = new DockerOptions();

    InventoryCommand(Sandbox4jCommand root, String name, String description) {
        this.root = root;
        spec = CliSpec.command(name, this, description);
        conversation.addTo(spec);
        docker.addTo(spec);
        CliSpec.standardHelpOptions(spec);
    }

    /** The sandboxes asked about: the scope's, or one thread's. */
    SandboxQuery query() {
        String scope = conversation.scope(root.configuration());
        if (conversation.thread == null) {
            return SandboxQuery.scope(scope);
        }
        if (conversation.thread.isBlank()) {
            throw CliFailure.usage("--thread cannot be blank");
        }
        return SandboxQuery.conversation(scope, conversation.thread);
    }

    /** {@code scope 'S'}, or {@code scope 'S', thread 'T'}: the query as the answers name it. */
    static String described(SandboxQuery query) {
        return "scope '" + query.scope() + "'"
                + query.threadId().map(thread -> ", thread '" + thread + "'").orElse("");
    }

    /**
     * Asks every inventory-keeping backend that opens here, letting each go after, and returns
     * the answers in {@link KnownBackend} order; the others are named with --verbose. docker
     * opens only with an image configured (its backend is built around one) and its engine
     * answering.
     */
    <T> List<T> askEachInventory(Function<SandboxInventory, T> question) {
        List<T> answers = new ArrayList<>();
        DockerSettings dockerSettings = docker.settings(root.configuration());
        for (KnownBackend known : KnownBackend.values()) {
            if (known == KnownBackend.SBX) {
                root.console().detail("sbx: not listed (its sandboxes are named by digest; use sbx ls)");
                continue;
            }
            SandboxBackend backend;
            try {
                backend = known.open(root.stateDirectory(), root.configuration().environment(), dockerSettings);
            } catch (CliFailure unavailable) {
                root.console().detail(known.wire() + ": skipped: " + unavailable.getMessage());
                continue;
            }
            try {
                if (backend instanceof SandboxInventory inventory) {
                    answers.add(question.apply(inventory));
                }
            } finally {
                KnownBackend.release(backend);
            }
        }
        return answers;
    }
}
