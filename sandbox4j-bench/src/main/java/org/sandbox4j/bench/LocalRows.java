package org.sandbox4j.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import org.sandbox4j.codeact.CodeAct;
import org.sandbox4j.core.CallerContext;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.FileListing;
import org.sandbox4j.core.HostCeilings;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxRouter;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.tool.SandboxTool;
import org.sandbox4j.local.BubblewrapBackend;

/**
 * The rows on {@link BubblewrapBackend}, each against the backend's own command line
 * ({@link BubblewrapBackend#launchCommand}) started straight from Java, or against the JDK: one
 * backend, one warm sandbox acquired once, and the fleet's sandboxes under a scope of their own.
 */
final class LocalRows implements AutoCloseable {

    static final String TENANT = "side-by-side";
    private static final SandboxKey WARM = new SandboxKey(TENANT, "warm", "bench");
    private static final SandboxKey CODE_ACT = new SandboxKey(TENANT, "codeact", "bench");
    private static final String FLEET_SCOPE = "fleet";
    private static final String HELD_SCOPE = "held";
    private static final Duration TIMEOUT = Duration.ofSeconds(120);

    private static final Command TRUE = Command.argv("/bin/true");
    private static final Command PRINT_ONE = Command.argv(List.of("python3", "-c", "print(1)"));
    private static final Map<String, Object> PRINT_ONE_CALL = Map.of("code", "print(1)");
    private static final String PRINT_ONE_REPORT = "stdout:\n1";

    /** 256 MiB: the largest output cap a JVM may grant (with a heap of 2 GiB or more). */
    static final long STDOUT_BYTES = 256L * 1024 * 1024;
    private static final Command STDOUT = Command.argv("head", "-c", Long.toString(STDOUT_BYTES), "/dev/zero");
    private static final String READ_NAME = "read-local.bin";
    private static final int READ_BYTES = 16 * 1024 * 1024;

    static final Target EXEC_TARGET = Target.ratioAtMost(0.5);
    static final Target EXECUTE_CODE_TARGET = Target.ratioAtMost(1.0);
    static final Target STDOUT_TARGET = Target.ratioAtMost(1.2);
    static final Target HEAP_TARGET = Target.bytesPerByteAtMost(1.2);
    static final Target FLEET_TARGET = Target.ratioAtMost(1.2);

    private final Settings settings;
    private final Path scratch;
    private final BubblewrapBackend backend;
    private final SandboxSpec spec;
    private final Sandbox warm;
    private final ExecOptions options;

    private LocalRows(Settings settings, Path scratch) {
        this.settings = settings;
        this.scratch = scratch;
        this.backend = BubblewrapBackend.builder().stateRoot(scratch.resolve("state")).build();
        this.spec = BenchSpec.SPEC;
        this.warm = backend.acquire(WARM, spec);
        this.options = ExecOptions.in(spec.workDirIn(warm), TIMEOUT);
    }

    /** @throws RuntimeException when bubblewrap cannot make a sandbox here (the reason is the skip's) */
    static LocalRows open(Settings settings, Path scratch) {
        return new LocalRows(settings, scratch);
    }

    String isolation() {
        return backend.declarations().isolation().wire() + " (" + backend.limitMechanism() + ")";
    }

    TableLine exec() throws Exception {
        List<String> line = backend.launchCommand(warm, TRUE, options);
        double[] medians = Interleaved.medianMillis(settings.warmup(), settings.rounds(), List.of(
                Sample.timed(() -> succeeded(warm.exec(TRUE, options))),
                Sample.timed(() -> RawProcess.runExpectingSuccess(RawProcess.bare(line)))));
        return TableLine.millis("exec: warm /bin/true vs bare bwrap", medians[0], medians[1], EXEC_TARGET);
    }

