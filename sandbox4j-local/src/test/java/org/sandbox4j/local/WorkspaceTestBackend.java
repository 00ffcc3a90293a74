package org.sandbox4j.local;

import java.nio.file.Path;
import org.sandbox4j.core.BackendDeclarations;
import org.sandbox4j.core.Capability;
import org.sandbox4j.core.Egress;
import org.sandbox4j.core.Isolation;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxSpec;

/**
 * TEST ONLY: a backend handing out {@link WorkspaceTestSandbox}es over one shared workspace, enough
 * for the TCK's file suites (each suite run works in its own directory under the work base).
 */
final class WorkspaceTestBackend implements SandboxBackend {

    static final String NAME = "workspace-test";

    private final Path workspace;
    private final String mountPoint;

    WorkspaceTestBackend(Path workspace, String mountPoint) {
        this.workspace = workspace;
        this.mountPoint = mountPoint;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public BackendDeclarations declarations() {
        return BackendDeclarations.builder(Isolation.CONTAINER)
                .capabilities(Capability.EXEC, Capability.FILES_IN, Capability.FILES_OUT, Capability.FILES_LIST,
                        Capability.FILES_DELETE)
                .egressModes(Egress.CLOSED)
                .build();
    }

    @Override
    public Sandbox acquire(SandboxKey key, SandboxSpec spec) {
        return new WorkspaceTestSandbox(workspace, mountPoint, NAME);
    }

    @Override
    public void dispose(SandboxKey key) {
        // The workspace is the test's temporary directory; JUnit removes it.
    }

    @Override
    public int disposeScope(String scope, String threadId) {
        return 0;
    }
}
