package org.sandbox4j.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.spi.TreeRemoval;

/**
 * The harness the benchmarks of a real backend share: before measuring, one backend whose state
 * lives in a fresh temporary directory and one warm sandbox on it; after, every sandbox of the
 * bench disposed of, the backend closed and the directory removed. A subclass says which backend,
 * how its warm sandbox is acquired and what it measures; it may override the run lengths below
 * (JMH inherits these annotations).
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 3)
@Fork(1)
@State(Scope.Benchmark)
public abstract class WarmSandboxBenchmark<B extends SandboxBackend & AutoCloseable> {

    static final String TENANT = "bench";
    private static final String WARM_SCOPE = "warm";
    private static final SandboxKey WARM = new SandboxKey(TENANT, WARM_SCOPE, "bench");

    private Path scratch;
    B backend;
    Sandbox warm;

    /** The backend under measurement, keeping whatever state it has under {@code scratch}. */
    abstract B openBackend(Path scratch);

    /**
     * Acquires the warm sandbox under {@code key} and readies whatever the measured calls need
     * besides it (options, a command line to compare with).
     */
    abstract Sandbox acquireWarm(SandboxKey key);

    @Setup(Level.Trial)
    public void start() throws IOException {
        // Others may pass through (not list): a microVM backend run as root then runs each QEMU as a uid of its own.
        scratch = Files.createTempDirectory(Path.of("/tmp"), "s4jb",
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx--x--x")));
        backend = openBackend(scratch);
        warm = acquireWarm(WARM);
    }

    @TearDown(Level.Trial)
    public void stop() throws Exception {
        backend.disposeScope(TENANT, WARM_SCOPE);
        backend.disposeScope(TENANT, ColdKey.SCOPE);
        backend.close();
        // The guests have stopped; the kit's removal never follows a link they may have left.
        TreeRemoval.remove(scratch, TreeRemoval.Mode.PROCESSES_STOPPED, TreeRemoval.DEFAULT_DEADLINE);
    }

    /** Runs a process with nothing on its stdin, its output read and dropped; returns its exit code. */
    static int runToExit(ProcessBuilder builder) throws IOException, InterruptedException {
        Process process = builder.start();
        process.getOutputStream().close();
        drain(process.getInputStream());
        drain(process.getErrorStream());
        return process.waitFor();
    }

    private static void drain(InputStream stream) throws IOException {
        try (stream) {
            stream.transferTo(OutputStream.nullOutputStream());
        }
    }
}
