package org.sandbox4j.mcp;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

import org.sandbox4j.codeact.CodeAct;
import org.sandbox4j.core.Isolation;
import org.sandbox4j.core.SandboxRouter;
import org.sandbox4j.local.BubblewrapBackend;

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

    /**
     * Every regular file named {@code name} the backend holds under {@code stateRoot}: on the host,
     * and in each sandbox's workspace, a tmpfs that only the mount namespace of the sandbox's keeper
     * (its pid is the first word of the {@code keeper} file in the sandbox's directory) shows,
     * reached as the backend reaches it, through {@code /proc/<pid>/root}. A tree that changes
     * during the walk (a disposal in progress) is walked again.
     */
    static List<Path> filesNamed(Path stateRoot, String name) {
        for (int attempt = 1; ; attempt++) {
            try {
                List<Path> roots = new ArrayList<>(List.of(stateRoot));
                for (Path keeper : regularFilesNamed(stateRoot, "keeper")) {
                    String pid = Files.readString(keeper).strip().split(" ")[0];
                    roots.add(Path.of("/proc", pid, "root").resolve(stateRoot.getRoot().relativize(keeper.getParent())));
                }
                List<Path> found = new ArrayList<>();
                for (Path root : roots) {
                    if (Files.isDirectory(root)) {
                        found.addAll(regularFilesNamed(root, name));
                    }
                }
                return found;
            } catch (IOException | UncheckedIOException changed) {
                if (attempt == 3) {
                    throw new IllegalStateException("the state root kept changing while it was walked", changed);
                }
            }
        }
    }

    private static List<Path> regularFilesNamed(Path root, String name) throws IOException {
        try (Stream<Path> walk = Files.walk(root)) {
            return walk.filter(path -> path.getFileName() != null && path.getFileName().toString().equals(name))
                    .filter(path -> Files.isRegularFile(path, java.nio.file.LinkOption.NOFOLLOW_LINKS)).toList();
        }
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
