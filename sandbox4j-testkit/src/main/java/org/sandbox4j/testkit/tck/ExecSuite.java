package org.sandbox4j.testkit.tck;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.sandbox4j.core.Capability;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.ExecStream;
import org.sandbox4j.core.SandboxExecOutputLimitExceeded;
import org.sandbox4j.core.SandboxTimeoutException;

/**
 * The EXEC suite (gate {@link Capability#EXEC}): the reference's five probes, then the ones that
 * attack what a naive {@code ProcessBuilder} gets wrong — merged or re-encoded streams, unbounded
 * buffers, a host environment passed through, stdin left open, a timeout that kills only the direct
 * child — and {@link ExecFailureProbes}, how an exec fails before the command. The timeout probes
 * run last: a backend may tear its sandbox down on a timeout.
 *
 * <p>Every guest command is an argv, or a fixed {@code sh -c} script whose variable text arrives
 * as positional parameters. The guest needs a POSIX {@code sh} with {@code printf} and {@code test},
 * {@code cat}, {@code sleep}, {@code touch}, {@code yes}, {@code setsid} and {@code /etc/passwd}.
 */
public final class ExecSuite {

    /** The suite's name. */
    public static final String NAME = "EXEC";

    /**
     * The host environment variable whose value must never reach the guest. Set it, to a value
     * found nowhere else, in the environment of the JVM that runs the TCK.
     */
    public static final String HOST_SENTINEL_VARIABLE = "SANDBOX4J_TCK_HOST_SENTINEL";

    /** The bound the timeout probes give their command. */
    static final Duration SHORT_TIMEOUT = Duration.ofSeconds(1);

    /** A timeout must not fire before this... */
    static final Duration TIMEOUT_EARLIEST = Duration.ofMillis(500);

    /** ...and its exception must arrive by this: "within a few seconds" of the deadline. */
    static final Duration TIMEOUT_LATEST = Duration.ofSeconds(4);

    /** How long the tree-kill probe's children sleep before each writes its marker. */
    static final Duration CHILD_DELAY = Duration.ofSeconds(3);

    /** How long past the deadline the tree-kill probe waits before looking for markers. */
    static final Duration MARKER_GRACE = Duration.ofSeconds(5);

    /** How long the tree script's parent waits for its children's markers: far past the deadline. */
    static final Duration PARENT_WAIT = Duration.ofSeconds(30);

    /** How long the tree-kill control waits for its markers to appear. */
    static final Duration CONTROL_MARKER_WAIT = Duration.ofSeconds(10);

    /** A command that must end quickly (no stdin, a missing directory) gets this bound; hitting it is a hang. */
    static final Duration HANG_BOUND = Duration.ofSeconds(15);

    /** An output past the cap must be refused well within this. */
    static final Duration OUTPUT_CAP_PROMPTNESS = Duration.ofSeconds(20);

    /** The cap the output-limit probes set. */
    static final long OUTPUT_CAP = 1024 * 1024;

    /** Each generated line is this long, newline included: a right-aligned line number. */
    static final int LINE_BYTES = 1024;

    /** 6 MiB of generated output: above common pipe and buffer sizes, below the default cap. */
    static final int LARGE_OUTPUT_LINES = 6 * 1024;

    /** 4 MiB of stdin: far past any pipe buffer, so a backend that writes it all before reading output deadlocks. */
    static final int LARGE_STDIN_BYTES = 4 * 1024 * 1024;

    /** The number of execs the parallel probe runs at once. */
    static final int PARALLEL_EXECS = 8;

    /** Lines each parallel exec prints, so that their outputs overlap in time. */
    static final int PARALLEL_LINES = 256;

    /** The parallel execs exit with this plus their index. */
    static final int PARALLEL_EXIT_BASE = 10;

    static final String GIVEN_VARIABLE = "SANDBOX4J_TCK_GIVEN";
    static final String GIVEN_VALUE = "given value with spaces, 'quotes', \"doubles\", $(no expansion) and ünïcödé";
    private static final String HOSTILE_ARGUMENT = "a b$(echo injected)c";
    /** Run by a shell, unquoted or double-quoted, this would create a marker. */
    private static final String HOSTILE_WORD = "x; touch argv-injected; echo \"$(touch argv-injected-too)\" *";
    private static final List<String> INJECTION_MARKERS = List.of("argv-injected", "argv-injected-too");

