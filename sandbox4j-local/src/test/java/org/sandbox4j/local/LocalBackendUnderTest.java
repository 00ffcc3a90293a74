package org.sandbox4j.local;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.sandbox4j.core.Egress;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxSpec;

/**
 * One test's local backend of either type over a fresh state root: built on demand, and closing
 * it disposes of the test's sandbox, closes the backend and deletes the state root.
 */
final class LocalBackendUnderTest implements AutoCloseable {

    private final Path stateRoot;
    private final SandboxKey key;
    private SandboxBackend backend;

    private LocalBackendUnderTest(Path stateRoot, SandboxKey key) {
        this.stateRoot = stateRoot;
        this.key = key;
    }

    /** @param prefix a short state-root prefix (a unix socket path below it stays under 108 bytes) */
    static LocalBackendUnderTest fresh(String prefix, SandboxKey key) throws IOException {
        return new LocalBackendUnderTest(Files.createTempDirectory(prefix), key);
    }

    /** Builds the backend of {@code type} (bubblewrap or process); returns the spec that backend serves. */
    SandboxSpec backendOf(String type, String kind) {
        return backendOf(type, kind, true);
    }

    /**
     * {@link #backendOf(String, String)}, where bubblewrap may be told to run one {@code bwrap} per
     * command instead of its resident agent: for tests of the launchers that path puts in front.
     */
    SandboxSpec backendOf(String type, String kind, boolean residentAgent) {
        boolean process = type.equals(ProcessBackend.TYPE);
        backend = process ? ProcessBackend.builder().stateRoot(stateRoot).build()
                : BubblewrapBackend.builder().stateRoot(stateRoot).residentAgent(residentAgent).build();
        return SandboxSpec.builder(kind).egress(process ? Egress.UNRESTRICTED : Egress.CLOSED).build();
    }

    /** A sandbox acquired for the test's key, and its work dir as the backend places it. */
    record Acquired(Sandbox sandbox, String workDir) {
    }

    /** Builds the backend of {@code type} and acquires the test's sandbox of {@code kind} in it. */
    Acquired acquire(String type, String kind) {
        return acquire(type, kind, true);
    }

    /** {@link #acquire(String, String)} with one {@code bwrap} per command on bubblewrap. */
    Acquired acquirePerCommand(String type, String kind) {
        return acquire(type, kind, false);
    }

    private Acquired acquire(String type, String kind, boolean residentAgent) {
        SandboxSpec spec = backendOf(type, kind, residentAgent);
        Sandbox sandbox = backend.acquire(key, spec);
        return new Acquired(sandbox, spec.workDirIn(sandbox));
    }

    /** Uses {@code built} (made over {@link #stateRoot()}) as the backend. */
    <B extends SandboxBackend> B use(B built) {
        backend = built;
        return built;
    }

    SandboxBackend backend() {
        return backend;
    }

    Path stateRoot() {
        return stateRoot;
    }

    /** Writes {@code text} to {@code file} and makes it executable: a stand-in for a host program. */
    static Path script(Path file, String text) throws IOException {
        Files.writeString(file, text);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
        return file;
    }

    @Override
    public void close() throws Exception {
        if (backend != null) {
            backend.dispose(key);
            ((AutoCloseable) backend).close();
        }
        LocalStore.deleteTree(stateRoot);
    }
}
