package org.sandbox4j.core.tool;

import java.util.Optional;

import org.sandbox4j.core.BackendDeclarations;
import org.sandbox4j.core.CallerContext;
import org.sandbox4j.core.Egress;
import org.sandbox4j.core.Isolation;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxRouter;
import org.sandbox4j.core.SandboxSpec;

/**
 * Tools for the adapter-plumbing tests: a router whose one backend serves every spec but is never
 * asked for a sandbox, and a tool whose body answers the key it would run under.
 */
final class KeyTools {

    static final String AGENT = "agent";

    /** A router that can serve any spec; a body that acquires fails the test. */
    static final SandboxRouter ROUTER = SandboxRouter.builder().backend(new NeverAcquired())
            .minIsolation(Isolation.CONTAINER).build();

    private KeyTools() {
    }

    /** A tool named {@code name} answering {@code scope|thread|agent} of its call. */
    static Optional<SandboxTool> whoami(String name, CallerContext context, boolean requiresApproval) {
        return SandboxedTool.builder(name, SandboxSpec.builder(name).build())
                .router(ROUTER).context(context).agentDir(AGENT)
                .description("Says which key the call ran under.")
                .requiresApproval(requiresApproval)
                .body((call, arguments) -> {
                    SandboxKey key = call.key();
                    return ToolResult.ok(key.scope() + "|" + key.threadId() + "|" + key.agentDir());
                })
                .build();
    }

    private static final class NeverAcquired implements SandboxBackend {

        @Override
        public String name() {
            return "never-acquired";
        }

        @Override
        public BackendDeclarations declarations() {
            return BackendDeclarations.builder(Isolation.CONTAINER).egressModes(Egress.values()).build();
        }

        @Override
        public Sandbox acquire(SandboxKey key, SandboxSpec spec) {
            throw new AssertionError("these tests never acquire a sandbox");
        }

        @Override
        public void dispose(SandboxKey key) {
        }

        @Override
        public int disposeScope(String scope, String threadId) {
            return 0;
        }
    }
}
