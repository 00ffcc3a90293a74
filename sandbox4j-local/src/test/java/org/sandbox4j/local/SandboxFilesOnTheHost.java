package org.sandbox4j.local;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * For tests of other modules (this module's test jar): the files a local backend holds under a
 * state root, seen from the host. A bubblewrap sandbox's workspace is a tmpfs only its keeper's
 * mount namespace shows, so it is reached as the backend reaches it ({@link
 * WorkspaceKeeper#workspaceSeenByTheHost}); everything else is under the state root itself.
 */
public final class SandboxFilesOnTheHost {

    private static final int ATTEMPTS = 3;

    private SandboxFilesOnTheHost() {
    }

    /**
     * Every regular file named {@code name}, in any sandbox's workspace or anywhere else under
     * {@code stateRoot}. A tree that changes during the walk (a disposal in progress) is walked
     * again.
     */
    public static List<Path> named(Path stateRoot, String name) {
        for (int attempt = 1; ; attempt++) {
            try {
                List<Path> roots = new ArrayList<>(List.of(stateRoot));
                for (Path record : regularFilesNamed(stateRoot, WorkspaceKeeper.FILE)) {
                    Path sandbox = record.getParent();
                    Optional<WorkspaceKeeper> keeper = WorkspaceKeeper.find(sandbox);
                    keeper.ifPresent(running -> roots.add(running.workspaceSeenByTheHost(
                            sandbox.resolve(LocalStore.WORKSPACE))));
                }
                List<Path> found = new ArrayList<>();
                for (Path root : roots) {
                    if (Files.isDirectory(root)) {
                        found.addAll(regularFilesNamed(root, name));
                    }
                }
                return found;
            } catch (IOException | UncheckedIOException changed) {
                if (attempt == ATTEMPTS) {
                    throw new IllegalStateException("the state root kept changing while it was walked", changed);
                }
            }
        }
    }

    private static List<Path> regularFilesNamed(Path root, String name) throws IOException {
        try (Stream<Path> walk = Files.walk(root)) {
            return walk.filter(path -> path.getFileName() != null && path.getFileName().toString().equals(name))
                    .filter(path -> Files.isRegularFile(path, LinkOption.NOFOLLOW_LINKS)).toList();
        }
    }
}
