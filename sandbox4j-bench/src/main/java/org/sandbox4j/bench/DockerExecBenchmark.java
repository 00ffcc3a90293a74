package org.sandbox4j.bench;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Param;
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
@Warmup(iterations = 2, time = 3)
@Measurement(iterations = 3, time = 5)
public class DockerExecBenchmark extends WarmSandboxBenchmark<DockerBackend> {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final Command TRUE = Command.argv("/bin/true");
    private static final int ROUND_TRIP_BYTES = 16 * 1024 * 1024;

    @Param({"runc"})
    public String runtime;

    private String host;
    private ExecOptions options;
    private String workDir;
    private List<String> cliLine;
    private byte[] payload;

    /** The state kept in {@code scratch} is the backend's egress root. */
    @Override
    DockerBackend openBackend(Path scratch) {
        host = required("SANDBOX4J_DOCKER_HOST", System.getenv("DOCKER_HOST"));
        String image = required("SANDBOX4J_TEST_IMAGE", null);
        return DockerBackend.builder().host(host).image(image).runtime(runtime).egressRoot(scratch).build();
    }

    @Override
    Sandbox acquireWarm(SandboxKey key) {
        SandboxSpec spec = SandboxSpec.builder("bench").build();
        Sandbox sandbox = backend.acquire(key, spec);
        workDir = spec.workDir();
        options = ExecOptions.in("/", TIMEOUT);
        cliLine = List.of("docker", "-H", host, "exec", backend.containerName(sandbox), "/bin/true");
        payload = new byte[ROUND_TRIP_BYTES];
        for (int i = 0; i < payload.length; i++) {
            payload[i] = (byte) (i * 31 + (i >>> 13));
        }
        return sandbox;
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

    @Benchmark
    public int warmExecThroughTheBackend() {
        return warm.exec(TRUE, options).exitCode();
    }

    @Benchmark
    public int dockerExecFromTheCli() throws IOException, InterruptedException {
        return runToExit(new ProcessBuilder(cliLine));
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
    public Sandbox coldAcquire(ColdKey cold) {
        return cold.acquire(backend, SandboxSpec.builder("bench").build());
    }
}
