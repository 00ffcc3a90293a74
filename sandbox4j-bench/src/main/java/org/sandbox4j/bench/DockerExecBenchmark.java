package org.sandbox4j.bench;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
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
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.docker.DockerBackend;

/**
 * What {@link org.sandbox4j.docker.DockerBackend} costs, in one run: the cold acquire of a new
 * container, a warm {@code exec("/bin/true")} through the backend against {@code docker exec} of
 * the same container from the CLI, and a 16 MiB file written and read back through the archive
 * endpoints.
 *
 * <p>Run (an engine and an image are needed; {@code scripts/test.sh} provisions both):
 * {@code SANDBOX4J_DOCKER_HOST=unix:///... SANDBOX4J_TEST_IMAGE=... java -jar
 * sandbox4j-bench/target/benchmarks.jar DockerExecBenchmark} ({@code -p runtime=runsc} for gVisor);
 * read the p0.50 lines.
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 2, time = 3)
@Measurement(iterations = 3, time = 5)
@Fork(1)
@State(Scope.Benchmark)
public class DockerExecBenchmark {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final Command TRUE = Command.argv("/bin/true");
    private static final int ROUND_TRIP_BYTES = 16 * 1024 * 1024;

    @Param({"runc"})
    public String runtime;

    private Path egressRoot;
    private String host;
    private DockerBackend backend;
    private Sandbox warm;
    private ExecOptions options;
    private String workDir;
    private List<String> cliLine;
    private byte[] payload;

    @Setup(Level.Trial)
    public void start() throws IOException {
        host = required("SANDBOX4J_DOCKER_HOST", System.getenv("DOCKER_HOST"));
        String image = required("SANDBOX4J_TEST_IMAGE", null);
        egressRoot = Files.createTempDirectory("s4jb");
        backend = DockerBackend.builder().host(host).image(image).runtime(runtime).egressRoot(egressRoot).build();
        SandboxSpec spec = SandboxSpec.builder("bench").build();
        warm = backend.acquire(new SandboxKey("bench", "warm", "bench"), spec);
        workDir = spec.workDir();
        options = ExecOptions.in("/", TIMEOUT);
        cliLine = List.of("docker", "-H", host, "exec", backend.containerName(warm), "/bin/true");
        payload = new byte[ROUND_TRIP_BYTES];
        for (int i = 0; i < payload.length; i++) {
            payload[i] = (byte) (i * 31 + (i >>> 13));
        }
    }

    private static String required(String variable, String fallback) {
        String value = System.getenv(variable);
        if (value == null || value.isBlank()) {
            value = fallback;
        }
        if (value == null || value.isBlank()) {
            throw new IllegalStateException("set " + variable + " (scripts/test.sh provisions an engine and an image)");
        }
        return value;
    }

    @TearDown(Level.Trial)
    public void stop() {
        backend.disposeScope("bench", "warm");
        backend.disposeScope("bench", "cold");
        backend.close();
        try (var walk = Files.walk(egressRoot)) {
            walk.sorted(java.util.Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        } catch (IOException e) {
            // A benchmark's temp directory.
        }
    }

    @Benchmark
    public int warmExecThroughTheBackend() {
        return warm.exec(TRUE, options).exitCode();
    }

    @Benchmark
    public int dockerExecFromTheCli() throws IOException, InterruptedException {
        Process process = new ProcessBuilder(cliLine).start();
        process.getOutputStream().close();
        drain(process.getInputStream());
        drain(process.getErrorStream());
        return process.waitFor();
    }

    @Benchmark
    public int fileRoundTrip16MiB() {
        warm.writeFile("round-trip.bin", payload, workDir);
        byte[] back = warm.readFile("round-trip.bin", workDir, ROUND_TRIP_BYTES);
        if (!Arrays.equals(payload, back)) {
            throw new IllegalStateException("the 16 MiB file came back different");
        }
        return back.length;
    }

    @Benchmark
    public Sandbox coldAcquire(Cold cold) {
        return backend.acquire(cold.key, SandboxSpec.builder("bench").build());
    }

    /** A key no sandbox has yet, made before each cold acquire and disposed of after it (unmeasured). */
    @State(Scope.Thread)
    public static class Cold {
        SandboxKey key;
        private DockerExecBenchmark bench;

        @Setup(Level.Invocation)
        public void freshKey(DockerExecBenchmark owner) {
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
