package org.sandbox4j.bench;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.openjdk.jmh.annotations.Benchmark;
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
public class ExecuteCodeBenchmark extends WarmSandboxBenchmark<BubblewrapBackend> {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final Command PRINT_ONE = Command.argv(List.of("python3", "-c", "print(1)"));
    private static final Map<String, Object> PRINT_ONE_CALL = Map.of("code", "print(1)");

    private SandboxTool tool;
    private ExecOptions options;

    @Override
    BubblewrapBackend openBackend(Path scratch) {
        return BubblewrapBackend.builder().stateRoot(scratch).build();
    }

    /** The warm sandbox is the one {@code execute_code} runs in: the same key, through the router. */
    @Override
    Sandbox acquireWarm(SandboxKey key) {
        SandboxRouter router = SandboxRouter.builder().backend(backend).minIsolation(Isolation.CONTAINER).build();
        CallerContext context = CallerContext.of(key::scope, key::threadId, FileListing.NONE);
        CodeAct.Builder codeAct = CodeAct.builder(router, key.agentDir(), context);
        tool = codeAct.build().orElseThrow();
        SandboxSpec spec = codeAct.spec();
        Sandbox sandbox = router.acquire(key, spec);
        options = ExecOptions.in(spec.workDirIn(sandbox), TIMEOUT);
        if (!tool.call(PRINT_ONE_CALL).text().equals("stdout:\n1")) {
            throw new IllegalStateException("execute_code does not work here; run the tests first");
        }
        return sandbox;
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
