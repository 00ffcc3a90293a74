package org.sandbox4j.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;
import java.util.function.Function;

import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.core.SandboxRouter;
import org.sandbox4j.core.spi.TreeRemoval;

/**
 * For tests that run a kind or an adapter on a real backend: the backend built over its own state
 * root (a fresh temporary directory unless one is given), a router whose floor is the backend's
 * own rung, and, on {@link #close()}, the backend closed and the state root deleted. Any backend
 * that keeps its state under a root works; testkit names none, so it depends on core alone.
 *
 * <pre>{@code
 * try (TemporaryBackend<BubblewrapBackend> bubblewrap = TemporaryBackend.create("s4j",
 *         root -> BubblewrapBackend.builder().stateRoot(root).build())) {
 *     CodeAct.builder(bubblewrap.router(), "agent", context).build();
 * }
 * }</pre>
 */
public final class TemporaryBackend<B extends SandboxBackend & AutoCloseable> implements AutoCloseable {

    private final Path stateRoot;
    private final B backend;
    private final SandboxRouter router;

    private TemporaryBackend(Path stateRoot, B backend) {
        this.stateRoot = stateRoot;
        this.backend = backend;
        this.router = SandboxRouter.builder().backend(backend).minIsolation(backend.declarations().isolation())
                .build();
    }

    /** The backend {@code backendOn} builds over a fresh temporary directory named after {@code prefix}. */
    public static <B extends SandboxBackend & AutoCloseable> TemporaryBackend<B> create(String prefix,
            Function<Path, B> backendOn) {
        return on(temporaryDirectory(prefix), backendOn);
    }

    /** The backend {@code backendOn} builds over {@code stateRoot}, which {@link #close()} deletes. */
    public static <B extends SandboxBackend & AutoCloseable> TemporaryBackend<B> on(Path stateRoot,
            Function<Path, B> backendOn) {
        return new TemporaryBackend<>(stateRoot, Objects.requireNonNull(backendOn.apply(stateRoot), "backend"));
    }

    /** The state root the backend keeps its sandboxes under. */
    public Path stateRoot() {
        return stateRoot;
    }

    public B backend() {
        return backend;
    }

    /** A router serving the backend alone, with the backend's own rung as its floor. */
    public SandboxRouter router() {
        return router;
    }

    /** A fresh temporary directory named after {@code prefix}. */
    public static Path temporaryDirectory(String prefix) {
        try {
            return Files.createTempDirectory(prefix);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Deletes {@code root} and everything under it, as far as it can: a test's temporary directory,
     * once nothing writes to it any more. Core's one host-side deletion ({@link TreeRemoval}): a link
     * a guest left in the tree is unlinked, never followed.
     */
    public static void deleteTree(Path root) {
        try {
            TreeRemoval.remove(root, TreeRemoval.Mode.PROCESSES_STOPPED, TreeRemoval.DEFAULT_DEADLINE);
        } catch (IOException | RuntimeException ignored) {
            // Best effort: what is left is in the system's temporary directory.
        }
    }

    /** Closes the backend (disposing of what it holds, as it does on close), then deletes the state root. */
    @Override
    public void close() {
        try {
            backend.close();
        } catch (Exception failure) {
            throw new IllegalStateException("closing the backend failed", failure);
        } finally {
            deleteTree(stateRoot);
        }
    }
}
