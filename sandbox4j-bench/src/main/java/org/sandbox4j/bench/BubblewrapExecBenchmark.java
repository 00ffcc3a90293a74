package org.sandbox4j.bench;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.openjdk.jmh.annotations.Benchmark;
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
public class BubblewrapExecBenchmark extends WarmSandboxBenchmark<BubblewrapBackend> {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final Command TRUE = Command.argv("/bin/true");

    /** Also {@link MicroVmBenchmark}'s, which runs its bubblewrap rows on this warm sandbox. */
    ExecOptions options;
    private List<String> directLine;

    @Override
    BubblewrapBackend openBackend(Path scratch) {
        return BubblewrapBackend.builder().stateRoot(scratch).build();
    }

    @Override
    Sandbox acquireWarm(SandboxKey key) {
        SandboxSpec spec = SandboxSpec.builder("bench").build();
        Sandbox sandbox = backend.acquire(key, spec);
        options = ExecOptions.in(spec.workDir(), TIMEOUT);
        directLine = backend.launchCommand(sandbox, TRUE, options);
        return sandbox;
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
        return runToExit(builder);
    }

    @Benchmark
    public Sandbox coldAcquire(ColdKey cold) {
        return cold.acquire(backend, SandboxSpec.builder("bench").build());
    }
}