    /** Prints {@code $1} lines of {@value #LINE_BYTES} bytes each: the line number right-aligned. */
    static final String LINES_SCRIPT =
            "i=0; while [ \"$i\" -lt \"$1\" ]; do printf '%" + (LINE_BYTES - 1) + "d\\n' \"$i\"; i=$((i + 1)); done";

    /**
     * Starts three children that each write a marker after {@code $1} seconds — one double-forked,
     * one in its own session, one ignoring SIGTERM/SIGHUP/SIGINT — then waits up to {@code $5}
     * seconds for all three markers. The parent stays: where the command is a PID namespace's init,
     * its exit alone would end the children.
     */
    static final String TREE_SCRIPT = String.join("\n",
            "( (sleep \"$1\"; touch \"$2\") & )",
            "setsid sh -c 'sleep \"$1\"; touch \"$2\"' tck-setsid \"$1\" \"$3\" &",
            "( trap '' TERM HUP INT; sleep \"$1\"; touch \"$4\" ) &",
            "i=0",
            "while [ \"$i\" -lt \"$5\" ] && ! { [ -e \"$2\" ] && [ -e \"$3\" ] && [ -e \"$4\" ]; }; do",
            "  sleep 1; i=$((i + 1))",
            "done");
    static final List<String> TREE_CHILDREN = List.of("double-forked", "setsid", "signal-ignoring");

    private ExecSuite() {
    }

    /** The suite, with its probes in the order they run. */
    public static Suite suite() {
        return Suite.builder(NAME)
                .gate(Capability.EXEC)
                .probes(
                        Probe.of("an-argv-sequence-runs",
                                "an argv command does not run, or its stdout is not returned verbatim",
                                ExecSuite::argvRuns),
                        Probe.of("exit-code-fidelity",
                                "the exit code is lost or altered, so a caller cannot tell failure from success",
                                ExecSuite::exitCodeFidelity),
                        Probe.of("argv-is-quoted",
                                "an argv word is interpreted by a shell: model-supplied text can inject commands",
                                ExecSuite::argvIsQuoted),
                        Probe.of("working-directory-is-honoured",
                                "the command runs somewhere other than the directory the caller named",
                                ExecSuite::workingDirectoryIsHonoured),
                        Probe.of("stdout-and-stderr-are-kept-apart-byte-exactly",
                                "stdout and stderr are merged, re-encoded or cut at a NUL: binary output is corrupted",
                                ExecSuite::streamsKeptApart),
                        Probe.of("a-listener-receives-exactly-the-output",
                                "a streaming listener misses, duplicates or mislabels chunks of the output",
                                ExecSuite::listenerReceivesTheOutput),
                        Probe.of("a-large-output-round-trips-intact",
                                "a large output is truncated, reordered or corrupted on its way to the host",
                                ExecSuite::largeOutputRoundTrips),
                        Probe.of("output-past-the-cap-is-refused",
                                "output beyond the cap is buffered or delivered instead of refused: a guest can "
                                        + "exhaust host memory", ExecSuite::outputPastTheCap),
                        Probe.of("the-cap-counts-both-streams-together",
                                "the cap is applied per stream, so a guest writing to both can exceed it",
                                ExecSuite::capCountsBothStreams),
                        Probe.of("environment-given-to-exec-is-seen",
                                "variables the caller passes do not reach the command, or arrive altered",
                                ExecSuite::givenEnvironmentIsSeen),
                        Probe.of("the-host-environment-does-not-leak",
                                "the host process's environment (credentials, tokens) reaches the guest",
                                ExecSuite::hostEnvironmentDoesNotLeak),
                        Probe.of("stdin-is-delivered",
                                "stdin bytes do not reach the command verbatim", ExecSuite::stdinIsDelivered),
                        Probe.of("no-stdin-means-end-of-input",
                                "stdin is left open when none is given, so a command that reads it hangs until the "
                                        + "timeout",
                                ExecSuite::noStdinMeansEndOfInput),
                        Probe.of("a-large-stdin-streams-without-deadlock",
                                "stdin is written in full before output is read, so a filter deadlocks on full pipes",
                                ExecSuite::largeStdinStreams),
                        Probe.of("parallel-execs-return-their-own-output",
                                "concurrent execs in one sandbox are serialised wrongly or get each other's output",
                                ExecSuite::parallelExecs))
                .probes(ExecFailureProbes.probes())
                .probes(
                        Probe.of("a-timeout-kills-the-whole-tree",
                                "a timeout leaves double-forked, setsid or signal-ignoring children running: they "
                                        + "outlive the deadline and keep acting in the sandbox",
                                ExecSuite::timeoutKillsTheTree),
                        Probe.of("a-timeout-raises-timeout-error",
                                "a command that overruns its bound returns normally, raises something else, or blocks "
                                        + "the caller far past the deadline", ExecSuite::timeoutRaisesTimeoutError))
                .build();
    }