    /** {@code execute_code} through a router that serves from this backend alone, at its own isolation. */
    TableLine executeCode() throws Exception {
        SandboxRouter router = SandboxRouter.builder().backend(backend)
                .minIsolation(backend.declarations().isolation()).build();
        CallerContext context = CallerContext.of(CODE_ACT::scope, CODE_ACT::threadId, FileListing.NONE);
        CodeAct.Builder codeAct = CodeAct.builder(router, CODE_ACT.agentDir(), context);
        SandboxTool tool = codeAct.build().orElseThrow(() -> new IllegalStateException("execute_code attached no tool"));
        SandboxSpec codeSpec = codeAct.spec();
        Sandbox sandbox = backend.acquire(CODE_ACT, codeSpec);
        List<String> line = backend.launchCommand(sandbox, PRINT_ONE, ExecOptions.in(codeSpec.workDirIn(sandbox), TIMEOUT));
        double[] medians = Interleaved.medianMillis(settings.warmup(), settings.rounds(), List.of(
                Sample.timed(() -> printedOne(tool)),
                Sample.timed(() -> RawProcess.runExpectingSuccess(RawProcess.bare(line)))));
        return TableLine.millis("execute-code: print(1) vs bare bwrap python3", medians[0], medians[1],
                EXECUTE_CODE_TARGET);
    }

    TableLine stdout() throws Exception {
        String missing = stdoutCapMissing();
        if (!missing.isEmpty()) {
            return TableLine.skipped("stdout: 256 MiB", missing);
        }
        ExecOptions wide = options.withOutputCap(STDOUT_BYTES);
        List<String> line = backend.launchCommand(warm, STDOUT, wide);
        long through = warm.exec(STDOUT, wide).stdout().length;
        long direct = RawProcess.drainStdout(RawProcess.bare(line));
        if (through != STDOUT_BYTES || direct != STDOUT_BYTES) {
            throw new IllegalStateException("expected " + STDOUT_BYTES + " bytes of stdout, got " + through
                    + " through sandbox4j and " + direct + " directly");
        }
        double[] medians = Interleaved.medianMillis(settings.warmup(), settings.rounds(), List.of(
                () -> {
                    long start = System.nanoTime();
                    ExecResult result = warm.exec(STDOUT, wide);
                    long took = System.nanoTime() - start;
                    succeeded(result);
                    return took;
                },
                Sample.timed(() -> RawProcess.drainStdout(RawProcess.bare(line)))));
        return TableLine.millis("stdout: 256 MiB vs bare bwrap to null", medians[0], medians[1], STDOUT_TARGET);
    }

    /** Peak heap per byte of the 256 MiB stdout, once each way (the bare line's is its pipe buffer). */
    TableLine heap() throws Exception {
        String missing = stdoutCapMissing();
        if (!missing.isEmpty()) {
            return TableLine.skipped("heap: per stdout byte", missing);
        }
        ExecOptions wide = options.withOutputCap(STDOUT_BYTES);
        List<String> line = backend.launchCommand(warm, STDOUT, wide);
        HeapPeak through = HeapPeak.of(() -> succeeded(warm.exec(STDOUT, wide)));
        HeapPeak direct = HeapPeak.of(() -> RawProcess.drainStdout(RawProcess.bare(line)));
        System.err.println("side-by-side: heap peaks above the start, sandbox4j: " + through.pools() + "; bare: "
                + direct.pools());
        double perByte = through.bytes() / (double) STDOUT_BYTES;
        double directPerByte = direct.bytes() / (double) STDOUT_BYTES;
        return TableLine.absolute("heap: peak per stdout byte", bytesPerByte(perByte), bytesPerByte(directPerByte),
                perByte, HEAP_TARGET);
    }

    TableLine readLocal() throws Exception {
        byte[] payload = pattern(READ_BYTES);
        String workDir = spec.workDirIn(warm);
        warm.writeFile(READ_NAME, payload, workDir);
        Path hostFile = Files.write(scratch.resolve(READ_NAME), payload);
        double[] medians = Interleaved.medianMillis(settings.warmup(), settings.rounds(), List.of(
                Sample.timed(() -> expectLength(warm.readFile(READ_NAME, workDir, READ_BYTES).length, READ_BYTES)),
                Sample.timed(() -> expectLength(Files.readAllBytes(hostFile).length, READ_BYTES))));
        return TableLine.millis("read-local: readFile 16 MiB vs Files.readAllBytes", medians[0], medians[1],
                Target.NONE);
    }

