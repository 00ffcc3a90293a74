package org.sandbox4j.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.spi.GuestEnvironment;
import org.sandbox4j.core.spi.TreeRemoval;
import org.sandbox4j.microvm.GuestImage;
import org.sandbox4j.microvm.HandBootedGuest;
import org.sandbox4j.microvm.MicroVmBackend;
import org.sandbox4j.microvm.WarmPools;

/**
 * What {@link MicroVmBackend} costs, in one run, side by side with the bare mechanism and with the
 * local backend: an acquire of a new key restored from the backend's snapshot, one claimed from a
 * warm pool ({@code warmPool(1)}), and one that boots cold (snapshots off), each with its first
 * {@code exec("/bin/true")}, against the same QEMU command
 * line booted by hand ({@link HandBootedGuest}), and the same snapshot restored by hand, each
 * with one exec over a bare {@link org.sandbox4j.agent.AgentConnection}; a warm {@code /bin/true} through the sandbox,
 * through a bare connection to a hand-booted guest (the layers' cost) and through bubblewrap (on
 * {@link BubblewrapExecBenchmark}'s own warm sandbox); a warm
 * {@code python3 -c 'print(sum(range(10)))'} on both backends and over the bare connection.
 * Issue 20's targets: restore acquire + first exec within 150 ms median, warm exec within 10 ms.
 *
 * <p>Run: {@code SANDBOX4J_MICROVM_GUEST=dir java -jar sandbox4j-bench/target/benchmarks.jar MicroVmBenchmark}
 * (needs QEMU, the guest {@code build-guest.sh} makes, bwrap and python3). Boots take seconds under
 * TCG, so the cold rows are a few single shots; read the p0.50 lines of the others.
 */
public class MicroVmBenchmark extends WarmSandboxBenchmark<MicroVmBackend> {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    /** MicroVmBackend's default boot deadline: TCG on a busy host is slow. */
    private static final Duration BOOT_DEADLINE = Duration.ofSeconds(60);
    private static final Command TRUE = Command.argv("/bin/true");
    private static final Command SUM = Command.argv("python3", "-c", "print(sum(range(10)))");
    /** Where a hand-booted guest runs its commands: it has no work dir made for it. */
    private static final String ROOT = "/";

    private SandboxSpec spec;
    private ExecOptions options;

    @Override
    MicroVmBackend openBackend(Path scratch) {
        return MicroVmBackend.builder().guest(guestImage()).stateRoot(scratch).build();
    }

    @Override
    Sandbox acquireWarm(SandboxKey key) {
        spec = SandboxSpec.builder("bench").build();
        options = ExecOptions.in(spec.workDir(), TIMEOUT);
        return backend.acquire(key, spec);
    }

    static GuestImage guestImage() {
        return GuestImage.installed().orElseThrow(() -> new IllegalStateException("set "
                + GuestImage.DIRECTORY_VARIABLE + " to the directory sandbox4j-microvm/src/main/guest/build-guest.sh "
                + "printed"));
    }

    /** The bare exec: the same argv and environment the sandbox sends, straight to the agent. */
    static ExecResult bareExec(HandBootedGuest guest, Command command) {
        List<String> argv = ((Command.Argv) command).words();
        return guest.agent().exec(argv, ROOT, GuestEnvironment.WITH_SYSTEM_PATH, ExecOptions.in(ROOT, TIMEOUT),
                command.toShellLine());
    }

    @Benchmark
    @BenchmarkMode(Mode.SingleShotTime)
    @Warmup(iterations = 1)
    @Measurement(iterations = 5)
    public int restoreAcquireAndFirstExec(ColdKey cold) {
        return cold.acquire(backend, spec).exec(TRUE, options).exitCode();
    }

    @Benchmark
    @BenchmarkMode(Mode.SingleShotTime)
    @Warmup(iterations = 1)
    @Measurement(iterations = 5)
    public int sameSnapshotRestoredByHandAndFirstExec(RestoredGuest restored) throws IOException {
        return bareExec(restored.restore(), TRUE).exitCode();
    }

    @Benchmark
    @BenchmarkMode(Mode.SingleShotTime)
    @Warmup(iterations = 1)
    @Measurement(iterations = 5)
    public int warmPoolAcquireAndFirstExec(PooledBackend pooled, ColdKey cold) {
        return cold.acquire(pooled.backend, spec).exec(TRUE, options).exitCode();
    }

    @Benchmark
    @BenchmarkMode(Mode.SingleShotTime)
    @Warmup(iterations = 1)
    @Measurement(iterations = 5)
    public int coldBootAcquireAndFirstExec(ColdBackend booting, ColdKey cold) {
        return cold.acquire(booting.backend, spec).exec(TRUE, options).exitCode();
    }

    @Benchmark
    @BenchmarkMode(Mode.SingleShotTime)
    @Warmup(iterations = 1)
    @Measurement(iterations = 5)
    public int sameCommandLineBootedByHandAndFirstExec(ColdGuest cold) throws IOException {
        return bareExec(cold.boot(), TRUE).exitCode();
    }

    @Benchmark
    public int warmExecThroughTheBackend() {
        return warm.exec(TRUE, options).exitCode();
    }

    @Benchmark
    public int warmExecOverABareAgentConnection(WarmGuest guest) {
        return bareExec(guest.booted, TRUE).exitCode();
    }