    // ---- the reference's probes

    private static void argvRuns(ProbeContext context) {
        ExecResult result = context.exec("printf", "ok-ran");
        Check.equal(0, result.exitCode(), "exit code of printf");
        Check.equal("ok-ran", result.stdoutText(), "stdout of printf ok-ran");
        Check.equal("", result.stderrText(), "stderr of printf ok-ran");
    }

    private static void exitCodeFidelity(ProbeContext context) {
        Check.equal(0, shellLine(context, "exit 0").exitCode(), "exit code of 'exit 0' (positive control)");
        Check.equal(7, shellLine(context, "exit 7").exitCode(), "exit code of 'exit 7'");
        Check.equal(1, context.exec("false").exitCode(), "exit code of false");
        Check.equal(255, shellLine(context, "exit 255").exitCode(), "exit code of 'exit 255'");
    }

    private static void argvIsQuoted(ProbeContext context) {
        ExecResult direct = context.exec("printf", "%s", HOSTILE_WORD);
        for (String marker : INJECTION_MARKERS) {
            Check.that(!context.guest().exists(context.paths().in(marker)),
                    "an argv word was run by a shell: it created " + context.paths().in(marker));
        }
        Check.equal(HOSTILE_WORD, direct.stdoutText(), "a hostile argv word, printed");
        ExecResult viaParameter = context.shell("printf '%s' \"$1\"", HOSTILE_ARGUMENT);
        Check.equal(0, viaParameter.exitCode(), "exit code of printf of a positional parameter");
        Check.equal(HOSTILE_ARGUMENT, viaParameter.stdoutText(), "a hostile positional parameter, printed");
    }

    private static void workingDirectoryIsHonoured(ProbeContext context) {
        Check.equal(context.paths().work(), withoutNewline(context.exec("pwd").stdoutText()),
                "pwd in the working directory");
        String awkward = context.paths().in("dir with space, 'quote' & $(x)");
        context.guest().plantDirectory(awkward);
        ExecResult there = context.sandbox().exec(Command.argv("pwd"),
                options(context).withWorkingDirectory(awkward));
        Check.equal(awkward, withoutNewline(there.stdoutText()), "pwd in a directory with an awkward name");
    }

    private static void timeoutRaisesTimeoutError(ProbeContext context) {
        Check.equal(0, context.exec("sleep", "0").exitCode(), "exit code of sleep 0 (positive control)");
        long started = System.nanoTime();
        Check.refusedWith(SandboxTimeoutException.class, "sleep 30 bounded by " + SHORT_TIMEOUT,
                () -> context.sandbox().exec(Command.argv("sleep", "30"), options(context).withTimeout(SHORT_TIMEOUT)));
        checkWithinTimeoutWindow(Duration.ofNanos(System.nanoTime() - started), "sleep 30");
    }

    // ---- output