    /**
     * acquire + first exec, and dispose, of a new sandbox while N others are held, for each N in
     * ascending order (held sandboxes are added, never remade); each N against the smallest. Not
     * interleaved: one set of held sandboxes cannot be two sizes at once.
     */
    List<TableLine> fleet() throws Exception {
        List<Integer> levels = settings.held();
        if (levels.isEmpty()) {
            return List.of(TableLine.skipped("fleet", "--held names no count"));
        }
        List<TableLine> lines = new ArrayList<>();
        int held = 0;
        double baselineAcquire = Double.NaN;
        double baselineDispose = Double.NaN;
        for (int level : levels) {
            if (held < level) {
                System.err.printf(Locale.ROOT, "side-by-side: holding %d sandboxes (%s)%n", level, HostFacts.load());
            }
            for (; held < level; held++) {
                backend.acquire(new SandboxKey(TENANT, HELD_SCOPE, "held-" + held), spec);
            }
            int rounds = settings.warmup() + settings.rounds();
            long[] acquire = new long[settings.rounds()];
            long[] dispose = new long[settings.rounds()];
            for (int round = 0; round < rounds; round++) {
                SandboxKey key = new SandboxKey(TENANT, FLEET_SCOPE, UUID.randomUUID().toString());
                long start = System.nanoTime();
                succeeded(backend.acquire(key, spec).exec(TRUE, options));
                long acquired = System.nanoTime();
                backend.dispose(key);
                long disposed = System.nanoTime();
                if (round >= settings.warmup()) {
                    acquire[round - settings.warmup()] = acquired - start;
                    dispose[round - settings.warmup()] = disposed - acquired;
                }
            }
            double acquireMillis = Interleaved.median(acquire) / 1e6;
            double disposeMillis = Interleaved.median(dispose) / 1e6;
            if (Double.isNaN(baselineAcquire)) {
                baselineAcquire = acquireMillis;
                baselineDispose = disposeMillis;
            }
            if (level == levels.get(0)) {
                String held0 = " (" + level + " held)";
                lines.add(TableLine.baseline("fleet: acquire+first exec" + held0, acquireMillis));
                lines.add(TableLine.baseline("fleet: dispose" + held0, disposeMillis));
            } else {
                String vs = " (" + level + " held vs " + levels.get(0) + ")";
                lines.add(TableLine.millis("fleet: acquire+first exec" + vs, acquireMillis, baselineAcquire,
                        FLEET_TARGET));
                lines.add(TableLine.millis("fleet: dispose" + vs, disposeMillis, baselineDispose, FLEET_TARGET));
            }
        }
        return lines;
    }

    private static String stdoutCapMissing() {
        if (HostCeilings.MAX_BUFFERED_BYTES >= STDOUT_BYTES) {
            return "";
        }
        return "this JVM's output cap stops at " + HostCeilings.MAX_BUFFERED_BYTES / (1024 * 1024)
                + " MiB (an eighth of its heap); run with -Xmx3g";
    }

    private static void printedOne(SandboxTool tool) {
        String text = tool.call(PRINT_ONE_CALL).text();
        if (!PRINT_ONE_REPORT.equals(text)) {
            throw new IllegalStateException("execute_code of print(1) answered " + text);
        }
    }

    static void succeeded(ExecResult result) {
        if (result.exitCode() != 0) {
            throw new IllegalStateException("exit " + result.exitCode() + ": " + result.stderrText());
        }
    }

    static void expectLength(long actual, long expected) {
        if (actual != expected) {
            throw new IllegalStateException("expected " + expected + " bytes, got " + actual);
        }
    }

    static byte[] pattern(int size) {
        byte[] bytes = new byte[size];
        for (int i = 0; i < size; i++) {
            bytes[i] = (byte) (i * 31 + (i >>> 13));
        }
        return bytes;
    }

    private static String bytesPerByte(double value) {
        return String.format(Locale.ROOT, "%.2f B/B", value);
    }

    /** Disposes of every sandbox of the run and closes the backend. */
    @Override
    public void close() {
        for (String scope : List.of("warm", "codeact", FLEET_SCOPE, HELD_SCOPE)) {
            backend.disposeScope(TENANT, scope);
        }
        backend.close();
    }
}
