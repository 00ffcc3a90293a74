package org.sandbox4j.mcp;

import java.nio.file.Path;
import java.util.List;

import org.sandbox4j.codeact.CodeAct;
import org.sandbox4j.core.SandboxRouter;
import org.sandbox4j.local.BubblewrapBackend;
import org.sandbox4j.local.SandboxFilesOnTheHost;
import org.sandbox4j.testkit.TemporaryBackend;

/** A real bubblewrap backend over a fresh state root (testkit's {@link TemporaryBackend}), and a server offering execute_code on it. */
final class BubblewrapFixture implements AutoCloseable {

    static final String AGENT = "mcp";

    private final TemporaryBackend<BubblewrapBackend> bubblewrap;
    final Path stateRoot;
    final BubblewrapBackend backend;
    final SandboxRouter router;

    BubblewrapFixture() {
        this(newStateRoot());
    }

    BubblewrapFixture(Path stateRoot) {
        this.bubblewrap = TemporaryBackend.on(stateRoot, root -> BubblewrapBackend.builder().stateRoot(root).build());
        this.stateRoot = stateRoot;
        this.backend = bubblewrap.backend();
        this.router = bubblewrap.router();
    }

    static Path newStateRoot() {
        return TemporaryBackend.temporaryDirectory("s4jm");
    }

    /** A server on this backend offering execute_code, keyed under {@code scope}. */
    SandboxMcpServer.Builder server(String scope) {
        return SandboxMcpServer.builder().router(router).scope(scope)
                .tools(context -> List.of(CodeAct.builder(router, AGENT, context).build()));
    }

    /** Every regular file named {@code name} the backend holds under {@code stateRoot}, workspaces included. */
    static List<Path> filesNamed(Path stateRoot, String name) {
        return SandboxFilesOnTheHost.named(stateRoot, name);
    }

    static void deleteTree(Path root) {
        TemporaryBackend.deleteTree(root);
    }

    @Override
    public void close() {
        bubblewrap.close();
    }
}