    private static void streamsKeptApart(ProbeContext context) {
        byte[] first = everyByte(false);
        byte[] second = everyByte(true);
        byte[] third = "\r\nend of stdout\0".getBytes(StandardCharsets.UTF_8);
        byte[] fourth = "\0end of stderr\n".getBytes(StandardCharsets.UTF_8);
        ExecResult result = context.shell("printf \"$1\"; printf \"$2\" >&2; printf \"$3\"; printf \"$4\" >&2",
                octalEscapes(first), octalEscapes(second), octalEscapes(third), octalEscapes(fourth));
        Check.equal(0, result.exitCode(), "exit code of the printf script; stderr " + result.stderrText());
        Check.equal(concat(first, third), result.stdout(), "stdout bytes");
        Check.equal(concat(second, fourth), result.stderr(), "stderr bytes");
    }

    private static void listenerReceivesTheOutput(ProbeContext context) {
        Chunks chunks = new Chunks();
        int lines = 256;
        ExecResult result = context.sandbox().exec(
                Command.argv("sh", "-c", LINES_SCRIPT + "; " + LINES_SCRIPT + " >&2; printf 'tail'", "probe",
                        Integer.toString(lines)),
                options(context).withListener(chunks::add));
        Check.equal(0, result.exitCode(), "exit code of the line generator");
        byte[] expectedStdout = concat(generatedLines(lines), "tail".getBytes(StandardCharsets.UTF_8));
        Check.equal(digest(expectedStdout), digest(result.stdout()), "SHA-256 of the returned stdout");
        Check.equal(digest(expectedStdout), digest(chunks.of(ExecStream.STDOUT)),
                "SHA-256 of the stdout chunks the listener received");
        Check.equal(digest(result.stderr()), digest(chunks.of(ExecStream.STDERR)),
                "SHA-256 of the stderr chunks the listener received, against the returned stderr");
    }

    private static void largeOutputRoundTrips(ProbeContext context) {
        ExecResult result = context.shell(LINES_SCRIPT, Integer.toString(LARGE_OUTPUT_LINES));
        Check.equal(0, result.exitCode(), "exit code of the line generator; stderr " + result.stderrText());
        byte[] expected = generatedLines(LARGE_OUTPUT_LINES);
        byte[] actual = result.stdout();
        Check.equal(expected.length, actual.length, "stdout size in bytes");
        Check.equal(digest(expected), digest(actual), "SHA-256 of stdout");
    }

    private static void outputPastTheCap(ProbeContext context) {
        int linesAtCap = (int) (OUTPUT_CAP / LINE_BYTES);
        ExecResult atCap = context.sandbox().exec(shellCommand(LINES_SCRIPT, Integer.toString(linesAtCap)),
                options(context).withOutputCap(OUTPUT_CAP));
        Check.equal(OUTPUT_CAP, (long) atCap.stdout().length,
                "stdout of exactly the cap (positive control: the cap is not enforced early)");
        refuseOutputPastTheCap(context, Command.argv("yes", "endless output"), "yes");
        ExecResult after = context.exec("printf", "still-usable");
        Check.equal("still-usable", after.stdoutText(), "an exec after the refusal");
    }

    private static void capCountsBothStreams(ProbeContext context) {
        String bothStreams = LINES_SCRIPT + "; " + LINES_SCRIPT + " >&2";
        int underHalf = (int) (OUTPUT_CAP / LINE_BYTES / 2) - 1;
        ExecResult under = context.sandbox().exec(shellCommand(bothStreams, Integer.toString(underHalf)),
                options(context).withOutputCap(OUTPUT_CAP));
        Check.equal(2L * underHalf * LINE_BYTES, (long) under.stdout().length + under.stderr().length,
                "stdout and stderr together, just under the cap (positive control)");
        int overHalf = (int) (OUTPUT_CAP / LINE_BYTES / 2) + 1;
        refuseOutputPastTheCap(context, shellCommand(bothStreams, Integer.toString(overHalf)),
                "each stream under the cap, both together over it");
    }

