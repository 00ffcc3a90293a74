package org.sandbox4j.cli;

import java.util.ArrayList;
import java.util.List;

import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.core.SandboxInventory;
import org.sandbox4j.core.SandboxQuery;

/** The backends {@code ls} and {@code purge} ask: every known one that keeps an inventory and can run here. */
final class Inventories {

    private Inventories() {
    }

    /** A backend opened for its inventory; closing lets it go. */
    record Opened(SandboxBackend backend) implements AutoCloseable {

        SandboxInventory inventory() {
            return (SandboxInventory) backend;
        }

        @Override
        public void close() {
            if (backend instanceof AutoCloseable closeable) {
                try {
                    closeable.close();
                } catch (Exception ignored) {
                    // Only proxies to stop, and listing starts none.
                }
            }
        }
    }

    static SandboxQuery query(Sandbox4jCommand root, ConversationOptions conversation) {
        String scope = conversation.scope(root.configuration());
        if (conversation.thread == null) {
            return SandboxQuery.scope(scope);
        }
        if (conversation.thread.isBlank()) {
            throw CliFailure.usage("--thread cannot be blank");
        }
        return SandboxQuery.conversation(scope, conversation.thread);
    }

    /**
     * Every inventory-keeping backend that opens here; the others are named with --verbose. docker
     * opens only with an image configured (its backend is built around one) and its engine answering.
     */
    static List<Opened> open(Sandbox4jCommand root, DockerOptions docker) {
        DockerSettings dockerSettings = docker.settings(root.configuration());
        List<Opened> opened = new ArrayList<>();
        for (KnownBackend known : KnownBackend.values()) {
            if (known == KnownBackend.SBX) {
                root.console().detail("sbx: not listed (its sandboxes are named by digest; use sbx ls)");
                continue;
            }
            try {
                SandboxBackend backend = known.open(root.stateDirectory(), root.configuration().environment(),
                        dockerSettings);
                if (backend instanceof SandboxInventory) {
                    opened.add(new Opened(backend));
                } else {
                    new Opened(backend).close();
                }
            } catch (CliFailure unavailable) {
                root.console().detail(known.wire() + ": skipped: " + unavailable.getMessage());
            }
        }
        return opened;
    }
}