    @Benchmark
    public int warmExecThroughBubblewrap(BubblewrapExecBenchmark local) {
        return local.warmExecThroughTheBackend();
    }

    @Benchmark
    public ExecResult pythonSumThroughTheBackend() {
        return warm.exec(SUM, options);
    }

    @Benchmark
    public ExecResult pythonSumOverABareAgentConnection(WarmGuest guest) {
        return bareExec(guest.booted, SUM);
    }

    @Benchmark
    public ExecResult pythonSumThroughBubblewrap(BubblewrapExecBenchmark local) {
        return local.warm.exec(SUM, local.options);
    }

    /** A backend with snapshots off: every acquire of a new key boots a guest. */
    @State(Scope.Benchmark)
    public static class ColdBackend {

        private Path stateRoot;
        MicroVmBackend backend;

        @Setup(Level.Trial)
        public void open() throws IOException {
            stateRoot = Files.createTempDirectory(Path.of("/tmp"), "s4jc",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx--x--x")));
            backend = MicroVmBackend.builder().guest(guestImage()).stateRoot(stateRoot).snapshots(false).build();
        }

        @TearDown(Level.Trial)
        public void close() throws IOException {
            backend.close();
            TreeRemoval.remove(stateRoot, TreeRemoval.Mode.PROCESSES_STOPPED, TreeRemoval.DEFAULT_DEADLINE);
        }
    }

    /**
     * A backend keeping one idle guest restored ahead ({@code warmPool(1)}): each measured acquire
     * claims it, and the next waits, unmeasured, for the pool to hold one again.
     */
    @State(Scope.Benchmark)
    public static class PooledBackend {

        private static final Duration REFILL_DEADLINE = Duration.ofSeconds(60);
        private Path stateRoot;
        MicroVmBackend backend;

        @Setup(Level.Trial)
        public void open() throws IOException {
            stateRoot = Files.createTempDirectory(Path.of("/tmp"), "s4jp",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx--x--x")));
            backend = MicroVmBackend.builder().guest(guestImage()).stateRoot(stateRoot).warmPool(1).build();
            // The first acquire makes the snapshot and starts the refill: a miss, unmeasured.
            SandboxKey first = new SandboxKey(WarmSandboxBenchmark.TENANT, "pool", "first");
            backend.acquire(first, SandboxSpec.builder("bench").build());
            backend.dispose(first);
        }

        @Setup(Level.Invocation)
        public void awaitIdleGuest() throws InterruptedException {
            WarmPools.awaitIdleGuest(backend, REFILL_DEADLINE);
        }

        @TearDown(Level.Trial)
        public void close() throws IOException {
            backend.close();
            TreeRemoval.remove(stateRoot, TreeRemoval.Mode.PROCESSES_STOPPED, TreeRemoval.DEFAULT_DEADLINE);
        }
    }

    /** A guest booted by hand in the measured call; killed after it, unmeasured (as {@link ColdKey} disposes). */
    @State(Scope.Thread)
    public static class ColdGuest {

        private HandBootedGuest booted;

        HandBootedGuest boot() throws IOException {
            booted = HandBootedGuest.boot(guestImage(), BOOT_DEADLINE);
            return booted;
        }

        @TearDown(Level.Invocation)
        public void kill() {
            if (booted != null) {
                booted.close();
                booted = null;
            }
        }
    }

    /**
     * The backend's snapshot, made once before measuring by a backend of its own (one acquire), then
     * restored by hand in each measured call ({@link HandBootedGuest#restore}) and killed after it,
     * unmeasured.
     */
    @State(Scope.Benchmark)
    public static class RestoredGuest {

        private Path stateRoot;
        private MicroVmBackend maker;
        private HandBootedGuest restored;

        @Setup(Level.Trial)
        public void makeSnapshot() throws IOException {
            stateRoot = Files.createTempDirectory(Path.of("/tmp"), "s4jr",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx--x--x")));
            maker = MicroVmBackend.builder().guest(guestImage()).stateRoot(stateRoot).build();
            SandboxKey first = new SandboxKey(WarmSandboxBenchmark.TENANT, "snapshot", "maker");
            maker.acquire(first, SandboxSpec.builder("bench").build());
            maker.dispose(first);
        }

        HandBootedGuest restore() throws IOException {
            restored = HandBootedGuest.restore(guestImage(), stateRoot, BOOT_DEADLINE);
            return restored;
        }

        @TearDown(Level.Invocation)
        public void kill() {
            if (restored != null) {
                restored.close();
                restored = null;
            }
        }

        @TearDown(Level.Trial)
        public void close() throws IOException {
            maker.close();
            TreeRemoval.remove(stateRoot, TreeRemoval.Mode.PROCESSES_STOPPED, TreeRemoval.DEFAULT_DEADLINE);
        }
    }

    /** One guest booted by hand before measuring, killed after. */
    @State(Scope.Benchmark)
    public static class WarmGuest {

        HandBootedGuest booted;

        @Setup(Level.Trial)
        public void boot() throws IOException {
            booted = HandBootedGuest.boot(guestImage(), BOOT_DEADLINE);
        }

        @TearDown(Level.Trial)
        public void kill() {
            booted.close();
        }
    }
}