    private static void refuseOutputPastTheCap(ProbeContext context, Command command, String what) {
        AtomicLong delivered = new AtomicLong();
        long started = System.nanoTime();
        Check.refusedWith(SandboxExecOutputLimitExceeded.class, what + " with a cap of " + OUTPUT_CAP + " bytes",
                () -> context.sandbox().exec(command, options(context).withOutputCap(OUTPUT_CAP)
                        .withListener((stream, chunk) -> delivered.addAndGet(chunk.length))));
        Duration elapsed = Duration.ofNanos(System.nanoTime() - started);
        Check.that(elapsed.compareTo(OUTPUT_CAP_PROMPTNESS) <= 0, what + ": the output limit was raised only after "
                + elapsed.toMillis() + " ms; a backend that reads to the end before counting buffers without bound");
        Check.that(delivered.get() <= OUTPUT_CAP, what + ": the listener received " + delivered.get()
                + " bytes, more than the cap of " + OUTPUT_CAP);
    }

    // ---- environment

    private static void givenEnvironmentIsSeen(ProbeContext context) {
        ExecResult result = context.sandbox().exec(shellCommand("printf '%s' \"$" + GIVEN_VARIABLE + "\""),
                options(context).withEnvironment(Map.of(GIVEN_VARIABLE, GIVEN_VALUE)));
        Check.equal(0, result.exitCode(), "exit code of printf of a given variable");
        Check.equal(GIVEN_VALUE, result.stdoutText(), "the value of " + GIVEN_VARIABLE + " in the guest");
    }

    private static void hostEnvironmentDoesNotLeak(ProbeContext context) {
        String sentinel = System.getenv(HOST_SENTINEL_VARIABLE);
        Check.that(sentinel != null && !sentinel.isBlank(), "set " + HOST_SENTINEL_VARIABLE + " to a random value "
                + "in the environment of the JVM that runs the TCK (e.g. maven-surefire-plugin <environmentVariables>); "
                + "without it this probe cannot tell whether the host's environment reaches the guest");
        ExecResult result = context.sandbox().exec(
                shellCommand("printf 'given=%s\\n' \"$" + GIVEN_VARIABLE + "\"; export -p"),
                options(context).withEnvironment(Map.of(GIVEN_VARIABLE, GIVEN_VALUE)));
        String environment = result.stdoutText();
        Check.that(environment.contains("given=" + GIVEN_VALUE + "\n"), "the guest's environment listing does not "
                + "show the variable given to exec (positive control): " + Check.show(environment));
        Check.that(!environment.contains(HOST_SENTINEL_VARIABLE), "the host's " + HOST_SENTINEL_VARIABLE
                + " is in the guest's environment");
        Check.that(!environment.contains(sentinel), "the value of the host's " + HOST_SENTINEL_VARIABLE
                + " is in the guest's environment, under another name");
    }

    // ---- stdin

    private static void stdinIsDelivered(ProbeContext context) {
        byte[] input = concat(everyByte(false), ConformancePaths.BINARY_PAYLOAD);
        ExecResult result = context.sandbox().exec(Command.argv("cat"), options(context).withStdin(input));
        Check.equal(0, result.exitCode(), "exit code of cat");
        Check.equal(input, result.stdout(), "stdin echoed by cat");
    }

    private static void noStdinMeansEndOfInput(ProbeContext context) {
        ExecResult result;
        try {
            result = context.sandbox().exec(Command.argv("cat"), options(context).withTimeout(HANG_BOUND));
        } catch (SandboxTimeoutException hung) {
            throw new AssertionError("cat without stdin was still reading after " + HANG_BOUND.toSeconds()
                    + " s: stdin was left open");
        }
        Check.equal(0, result.exitCode(), "exit code of cat without stdin");
        Check.equal(0, result.stdout().length, "bytes cat read without stdin");
    }

    private static void largeStdinStreams(ProbeContext context) {
        byte[] input = patternedBytes(LARGE_STDIN_BYTES);
        ExecResult result = context.sandbox().exec(Command.argv("cat"), options(context).withStdin(input));
        Check.equal(0, result.exitCode(), "exit code of cat");
        Check.equal(input.length, result.stdout().length, "bytes cat echoed");
        Check.equal(digest(input), digest(result.stdout()), "SHA-256 of what cat echoed");
    }

    // ---- concurrency and errors

