package org.sandbox4j.mcp;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

import org.sandbox4j.codeact.CodeAct;
import org.sandbox4j.core.Isolation;
import org.sandbox4j.core.SandboxRouter;
import org.sandbox4j.local.BubblewrapBackend;
import org.sandbox4j.local.SandboxFilesOnTheHost;

/** A real bubblewrap backend over a fresh state root, and a server offering execute_code on it. */
final class BubblewrapFixture implements AutoCloseable {

    static final String AGENT = "mcp";

    final Path stateRoot;
    final BubblewrapBackend backend;
    final SandboxRouter router;

    BubblewrapFixture() {
        this(newStateRoot());
    }

    BubblewrapFixture(Path stateRoot) {
        this.stateRoot = stateRoot;
        this.backend = BubblewrapBackend.builder().stateRoot(stateRoot).build();
        this.router = SandboxRouter.builder().backend(backend).minIsolation(Isolation.CONTAINER).build();
    }

    static Path newStateRoot() {
        try {
            return Files.createTempDirectory("s4jm");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
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
        try (Stream<Path> walk = Files.walk(root)) {
            walk.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        } catch (IOException ignored) {
            // best effort: a temporary directory
        }
    }

    @Override
    public void close() {
        backend.close();
        deleteTree(stateRoot);
    }
}
