package org.sandbox4j.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
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
import org.sandbox4j.codeact.CodeAct;
import org.sandbox4j.core.CallerContext;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.FileListing;
import org.sandbox4j.core.Isolation;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxRouter;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.tool.SandboxTool;
import org.sandbox4j.core.tool.ToolResult;
import org.sandbox4j.local.BubblewrapBackend;

/**
 * What {@code execute_code} costs per call over the bare command it runs, on one warm bubblewrap
 * sandbox: {@code execute_code} of {@code print(1)} (key, checks, program written into a fresh call
 * directory, run, report, call directory removed) against {@code exec} of
 * {@code python3 -c 'print(1)'}. The kind does three guest operations where the bare exec does one
 * (write, run, remove), so expect a ratio near 2x on this backend, where each exec is a fresh bwrap.
 *
 * <p>Run: {@code java -jar sandbox4j-bench/target/benchmarks.jar ExecuteCodeBenchmark} (reads the p0.50 lines).
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 3)
@Fork(1)
@State(Scope.Benchmark)
public class ExecuteCodeBenchmark {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final Command PRINT_ONE = Command.argv(List.of("python3", "-c", "print(1)"));
    private static final Map<String, Object> PRINT_ONE_CALL = Map.of("code", "print(1)");

    private Path stateRoot;
    private BubblewrapBackend backend;
    private SandboxTool tool;
    private Sandbox warm;
    private ExecOptions options;

    @Setup(Level.Trial)
    public void start() throws IOException {
        stateRoot = Files.createTempDirectory("s4jb");
        backend = BubblewrapBackend.builder().stateRoot(stateRoot).build();
        SandboxRouter router = SandboxRouter.builder().backend(backend).minIsolation(Isolation.CONTAINER).build();
        CallerContext context = CallerContext.of(() -> "bench", () -> "warm", FileListing.NONE);
        CodeAct.Builder codeAct = CodeAct.builder(router, "bench", context);
        tool = codeAct.build().orElseThrow();
        SandboxSpec spec = codeAct.spec();
        warm = router.acquire(new SandboxKey("bench", "warm", "bench"), spec);
        options = ExecOptions.in(spec.workDirIn(warm), TIMEOUT);
        if (!tool.call(PRINT_ONE_CALL).text().equals("stdout:\n1")) {
            throw new IllegalStateException("execute_code does not work here; run the tests first");
        }
    }

    @TearDown(Level.Trial)
    public void stop() {
        backend.disposeScope("bench", "warm");
        backend.close();
        try (var walk = Files.walk(stateRoot)) {
            walk.sorted(java.util.Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        } catch (IOException e) {
            // A benchmark's temp directory; the OS cleans it eventually.
        }
    }

    @Benchmark
    public ToolResult executeCodeOfPrintOne() {
        return tool.call(PRINT_ONE_CALL);
    }

    @Benchmark
    public ExecResult bareExecOfPythonPrintOne() {
        return warm.exec(PRINT_ONE, options);
    }
}