    private static void parallelExecs(ProbeContext context) throws Exception {
        String script = "i=0; while [ \"$i\" -lt \"$3\" ]; do printf '%s\\n' \"$1\"; i=$((i + 1)); done; "
                + "printf '%s' \"$1\" >&2; exit \"$2\"";
        ExecutorService pool = Executors.newFixedThreadPool(PARALLEL_EXECS);
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<ExecResult>> runs = new ArrayList<>();
            for (int index = 0; index < PARALLEL_EXECS; index++) {
                String[] argv = {"sh", "-c", script, "probe", token(index), Integer.toString(PARALLEL_EXIT_BASE + index),
                    Integer.toString(PARALLEL_LINES)};
                runs.add(pool.submit(() -> {
                    start.await();
                    return context.exec(argv);
                }));
            }
            start.countDown();
            for (int index = 0; index < PARALLEL_EXECS; index++) {
                ExecResult result = awaitRun(runs.get(index), context.execTimeout().multipliedBy(2));
                String expected = (token(index) + "\n").repeat(PARALLEL_LINES);
                Check.equal(PARALLEL_EXIT_BASE + index, result.exitCode(), "exit code of parallel exec " + index);
                Check.equal(expected, result.stdoutText(), "stdout of parallel exec " + index);
                Check.equal(token(index), result.stderrText(), "stderr of parallel exec " + index);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    // ---- timeouts (last: a backend may tear its sandbox down on a timeout)

    private static void timeoutKillsTheTree(ProbeContext context) throws InterruptedException {
        List<String> controlMarkers = markers(context, "tree-control");
        ExecResult control = context.sandbox().exec(
                treeCommand(Duration.ZERO, controlMarkers, CONTROL_MARKER_WAIT), options(context));
        Check.equal(0, control.exitCode(), "exit code of the tree script with no delay (positive control); stderr "
                + control.stderrText());
        awaitMarkers(context, controlMarkers);

        List<String> markers = markers(context, "tree-survivor");
        long started = System.nanoTime();
        Check.refusedWith(SandboxTimeoutException.class, "the tree script bounded by " + SHORT_TIMEOUT,
                () -> context.sandbox().exec(treeCommand(CHILD_DELAY, markers, PARENT_WAIT),
                        options(context).withTimeout(SHORT_TIMEOUT)));
        Duration elapsed = Duration.ofNanos(System.nanoTime() - started);
        Duration remaining = SHORT_TIMEOUT.plus(MARKER_GRACE).minus(elapsed);
        if (!remaining.isNegative()) {
            TimeUnit.NANOSECONDS.sleep(remaining.toNanos());
        }
        List<String> survivors = new ArrayList<>();
        for (int child = 0; child < markers.size(); child++) {
            if (context.guest().exists(markers.get(child))) {
                survivors.add(TREE_CHILDREN.get(child));
            }
        }
        Check.that(survivors.isEmpty(), "after the timeout these children lived on and wrote their markers: "
                + String.join(", ", survivors));
        checkWithinTimeoutWindow(elapsed, "the tree script");
    }

    // ---- helpers

    static ExecOptions options(ProbeContext context) {
        return ExecOptions.in(context.workingDirectory(), context.execTimeout());
    }

    private static ExecResult shellLine(ProbeContext context, String line) {
        return context.sandbox().exec(Command.shell(line), options(context));
    }

    /** A fixed script with positional parameters, as an argv. */
    static Command shellCommand(String script, String... arguments) {
        List<String> argv = new ArrayList<>(List.of("sh", "-c", script, "probe"));
        argv.addAll(List.of(arguments));
        return Command.argv(argv);
    }

    static Command treeCommand(Duration childDelay, List<String> markers, Duration parentWait) {
        List<String> arguments = new ArrayList<>();
        arguments.add(Long.toString(childDelay.toSeconds()));
        arguments.addAll(markers);
        arguments.add(Long.toString(parentWait.toSeconds()));
        return shellCommand(TREE_SCRIPT, arguments.toArray(String[]::new));
    }

    static List<String> markers(ProbeContext context, String prefix) {
        return TREE_CHILDREN.stream().map(child -> context.paths().in(prefix + "-" + child)).toList();
    }

    private static void awaitMarkers(ProbeContext context, List<String> markers) throws InterruptedException {
        long deadline = System.nanoTime() + CONTROL_MARKER_WAIT.toNanos();
        for (int child = 0; child < markers.size(); child++) {
            while (!context.guest().exists(markers.get(child))) {
                Check.that(System.nanoTime() < deadline, "the " + TREE_CHILDREN.get(child) + " child of the tree "
                        + "script wrote no marker within " + CONTROL_MARKER_WAIT.toSeconds() + " s without a timeout "
                        + "(positive control): the guest lacks sh, sleep, touch or setsid, so the probe could not "
                        + "show a survivor");
                TimeUnit.MILLISECONDS.sleep(100);
            }
        }
    }

    private static void checkWithinTimeoutWindow(Duration elapsed, String what) {
        Check.that(elapsed.compareTo(TIMEOUT_EARLIEST) >= 0, what + ": the timeout of " + SHORT_TIMEOUT.toMillis()
                + " ms was raised after only " + elapsed.toMillis() + " ms");
        Check.that(elapsed.compareTo(TIMEOUT_LATEST) <= 0, what + ": the timeout of " + SHORT_TIMEOUT.toMillis()
                + " ms was raised only after " + elapsed.toMillis() + " ms, more than "
                + TIMEOUT_LATEST.toMillis() + " ms");
    }

    private static ExecResult awaitRun(Future<ExecResult> run, Duration bound) throws Exception {
        try {
            return run.get(bound.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException stuck) {
            throw new AssertionError("a parallel exec did not return within " + bound.toSeconds() + " s");
        } catch (ExecutionException failed) {
            Throwable cause = failed.getCause();
            if (cause instanceof Exception exception) {
                throw exception;
            }
            throw failed;
        }
    }

    private static String token(int index) {
        return "parallel-exec-" + index + "-of-" + PARALLEL_EXECS;
    }

    private static String withoutNewline(String text) {
        return text.endsWith("\n") ? text.substring(0, text.length() - 1) : text;
    }

    /** What {@link #LINES_SCRIPT} prints for {@code count} lines. */
    static byte[] generatedLines(int count) {
        StringBuilder lines = new StringBuilder(count * LINE_BYTES);
        String format = "%" + (LINE_BYTES - 1) + "d\n";
        for (int line = 0; line < count; line++) {
            lines.append(String.format(Locale.ROOT, format, line));
        }
        return lines.toString().getBytes(StandardCharsets.US_ASCII);
    }

    /** Every byte value 0..255, ascending or descending. */
    static byte[] everyByte(boolean descending) {
        byte[] bytes = new byte[256];
        for (int value = 0; value < bytes.length; value++) {
            bytes[value] = (byte) (descending ? 255 - value : value);
        }
        return bytes;
    }

    /** A {@code printf} format that prints exactly {@code bytes}: every byte as a three-digit octal escape. */
    static String octalEscapes(byte[] bytes) {
        StringBuilder format = new StringBuilder(bytes.length * 4);
        for (byte b : bytes) {
            format.append(String.format(Locale.ROOT, "\\%03o", b & 0xFF));
        }
        return format.toString();
    }

    /** Bytes whose pattern does not repeat on any power-of-two period (251 is prime). */
    static byte[] patternedBytes(int length) {
        byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++) {
            bytes[i] = (byte) ((i * 7 + i / 251) % 251);
        }
        return bytes;
    }

    static byte[] concat(byte[] first, byte[] second) {
        byte[] joined = new byte[first.length + second.length];
        System.arraycopy(first, 0, joined, 0, first.length);
        System.arraycopy(second, 0, joined, first.length, second.length);
        return joined;
    }

    static String digest(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException impossible) {
            throw new IllegalStateException("every JDK has SHA-256", impossible);
        }
    }

    /** What a listener received, per stream; called from backend threads. */
    private static final class Chunks {
        private final ByteArrayOutputStream stdout = new ByteArrayOutputStream();
        private final ByteArrayOutputStream stderr = new ByteArrayOutputStream();

        synchronized void add(ExecStream stream, byte[] chunk) {
            (stream == ExecStream.STDOUT ? stdout : stderr).writeBytes(chunk);
        }

        synchronized byte[] of(ExecStream stream) {
            return (stream == ExecStream.STDOUT ? stdout : stderr).toByteArray();
        }
    }
}
