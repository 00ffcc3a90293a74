package org.sandbox4j.bench;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
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
import org.sandbox4j.core.Command;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.local.BubblewrapBackend;

/**
 * What {@link BubblewrapBackend} costs over bubblewrap itself, in one run: a warm
 * {@code exec("/bin/true")} through the backend against the very same command line
 * ({@link BubblewrapBackend#launchCommand}) started directly with {@link ProcessBuilder}, plus the
 * cold acquire of a new sandbox. Target: the backend's median within 1.25x the direct median.
 *
 * <p>Run: {@code java -jar sandbox4j-bench/target/benchmarks.jar BubblewrapExecBenchmark}
 * (needs bwrap; reads the p0.50 lines).
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 3)
@Fork(1)
@State(Scope.Benchmark)
public class BubblewrapExecBenchmark {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final Command TRUE = Command.argv("/bin/true");

    private Path stateRoot;
    private BubblewrapBackend backend;
    private Sandbox warm;
    private ExecOptions options;
    private List<String> directLine;

    @Setup(Level.Trial)
    public void start() throws IOException {
        stateRoot = Files.createTempDirectory("s4jb");
        backend = BubblewrapBackend.builder().stateRoot(stateRoot).build();
        SandboxSpec spec = SandboxSpec.builder("bench").build();
        warm = backend.acquire(new SandboxKey("bench", "warm", "bench"), spec);
        options = ExecOptions.in(spec.workDir(), TIMEOUT);
        directLine = backend.launchCommand(warm, TRUE, options);
    }

    @TearDown(Level.Trial)
    public void stop() {
        backend.disposeScope("bench", "warm");
        backend.disposeScope("bench", "cold");
        backend.close();
        try (var walk = Files.walk(stateRoot)) {
            walk.sorted(java.util.Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        } catch (IOException e) {
            // A benchmark's temp directory; the OS cleans it eventually.
        }
    }

    @Benchmark
    public int warmExecThroughTheBackend() {
        ExecResult result = warm.exec(TRUE, options);
        return result.exitCode();
    }

    @Benchmark
    public int sameCommandLineLaunchedDirectly() throws IOException, InterruptedException {
        ProcessBuilder builder = new ProcessBuilder(directLine);
        builder.environment().clear();
        builder.environment().put("PATH", "/usr/bin:/bin:/usr/sbin:/sbin");
        Process process = builder.start();
        process.getOutputStream().close();
        drain(process.getInputStream());
        drain(process.getErrorStream());
        return process.waitFor();
    }

    @Benchmark
    public Sandbox coldAcquire(Cold cold) {
        return backend.acquire(cold.key, SandboxSpec.builder("bench").build());
    }

    /** A key no sandbox has yet, made before each cold acquire and disposed of after it (unmeasured). */
    @State(Scope.Thread)
    public static class Cold {
        SandboxKey key;
        private BubblewrapExecBenchmark bench;

        @Setup(Level.Invocation)
        public void freshKey(BubblewrapExecBenchmark owner) {
            bench = owner;
            key = new SandboxKey("bench", "cold", UUID.randomUUID().toString());
        }

        @TearDown(Level.Invocation)
        public void dispose() {
            bench.backend.dispose(key);
        }
    }

    private static void drain(InputStream stream) throws IOException {
        try (stream) {
            stream.transferTo(java.io.OutputStream.nullOutputStream());
        }
    }
}
