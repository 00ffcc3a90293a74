package org.sandbox4j.testkit.tck;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.sandbox4j.core.Capability;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.ExecStream;
import org.sandbox4j.core.HostCeilings;
import org.sandbox4j.core.ProcessOptions;
import org.sandbox4j.core.ProcessOutput;
import org.sandbox4j.core.ProcessSignal;
import org.sandbox4j.core.SandboxDisposed;
import org.sandbox4j.core.SandboxFileNotFound;
import org.sandbox4j.core.SandboxOperationNotSupported;
import org.sandbox4j.core.SandboxProcess;
import org.sandbox4j.core.SandboxProcessKilled;
import org.sandbox4j.core.SandboxProcessLimitExceeded;
import org.sandbox4j.core.SandboxTimeoutException;
import org.sandbox4j.core.spi.ErrorDetail;
import org.sandbox4j.core.spi.GuestProcess;

/**
 * The INTERACTIVE_EXEC suite (gate {@link Capability#EXEC} and {@link Capability#INTERACTIVE_EXEC}):
 * a started process is really interactive (not an exec replayed), keeps its streams apart and
 * bounded, hears its signals, and leaves nothing running however it ends — by itself, by its
 * lifetime, by a kill, a close or its sandbox's disposal. The guest is hostile where it matters: it
 * forks, ignores signals, floods its output and never reads its input.
 *
 * <p>Survival is checked as {@link ExecSuite}'s tree-kill probe checks it: children write markers
 * after a delay, and none may exist once that delay and a grace have passed. A second witness, where
 * the guest's execs see each other's processes, is a {@code /proc/*}{@code /environ} scan for the
 * probe's own token. Timings are sanity bounds, generous enough for a backend whose kill needs an
 * engine's round trips. The guest needs a POSIX {@code sh} (with {@code export -p}), {@code cat}, {@code wc},
 * {@code sleep}, {@code dd}, {@code head}, {@code touch}, {@code setsid}, {@code nohup}, {@code /dev/zero},
 * {@code /dev/urandom}, and {@code sha256sum} or {@code cksum}.
 */
public final class InteractiveSuite {

    /** The suite's name. */
    public static final String NAME = "INTERACTIVE_EXEC";

    /** How long a probe's process may live: far past what any probe needs, so only a hang reaches it. */
    static final Duration LIFETIME = Duration.ofSeconds(120);

    /** Output the guest has written must arrive within this. */
    static final Duration ARRIVAL = Duration.ofSeconds(10);

    /** A process that must end by itself (its stdin closed, its leader exited) must do so within this. */
    static final Duration ENDING = Duration.ofSeconds(15);

    /**
     * A kill, a lifetime's end or a disposal must be confirmed within this: a backend may need an
     * engine's round trips (and {@link org.sandbox4j.core.spi.HostProcess#KILL_GRACE}) to confirm it.
     */
    static final Duration KILL_BOUND = Duration.ofSeconds(15);

    /** The lifetime the lifetime probe gives its tree. */
    static final Duration SHORT_LIFETIME = Duration.ofSeconds(1);

    /** The lifetime must not end the process before this. */
    static final Duration LIFETIME_EARLIEST = Duration.ofMillis(500);

    /**
     * How long the survival probes' children wait at most for their go file before each writes its
     * marker anyway: past any probe's end, so only the go file makes a living child write.
     */
    static final Duration CHILD_BOUND = Duration.ofSeconds(120);

    /** How long after the go file was made the probe waits before looking for markers: children look every second. */
    static final Duration MARKER_GRACE = Duration.ofSeconds(3);

    /** A waitFor with this deadline must come back empty... */
    static final Duration SHORT_WAIT = Duration.ofMillis(200);

    /** ...not before this... */
    static final Duration SHORT_WAIT_EARLIEST = Duration.ofMillis(150);

    /** ...and well within this. */
    static final Duration SHORT_WAIT_LATEST = Duration.ofSeconds(5);

    /** How long a signal-ignoring guest must stay alive after its signals: they are delivered, not turned into kills. */
    static final Duration STILL_ALIVE_AFTER = Duration.ofSeconds(1);

    /** The bytes {@code wc -c} is given. */
    static final int COUNTED_BYTES = 100_000;

    /** The flooding guest writes blocks of this many bytes. */
    static final int BLOCK_BYTES = 64 * 1024;

    /**
     * What may sit between the guest's write and the handle's window besides the window itself:
     * pipes, a launcher's and an engine's buffers, a transport's frames. A guess, generous on purpose:
     * an unbounded backend buffers far more in the time the probe leaves the output unread.
     */
    static final long TRANSPORT_SLACK = 8L * 1024 * 1024;

    /** How long the bound probe leaves the output unread before it counts. */
    static final Duration UNREAD_FOR = Duration.ofSeconds(3);

    /** How long a stalled guest is watched to see that it stays stalled. */
    static final Duration STALL_WATCH = Duration.ofSeconds(1);

    /** What the writer offers a guest that never reads. */
    static final int UNREAD_STDIN_BYTES = 64 * 1024 * 1024;

    /** How long that write may wait. */
    static final Duration STDIN_WAIT = Duration.ofSeconds(2);

    /** The write must return after most of its wait... */
    static final Duration STDIN_WAIT_EARLIEST = Duration.ofMillis(1500);

    /** ...and well within this. */
    static final Duration STDIN_WAIT_LATEST = Duration.ofSeconds(10);

    /** The flood the round-trip probe reads: many windows' worth. */
    static final int FLOOD_BYTES = 16 * 1024 * 1024;

    /** How long the flood may take to arrive, whole. */
    static final Duration FLOOD_BOUND = Duration.ofSeconds(60);

    /** What the stdin-and-stdout probe pushes through {@code cat}: far past any pipe and window. */
    static final int LARGE_STDIN_BYTES = 8 * 1024 * 1024;

    /** It writes in chunks of this size, so a write's wait covers one chunk. */
    static final int WRITE_CHUNK_BYTES = 256 * 1024;

    /** How long the slow listener takes over each chunk. */
    static final Duration SLOW_LISTENER_PAUSE = Duration.ofMillis(100);

    /** Lines each of the many handles echoes. */
    static final int LINES_PER_HANDLE = 100;

    /** How many processes the survival probe's guest fans out into. */
    static final int FAN_OUT = 50;

    /** A disposed sandbox's handle must know within this. */
    static final Duration DISPOSAL_BOUND = KILL_BOUND.plus(org.sandbox4j.core.spi.Disposals.NOTICE);

    private static final String TOKEN_VARIABLE = "SANDBOX4J_TCK_TOKEN";
    /** Names a survival probe's go file (in the started process's environment, so every child has it). */
    private static final String GO_VARIABLE = "SANDBOX4J_TCK_GO";
    /** Carries {@link #AWAIT_GO_CHILD}, so that every child, however it was forked, runs the same text. */
    private static final String CHILD_VARIABLE = "SANDBOX4J_TCK_CHILD";

    /**
     * A child of the survival probes: waits until the go file exists (at most $1 s), then writes
     * marker $2. The probe makes the go file only once the tree must be gone (kill returned, the
     * lifetime or the leader's exit was reported), so a child the kill missed shows itself within a
     * second, however long the backend's kill took.
     */
    static final String AWAIT_GO_CHILD = "i=0; while [ ! -e \"$" + GO_VARIABLE + "\" ] && [ \"$i\" -lt \"$1\" ]; do "
            + "sleep 1; i=$((i + 1)); done; touch \"$2\"";
    private static final String CHILD = "sh -c \"$" + CHILD_VARIABLE + "\"";

    /**
     * The lifetime probe's tree: a double-forked, a re-setsid and a signal-ignoring child, each an
     * {@link #AWAIT_GO_CHILD} with its bound $1 and its marker $2..$4; the parent never ends.
     */
    private static final String LIFETIME_TREE_SCRIPT = String.join("\n",
            "( (" + CHILD + " tck-child \"$1\" \"$2\") & )",
            "setsid " + CHILD + " tck-setsid \"$1\" \"$3\" &",
            "( trap '' TERM HUP INT; " + CHILD + " tck-ignoring \"$1\" \"$4\" ) &",
            "while :; do sleep 1; done");
    private static final String MISSING_PROGRAM = "sandbox4j-tck-no-such-program";
    private static final Duration POLL = Duration.ofMillis(100);
    private static final Duration READ_SLICE = Duration.ofMillis(200);

    /** Prints {@code ready} once its traps are set, then sleeps until it is stopped. */
    private static final String TERM_TRAP_SCRIPT =
            "trap 'echo got-term; exit 3' TERM; echo ready; while :; do sleep 1; done";

    /**
     * The leader and a child in its process group (run in the foreground, so not ignoring INT as an
     * asynchronous one would) each trap INT and write their marker ($1, $2).
     */
    private static final String GROUP_INT_SCRIPT = String.join("\n",
            "trap 'touch \"$1\"; exit 0' INT",
            "sh -c 'trap \"touch \\\"\\$1\\\"; exit 0\" INT; echo ready; while :; do sleep 1; done' child \"$2\"");

    /** Ignores every signal a caller may send, has a go-file child with marker $1 (bound $2 s), and never ends. */
    private static final String IGNORING_SCRIPT = String.join("\n",
            "trap '' TERM INT HUP QUIT USR1 USR2",
            CHILD + " tck-child \"$2\" \"$1\" &",
            "echo ready",
            "while :; do sleep 1; done");

    /**
     * The tree that must die with its handle: double-forked, re-setsid and nohup go-file children
     * (bound $1 s) with markers $2..$4, and {@value #FAN_OUT} sleepers; it never ends on its own.
     */
    private static final String FORKING_SCRIPT = String.join("\n",
            "( (" + CHILD + " tck-child \"$1\" \"$2\") & )",
            "setsid " + CHILD + " tck-setsid \"$1\" \"$3\" &",
            "nohup sh -c 'trap \"\" TERM INT; exec sh -c \"$" + CHILD_VARIABLE + "\" tck-nohup \"$1\" \"$2\"' tck-nohup "
                    + "\"$1\" \"$4\" >/dev/null 2>&1 &",
            "i=0; while [ \"$i\" -lt \"$5\" ]; do sleep 300 & i=$((i + 1)); done",
            "echo ready",
            "while :; do sleep 1; done");
    private static final List<String> FORKING_CHILDREN = List.of("double-forked", "setsid", "nohup");

    /** A go-file child (bound $1 s, marker $2) holds stdout open; the leader exits 0 at once. */
    private static final String LEAVES_A_CHILD_SCRIPT = CHILD + " tck-child \"$1\" \"$2\" & echo leader-done; exit 0";

    /**
     * Writes {@value #BLOCK_BYTES}-byte blocks forever, counting each one written into $1. The count is
     * replaced by a rename, never rewritten in place: a read between the truncation and the write of
     * {@code echo > $1} would see no count at all, on a backend fast enough to read right then.
     */
    private static final String FLOOD_COUNTING_SCRIPT = "i=0; while :; do dd if=/dev/zero bs=" + BLOCK_BYTES
            + " count=1 2>/dev/null || exit 1; i=$((i + 1)); echo \"$i\" > \"$1.next\" && mv -f \"$1.next\" \"$1\"; "
            + "done";

    /**
     * Lists every /proc/PID/environ holding $1 (NULs dropped by the substitution do not matter to a
     * substring match), and the count of environ files it could read last.
     */
    private static final String ENVIRON_SCAN_SCRIPT = String.join("\n",
            "seen=0",
            "for f in /proc/[0-9]*/environ; do",
            "  e=$(cat \"$f\" 2>/dev/null) || continue",
            "  seen=$((seen + 1))",
            "  case \"$e\" in *\"$1\"*) echo \"$f\";; esac",
            "done",
            "echo \"readable=$seen\"");

    private InteractiveSuite() {
    }

    /** The suite, with its probes in the order they run. */
    public static Suite suite() {
        return Suite.builder(NAME)
                .gate(Capability.EXEC, Capability.INTERACTIVE_EXEC)
                .probes(
                        Probe.of("a-started-process-echoes-while-it-runs",
                                "start runs the command to its end and replays its output, so nothing interactive "
                                        + "(a REPL, a language server) can be driven through it",
                                InteractiveSuite::echoesWhileItRuns),
                        Probe.of("closing-stdin-is-end-of-input",
                                "closing stdin does not reach the guest as end of input, or bytes written are lost",
                                InteractiveSuite::closingStdinIsEndOfInput),
                        Probe.of("stdout-and-stderr-are-kept-apart-byte-exactly",
                                "the started process's streams are merged, re-encoded or cut at a NUL",
                                InteractiveSuite::streamsKeptApart),
                        Probe.of("exit-code-fidelity",
                                "the exit code, or a death by signal as 128 + its number, is lost or altered",
                                InteractiveSuite::exitCodeFidelity),
                        Probe.of("a-listener-receives-exactly-the-output",
                                "in listener mode output is missed, duplicated or mislabelled, or read still answers",
                                InteractiveSuite::listenerReceivesTheOutput),
                        Probe.of("working-directory-and-environment-are-honoured",
                                "the started process runs elsewhere, misses the variables given to it, or sees the "
                                        + "host's environment (credentials, tokens)",
                                InteractiveSuite::workingDirectoryAndEnvironmentAreHonoured),
                        Probe.of("a-missing-working-directory-is-refused-at-start",
                                "start returns a handle (or an exit code) for a command that never ran, or a refused "
                                        + "start keeps a slot of the sandbox's limit",
                                InteractiveSuite::missingWorkingDirectoryIsRefused),
                        Probe.of("a-missing-program-exits-127",
                                "a missing program is not the shell's 127 on the handle, with its words on stderr",
                                InteractiveSuite::missingProgramExits127),
                        Probe.of("a-wait-with-a-deadline-leaves-it-running",
                                "waitFor with a deadline kills the process, blocks past the deadline or ends its stdin",
                                InteractiveSuite::waitWithDeadlineLeavesItRunning),
                        Probe.of("the-lifetime-kills-the-whole-tree",
                                "a process outlives its lifetime, or leaves double-forked, setsid or signal-ignoring "
                                        + "children acting in the sandbox",
                                InteractiveSuite::lifetimeKillsTheTree),
                        Probe.of("an-interrupted-wait-leaves-the-process-running",
                                "an interrupted waitFor kills the process the handle owns, or loses the interrupt",
                                InteractiveSuite::interruptedWaitLeavesItRunning),
                        Probe.of("a-terminate-signal-reaches-the-command",
                                "signal(TERMINATE) does not reach the command, or is turned into a kill",
                                InteractiveSuite::terminateReachesTheCommand),
                        Probe.of("an-interrupt-reaches-the-whole-group",
                                "signal(INTERRUPT) reaches only the leader, not its process group as Ctrl-C does",
                                InteractiveSuite::interruptReachesTheGroup),
                        Probe.of("a-signal-ignoring-guest-is-still-killed",
                                "a guest that ignores every signal survives kill, or kill hangs the caller",
                                InteractiveSuite::signalIgnoringGuestIsKilled),
                        Probe.of("a-killed-handle-leaves-no-process",
                                "kill leaves double-forked, setsid, nohup or fanned-out processes running",
                                InteractiveSuite::killedHandleLeavesNoProcess),
                        Probe.of("the-leaders-exit-ends-its-tree",
                                "a leader that exits leaves a child running that holds its output open, so the "
                                        + "streams never end and the child acts on",
                                InteractiveSuite::leadersExitEndsItsTree),
                        Probe.of("close-is-kill-and-is-idempotent",
                                "close leaves the process running, throws on a second close, or a closed handle still "
                                        + "answers",
                                InteractiveSuite::closeIsKillAndIdempotent),
                        Probe.of("unread-output-is-bounded-and-stalls-the-guest",
                                "output nobody reads is buffered without bound (host memory), or reading it does not "
                                        + "let the guest go on",
                                InteractiveSuite::unreadOutputIsBounded),
                        Probe.of("a-guest-that-never-reads-stdin-blocks-the-writer-not-the-host",
                                "a write to a guest that never reads hangs the caller or buffers without bound",
                                InteractiveSuite::unreadStdinBlocksTheWriter),
                        Probe.of("a-flood-round-trips-intact",
                                "output many windows long is lost, reordered or duplicated across window refills",
                                InteractiveSuite::floodRoundTrips),
                        Probe.of("a-large-stdin-streams-through-without-deadlock",
                                "stdin and stdout at once through one process deadlock, or lose or reorder bytes",
                                InteractiveSuite::largeStdinStreamsThrough),
                        Probe.of("a-slow-listener-back-pressures-the-guest",
                                "a slow or throwing listener makes the backend buffer without bound, or ends the process",
                                InteractiveSuite::slowListenerBackPressures),
                        Probe.of("many-handles-at-once-keep-their-own-streams",
                                "concurrent processes in one sandbox get each other's input or output",
                                InteractiveSuite::manyHandlesKeepTheirStreams),
                        Probe.of("handles-past-the-limit-are-refused-and-free-up",
                                "a sandbox runs more processes than the limit, runs the refused one, or a closed "
                                        + "handle keeps its slot",
                                InteractiveSuite::pastTheLimitIsRefused),
                        Probe.of("a-handle-outliving-its-sandbox-is-dead",
                                "a process keeps running after its sandbox was disposed of, or its handle reports a "
                                        + "disposal as an exit code",
                                InteractiveSuite::handleOutlivingItsSandboxIsDead),
                        Probe.of("a-disposal-by-another-instance-ends-the-handle",
                                "a process keeps running after another backend instance disposed of its sandbox's "
                                        + "conversation",
                                InteractiveSuite::disposalByAnotherInstanceEndsTheHandle))
                .build();
    }

    /**
     * The refusal check for every backend that runs commands: one that does not declare
     * {@link Capability#INTERACTIVE_EXEC} refuses {@code start} and runs nothing (a silently dropped
     * declaration is then visible), and one that declares it starts.
     */
    public static Suite declarationSuite() {
        return Suite.builder(NAME + "_DECLARED")
                .gate(Capability.EXEC)
                .probe(Probe.of("an-undeclared-start-is-refused",
                        "start runs a command on a backend that does not declare interactive_exec (or refuses it on "
                                + "one that does), so what the backend declares is not what it does",
                        InteractiveSuite::undeclaredStartIsRefused))
                .build();
    }

    // ---- positive controls

    private static void echoesWhileItRuns(ProbeContext context) {
        try (SandboxProcess cat = start(context, Command.argv("cat"))) {
            for (String line : List.of("ping\n", "pong\n")) {
                byte[] bytes = line.getBytes(StandardCharsets.UTF_8);
                Check.equal(bytes.length, cat.write(bytes, ARRIVAL), "bytes of " + Check.show(line) + " written to cat");
                Seen seen = readUntil(cat, s -> s.stdoutText().contains(line), ARRIVAL, context);
                Check.equal(line, seen.stdoutText(), "what cat echoed of " + Check.show(line) + " while its stdin "
                        + "was open (an exec replayed after the end would echo nothing yet)");
                Check.that(cat.isAlive(), "cat ended while its stdin was still open");
            }
            cat.closeStdin();
            Check.equal(OptionalInt.of(0), waitFor(cat, ENDING, "cat after its stdin was closed"), "exit code of cat");
            Seen rest = readToEnd(cat, ENDING, context);
            Check.equal("", rest.stdoutText(), "what cat wrote after its stdin was closed");
        }
    }

    private static void closingStdinIsEndOfInput(ProbeContext context) {
        try (SandboxProcess wc = start(context, Command.argv("wc", "-c"))) {
            byte[] input = new byte[COUNTED_BYTES];
            for (int i = 0; i < input.length; i++) {
                input[i] = (byte) (i % 251);
            }
            Check.equal(input.length, wc.write(input, ENDING), "bytes written to wc -c");
            wc.closeStdin();
            Check.equal(OptionalInt.of(0), waitFor(wc, ENDING, "wc -c after its stdin was closed"), "exit code of wc -c");
            Seen seen = readToEnd(wc, ENDING, context);
            Check.equal(Integer.toString(COUNTED_BYTES), seen.stdoutText().strip(), "what wc -c counted");
        }
    }

    private static void streamsKeptApart(ProbeContext context) {
        byte[] first = ExecSuite.everyByte(false);
        byte[] second = ExecSuite.everyByte(true);
        byte[] third = "\r\nend of stdout\0".getBytes(StandardCharsets.UTF_8);
        byte[] fourth = "\0end of stderr\n".getBytes(StandardCharsets.UTF_8);
        try (SandboxProcess printf = start(context, ExecSuite.shellCommand(
                "printf \"$1\"; printf \"$2\" >&2; printf \"$3\"; printf \"$4\" >&2", ExecSuite.octalEscapes(first),
                ExecSuite.octalEscapes(second), ExecSuite.octalEscapes(third), ExecSuite.octalEscapes(fourth)))) {
            Seen seen = readToEnd(printf, ENDING, context);
            Check.equal(OptionalInt.of(0), waitFor(printf, ENDING, "the printf script"), "exit code of the printf "
                    + "script; stderr " + seen.stderrText());
            Check.equal(ExecSuite.concat(first, third), seen.stdout(), "stdout bytes");
            Check.equal(ExecSuite.concat(second, fourth), seen.stderr(), "stderr bytes");
        }
    }

    private static void exitCodeFidelity(ProbeContext context) {
        Check.equal(OptionalInt.of(0), exitOf(context, "exit 0"), "exit code of 'exit 0' (positive control)");
        Check.equal(OptionalInt.of(7), exitOf(context, "exit 7"), "exit code of 'exit 7'");
        Check.equal(OptionalInt.of(GuestProcess.SIGNAL_EXIT_BASE + ProcessSignal.TERMINATE.number()),
                exitOf(context, "kill -TERM $$; sleep 10"), "exit code of a shell that sent itself TERM");
    }

    private static OptionalInt exitOf(ProbeContext context, String script) {
        try (SandboxProcess process = start(context, ExecSuite.shellCommand(script))) {
            process.closeStdin();
            return waitFor(process, ENDING, Check.show(script));
        }
    }

    private static void listenerReceivesTheOutput(ProbeContext context) throws InterruptedException {
        Chunks chunks = new Chunks();
        int lines = 256;
        byte[] expectedStdout = ExecSuite.concat(ExecSuite.generatedLines(lines),
                "tail".getBytes(StandardCharsets.UTF_8));
        byte[] expectedStderr = ExecSuite.generatedLines(lines);
        Command command = ExecSuite.shellCommand(ExecSuite.LINES_SCRIPT + "; " + ExecSuite.LINES_SCRIPT
                + " >&2; printf 'tail'", Integer.toString(lines));
        try (SandboxProcess process = context.sandbox().start(command, options(context).withListener(chunks::add))) {
            Check.refusedWith(IllegalStateException.class, "read in listener mode",
                    () -> process.read(READ_SLICE));
            Check.equal(OptionalInt.of(0), waitFor(process, ENDING, "the line generator"), "exit code of the line "
                    + "generator");
            long deadline = System.nanoTime() + ARRIVAL.toNanos();
            while (chunks.size() < expectedStdout.length + expectedStderr.length && System.nanoTime() < deadline) {
                TimeUnit.MILLISECONDS.sleep(POLL.toMillis());
            }
            Check.equal(ExecSuite.digest(expectedStdout), ExecSuite.digest(chunks.of(ExecStream.STDOUT)),
                    "SHA-256 of the stdout the listener received (" + chunks.of(ExecStream.STDOUT).length + " bytes)");
            Check.equal(ExecSuite.digest(expectedStderr), ExecSuite.digest(chunks.of(ExecStream.STDERR)),
                    "SHA-256 of the stderr the listener received (" + chunks.of(ExecStream.STDERR).length + " bytes)");
        }
    }

    private static void workingDirectoryAndEnvironmentAreHonoured(ProbeContext context) {
        String sentinel = System.getenv(ExecSuite.HOST_SENTINEL_VARIABLE);
        Check.that(sentinel != null && !sentinel.isBlank(), "set " + ExecSuite.HOST_SENTINEL_VARIABLE + " to a random "
                + "value in the environment of the JVM that runs the TCK (see the EXEC suite); without it this probe "
                + "cannot tell whether the host's environment reaches the guest");
        String awkward = context.paths().in("started in a dir with space, 'quote' & $(x)");
        context.guest().plantDirectory(awkward);
        Command listing = ExecSuite.shellCommand("pwd; printf 'given=%s\\n' \"$" + ExecSuite.GIVEN_VARIABLE
                + "\"; export -p");
        try (SandboxProcess process = context.sandbox().start(listing, options(context).withWorkingDirectory(awkward)
                .withEnvironment(Map.of(ExecSuite.GIVEN_VARIABLE, ExecSuite.GIVEN_VALUE)))) {
            Seen seen = readToEnd(process, ENDING, context);
            Check.equal(OptionalInt.of(0), waitFor(process, ENDING, "the environment listing"), "exit code of the "
                    + "environment listing; stderr " + seen.stderrText());
            String text = seen.stdoutText();
            Check.that(text.startsWith(awkward + "\n"), "pwd of a process started in " + awkward + ": "
                    + Check.show(text));
            Check.that(text.contains("given=" + ExecSuite.GIVEN_VALUE + "\n"), "the listing does not show the "
                    + "variable given to start: " + Check.show(text));
            Check.that(!text.contains(ExecSuite.HOST_SENTINEL_VARIABLE), "the host's "
                    + ExecSuite.HOST_SENTINEL_VARIABLE + " is in the started process's environment");
            Check.that(!text.contains(sentinel), "the value of the host's " + ExecSuite.HOST_SENTINEL_VARIABLE
                    + " is in the started process's environment, under another name");
        }
    }

    private static void missingWorkingDirectoryIsRefused(ProbeContext context) {
        String missing = context.paths().in("no-such-directory-" + token());
        String marker = context.paths().in("ran-without-its-directory");
        // More refusals than the sandbox has slots: one that kept its slot would turn the last into a limit.
        for (int attempt = 0; attempt <= HostCeilings.MAX_PROCESSES_PER_SANDBOX; attempt++) {
            Check.refusedWith(SandboxFileNotFound.class, "start in the missing directory " + missing + " (attempt "
                    + (attempt + 1) + ")", () -> context.sandbox().start(Command.argv("touch", marker),
                            options(context).withWorkingDirectory(missing)).close());
        }
        Check.that(!context.guest().exists(marker), "the command refused at start ran anyway: it created " + marker);
        Check.that(!context.guest().exists(missing), "a refused start created its missing working directory");
        try (SandboxProcess after = start(context, Command.argv("printf", "still-usable"))) {
            Seen seen = readToEnd(after, ENDING, context);
            Check.equal("still-usable", seen.stdoutText(), "a start after the refusals");
        }
    }

    private static void missingProgramExits127(ProbeContext context) {
        try (SandboxProcess process = start(context, Command.argv(MISSING_PROGRAM))) {
            Seen seen = readToEnd(process, ENDING, context);
            Check.equal(OptionalInt.of(ExecFailureProbes.MISSING_PROGRAM_EXIT),
                    waitFor(process, ENDING, "a missing program"), "exit code of a missing program");
            Check.that(seen.stderrText().contains(MISSING_PROGRAM), "stderr of a missing program does not name it: "
                    + Check.show(seen.stderrText()));
        }
    }

    // ---- waiting and lifetime

    private static void waitWithDeadlineLeavesItRunning(ProbeContext context) {
        try (SandboxProcess cat = start(context, Command.argv("cat"))) {
            long started = System.nanoTime();
            OptionalInt code = cat.waitFor(SHORT_WAIT);
            Duration waited = Duration.ofNanos(System.nanoTime() - started);
            Check.equal(OptionalInt.empty(), code, "waitFor(" + SHORT_WAIT.toMillis() + " ms) on a running cat");
            Check.that(waited.compareTo(SHORT_WAIT_EARLIEST) >= 0, "waitFor(" + SHORT_WAIT.toMillis() + " ms) came "
                    + "back after only " + waited.toMillis() + " ms");
            Check.that(waited.compareTo(SHORT_WAIT_LATEST) <= 0, "waitFor(" + SHORT_WAIT.toMillis() + " ms) came "
                    + "back only after " + waited.toMillis() + " ms");
            Check.that(cat.isAlive(), "cat is not alive after a waitFor with a deadline");
            byte[] line = "after-the-wait\n".getBytes(StandardCharsets.UTF_8);
            Check.equal(line.length, cat.write(line, ARRIVAL), "bytes written after the wait");
            Seen seen = readUntil(cat, s -> s.stdout().length >= line.length, ARRIVAL, context);
            Check.equal("after-the-wait\n", seen.stdoutText(), "what cat echoed after the wait");
        }
    }

    private static void lifetimeKillsTheTree(ProbeContext context) throws InterruptedException {
        List<String> controlMarkers = ExecSuite.markers(context, "lifetime-control");
        try (SandboxProcess control = start(context, ExecSuite.treeCommand(Duration.ZERO, controlMarkers,
                ExecSuite.CONTROL_MARKER_WAIT))) {
            Check.equal(OptionalInt.of(0), waitFor(control, ENDING.plus(ExecSuite.CONTROL_MARKER_WAIT),
                    "the tree script with no delay (positive control)"), "exit code of the tree script with no delay");
        }
        awaitMarkers(context, controlMarkers, ExecSuite.TREE_CHILDREN);

        String controlGo = goFile(context);
        String goControlMarker = context.paths().in("go-control-" + token());
        try (SandboxProcess control = context.sandbox().start(ExecSuite.shellCommand(CHILD + " tck-control \"$1\" "
                + "\"$2\"", Long.toString(CHILD_BOUND.toSeconds()), goControlMarker), survivorOptions(context, controlGo))) {
            context.guest().plantFile(controlGo, new byte[0]);
            Check.equal(OptionalInt.of(0), waitFor(control, ENDING, "a go-file child once its go file exists "
                    + "(positive control)"), "exit code of the go-file child");
        }
        Check.that(context.guest().exists(goControlMarker), "a go-file child wrote no marker once its go file "
                + "existed (positive control): the probes below could not show a survivor");

        List<String> markers = ExecSuite.markers(context, "lifetime-survivor");
        String go = goFile(context);
        long started = System.nanoTime();
        List<String> treeArguments = new ArrayList<>(List.of(Long.toString(CHILD_BOUND.toSeconds())));
        treeArguments.addAll(markers);
        try (SandboxProcess tree = context.sandbox().start(ExecSuite.shellCommand(LIFETIME_TREE_SCRIPT,
                treeArguments.toArray(String[]::new)), survivorOptions(context, go).withLifetime(SHORT_LIFETIME))) {
            Check.refusedWith(SandboxTimeoutException.class, "waitFor on the tree script with a lifetime of "
                    + SHORT_LIFETIME.toMillis() + " ms", () -> tree.waitFor(KILL_BOUND.plus(SHORT_LIFETIME)));
            Duration elapsed = Duration.ofNanos(System.nanoTime() - started);
            Check.that(elapsed.compareTo(LIFETIME_EARLIEST) >= 0, "the lifetime of " + SHORT_LIFETIME.toMillis()
                    + " ms ended the process after only " + elapsed.toMillis() + " ms");
            Check.that(!tree.isAlive(), "the tree script's handle is alive after its lifetime ended it");
        }
        checkNoSurvivors(context, markers, ExecSuite.TREE_CHILDREN, go, "after the lifetime");
    }

    private static void interruptedWaitLeavesItRunning(ProbeContext context) throws Exception {
        try (SandboxProcess cat = start(context, Command.argv("cat"))) {
            java.util.concurrent.CompletableFuture<Throwable> waited = new java.util.concurrent.CompletableFuture<>();
            java.util.concurrent.CountDownLatch waiting = new java.util.concurrent.CountDownLatch(1);
            Thread waiter = new Thread(() -> {
                waiting.countDown();
                try {
                    cat.waitFor(LIFETIME);
                    waited.complete(null);
                } catch (Throwable raised) {
                    waited.complete(Thread.currentThread().isInterrupted() ? raised
                            : new AssertionError("the interrupt flag was not set again after " + ErrorDetail.of(raised),
                                    raised));
                }
            }, "tck-interrupted-wait");
            waiter.setDaemon(true);
            waiter.start();
            waiting.await();
            TimeUnit.MILLISECONDS.sleep(SHORT_WAIT.toMillis());
            waiter.interrupt();
            Throwable raised = waited.get(ARRIVAL.toSeconds(), TimeUnit.SECONDS);
            if (raised instanceof AssertionError assertion) {
                throw assertion;
            }
            Check.that(raised instanceof org.sandbox4j.core.SandboxInterrupted, "an interrupted waitFor ended with "
                    + (raised == null ? "a normal return" : ErrorDetail.of(raised)) + ", not SandboxInterrupted");
            Check.that(cat.isAlive(), "an interrupted waitFor ended the process");
            byte[] line = "after-the-interrupt\n".getBytes(StandardCharsets.UTF_8);
            Check.equal(line.length, cat.write(line, ARRIVAL), "bytes written after the interrupt");
            Seen seen = readUntil(cat, s -> s.stdout().length >= line.length, ARRIVAL, context);
            Check.equal("after-the-interrupt\n", seen.stdoutText(), "what cat echoed after the interrupt");
        }
    }

    // ---- signals and kill

    private static void terminateReachesTheCommand(ProbeContext context) {
        try (SandboxProcess process = start(context, ExecSuite.shellCommand(TERM_TRAP_SCRIPT))) {
            awaitReady(process, context);
            process.signal(ProcessSignal.TERMINATE);
            Seen seen = readUntil(process, s -> s.stdoutText().contains("got-term"), ARRIVAL, context);
            Check.that(seen.stdoutText().contains("got-term"), "the command's TERM trap did not run: stdout "
                    + Check.show(seen.stdoutText()));
            Check.equal(OptionalInt.of(3), waitFor(process, ENDING, "the TERM-trapping script"), "exit code of the "
                    + "TERM-trapping script (its trap exits 3)");
        }
    }

    private static void interruptReachesTheGroup(ProbeContext context) throws InterruptedException {
        String leader = context.paths().in("interrupted-leader-" + token());
        String child = context.paths().in("interrupted-child-" + token());
        try (SandboxProcess process = start(context, ExecSuite.shellCommand(GROUP_INT_SCRIPT, leader, child))) {
            awaitReady(process, context);
            process.signal(ProcessSignal.INTERRUPT);
            long deadline = System.nanoTime() + ARRIVAL.toNanos();
            while (!(context.guest().exists(leader) && context.guest().exists(child)) && System.nanoTime() < deadline) {
                TimeUnit.MILLISECONDS.sleep(POLL.toMillis());
            }
            Check.that(context.guest().exists(leader), "the leader's INT trap did not run within "
                    + ARRIVAL.toSeconds() + " s of signal(INTERRUPT)");
            Check.that(context.guest().exists(child), "the INT trap of a child in the leader's process group did not "
                    + "run within " + ARRIVAL.toSeconds() + " s: the signal reached the leader only");
            Check.that(waitFor(process, ENDING, "the INT-trapping script").isPresent(),
                    "the INT-trapping script did not end after its traps ran");
        }
    }

    private static void signalIgnoringGuestIsKilled(ProbeContext context) throws InterruptedException {
        String marker = context.paths().in("ignoring-child-" + token());
        String go = goFile(context);
        try (SandboxProcess process = context.sandbox().start(ExecSuite.shellCommand(IGNORING_SCRIPT, marker,
                Long.toString(CHILD_BOUND.toSeconds())), survivorOptions(context, go))) {
            awaitReady(process, context);
            for (ProcessSignal signal : ProcessSignal.values()) {
                process.signal(signal);
            }
            TimeUnit.MILLISECONDS.sleep(STILL_ALIVE_AFTER.toMillis());
            Check.that(process.isAlive(), "a guest that ignores every signal ended after signals alone: a signal "
                    + "was turned into a kill");
            long killing = System.nanoTime();
            process.kill();
            Duration took = Duration.ofNanos(System.nanoTime() - killing);
            Check.that(took.compareTo(KILL_BOUND) <= 0, "kill of a signal-ignoring guest took " + took.toMillis()
                    + " ms, more than " + KILL_BOUND.toMillis() + " ms");
            Check.that(!process.isAlive(), "the handle is alive after kill returned");
            Check.refusedWith(SandboxProcessKilled.class, "waitFor after kill", () -> process.waitFor(ARRIVAL));
        }
        checkNoSurvivors(context, List.of(marker), List.of("signal-ignoring"), go, "after kill");
    }

    private static void killedHandleLeavesNoProcess(ProbeContext context) throws InterruptedException {
        String token = token();
        List<String> markers = FORKING_CHILDREN.stream().map(child -> context.paths().in("killed-" + child + "-"
                + token)).toList();
        String go = goFile(context);
        List<String> arguments = new ArrayList<>();
        arguments.add(Long.toString(CHILD_BOUND.toSeconds()));
        arguments.addAll(markers);
        arguments.add(Integer.toString(FAN_OUT));
        boolean scanSeesThem;
        try (SandboxProcess process = context.sandbox().start(ExecSuite.shellCommand(FORKING_SCRIPT,
                arguments.toArray(String[]::new)), survivorOptions(context, go, Map.of(TOKEN_VARIABLE, token)))) {
            awaitReady(process, context);
            scanSeesThem = !environScan(context, token).isEmpty();
            long killing = System.nanoTime();
            process.kill();
            Duration took = Duration.ofNanos(System.nanoTime() - killing);
            Check.that(took.compareTo(KILL_BOUND) <= 0, "kill of a forking guest took " + took.toMillis() + " ms, "
                    + "more than " + KILL_BOUND.toMillis() + " ms");
            Check.refusedWith(SandboxProcessKilled.class, "waitFor after kill", () -> process.waitFor(ARRIVAL));
        }
        if (scanSeesThem) {
            // Give a kill confirmed by the engine a moment to reach the kernel's last process.
            long deadline = System.nanoTime() + KILL_BOUND.toNanos();
            List<String> left = environScan(context, token);
            while (!left.isEmpty() && System.nanoTime() < deadline) {
                TimeUnit.MILLISECONDS.sleep(POLL.toMillis() * 5);
                left = environScan(context, token);
            }
            Check.that(left.isEmpty(), "after kill these processes still carry the probe's token: " + left);
        }
        checkNoSurvivors(context, markers, FORKING_CHILDREN, go, "after kill");
    }

    private static void leadersExitEndsItsTree(ProbeContext context) throws InterruptedException {
        String marker = context.paths().in("left-behind-" + token());
        String go = goFile(context);
        try (SandboxProcess process = context.sandbox().start(ExecSuite.shellCommand(LEAVES_A_CHILD_SCRIPT,
                Long.toString(CHILD_BOUND.toSeconds()), marker), survivorOptions(context, go))) {
            Check.equal(OptionalInt.of(0), waitFor(process, ENDING, "a leader that left a child behind"),
                    "exit code of the leader");
            Seen seen = readToEnd(process, ENDING.plus(GuestProcess.END_GRACE), context);
            Check.equal("leader-done\n", seen.stdoutText(), "stdout of the leader");
        }
        checkNoSurvivors(context, List.of(marker), List.of("background"), go, "after the leader exited");
    }

    private static void closeIsKillAndIdempotent(ProbeContext context) {
        SandboxProcess cat = start(context, Command.argv("cat"));
        Check.that(cat.isAlive(), "cat is not alive after start (positive control)");
        long closing = System.nanoTime();
        cat.close();
        Duration took = Duration.ofNanos(System.nanoTime() - closing);
        Check.that(took.compareTo(KILL_BOUND) <= 0, "close took " + took.toMillis() + " ms");
        Check.that(!cat.isAlive(), "cat is alive after close");
        cat.close();
        cat.kill();
        Check.that(!cat.isAlive(), "cat is alive after a second close and a kill");
        byte[] line = "x\n".getBytes(StandardCharsets.UTF_8);
        Check.refusedWith(IllegalStateException.class, "write after close", () -> cat.write(line, READ_SLICE));
        Check.refusedWith(IllegalStateException.class, "read after close", () -> cat.read(READ_SLICE));
        Check.refusedWith(IllegalStateException.class, "waitFor after close", () -> cat.waitFor(READ_SLICE));
        Check.refusedWith(IllegalStateException.class, "signal after close",
                () -> cat.signal(ProcessSignal.TERMINATE));
    }

    // ---- bounds

    private static void unreadOutputIsBounded(ProbeContext context) throws InterruptedException {
        String counter = context.paths().in("blocks-written-" + token());
        int window = ProcessOptions.DEFAULT_WINDOW_BYTES;
        long bound = (window + TRANSPORT_SLACK) / BLOCK_BYTES;
        try (SandboxProcess flood = start(context, ExecSuite.shellCommand(FLOOD_COUNTING_SCRIPT, counter))) {
            TimeUnit.MILLISECONDS.sleep(UNREAD_FOR.toMillis());
            long unread = blocksWritten(context, counter);
            Check.that(unread >= 1, "the flooding guest wrote no block in " + UNREAD_FOR.toSeconds() + " s "
                    + "(positive control): the guest lacks dd, or its output never left it");
            Check.that(unread <= bound, "the guest wrote " + unread + " blocks of " + BLOCK_BYTES + " bytes while "
                    + "nobody read them, more than the window of " + window + " bytes and " + TRANSPORT_SLACK
                    + " bytes of slack hold (" + bound + " blocks): output is buffered without bound");
            TimeUnit.MILLISECONDS.sleep(STALL_WATCH.toMillis());
            long still = blocksWritten(context, counter);
            Check.that(still <= bound, "the unread guest went on to " + still + " blocks, past the bound of " + bound);
            Check.that(flood.isAlive(), "the flooding guest ended while it was merely unread");
            long deadline = System.nanoTime() + ARRIVAL.toNanos();
            long read = 0;
            while (read <= (long) (bound + 2) * BLOCK_BYTES && System.nanoTime() < deadline) {
                ProcessOutput output = flood.read(READ_SLICE);
                checkWithinWindow(output, window);
                read += output.stdout().length;
            }
            long after = blocksWritten(context, counter);
            Check.that(after > still, "reading " + read + " bytes did not let the guest go on: it stayed at " + still
                    + " blocks");
        }
    }

    private static long blocksWritten(ProbeContext context, String counter) {
        if (!context.guest().exists(counter)) {
            return 0;
        }
        String text = new String(context.guest().read(counter), StandardCharsets.US_ASCII).strip();
        try {
            return text.isEmpty() ? 0 : Long.parseLong(text);
        } catch (NumberFormatException e) {
            throw new AssertionError("the flooding guest's counter holds " + Check.show(text), e);
        }
    }

    private static void unreadStdinBlocksTheWriter(ProbeContext context) {
        try (SandboxProcess sleeper = start(context, Command.argv("sleep", "60"))) {
            byte[] input = new byte[UNREAD_STDIN_BYTES];
            long started = System.nanoTime();
            int accepted = sleeper.write(input, STDIN_WAIT);
            Duration took = Duration.ofNanos(System.nanoTime() - started);
            Check.that(took.compareTo(STDIN_WAIT_EARLIEST) >= 0, "a write to a guest that never reads returned "
                    + "after " + took.toMillis() + " ms, before its wait of " + STDIN_WAIT.toMillis() + " ms ran out "
                    + "(it took " + accepted + " bytes)");
            Check.that(took.compareTo(STDIN_WAIT_LATEST) <= 0, "a write with a wait of " + STDIN_WAIT.toMillis()
                    + " ms to a guest that never reads returned only after " + took.toMillis() + " ms");
            long bound = GuestProcess.STDIN_WINDOW_BYTES + TRANSPORT_SLACK;
            Check.that(accepted >= 0 && accepted <= bound, "a guest that never reads took " + accepted + " bytes "
                    + "of stdin, more than the stdin window of " + GuestProcess.STDIN_WINDOW_BYTES + " bytes and "
                    + TRANSPORT_SLACK + " bytes of slack: stdin is buffered without bound");
            Check.that(sleeper.isAlive(), "the guest ended while it was merely not reading");
            long killing = System.nanoTime();
            sleeper.kill();
            Duration killed = Duration.ofNanos(System.nanoTime() - killing);
            Check.that(killed.compareTo(KILL_BOUND) <= 0, "kill with a full stdin took " + killed.toMillis() + " ms");
        }
    }

    private static void floodRoundTrips(ProbeContext context) {
        String flood = context.paths().in("flood-" + token());
        ExecResult made = context.shell("head -c \"$1\" /dev/urandom > \"$2\"", Integer.toString(FLOOD_BYTES), flood);
        Check.equal(0, made.exitCode(), "exit code of making the flood; stderr " + made.stderrText());
        ExecResult digest = context.shell("if command -v sha256sum >/dev/null 2>&1; then sha256sum < \"$1\"; "
                + "else echo cksum; cksum < \"$1\"; fi", flood);
        Check.equal(0, digest.exitCode(), "exit code of the guest's digest; stderr " + digest.stderrText());
        ByteArrayOutputStream received = new ByteArrayOutputStream(FLOOD_BYTES);
        try (SandboxProcess cat = start(context, Command.argv("cat", flood))) {
            int window = ProcessOptions.DEFAULT_WINDOW_BYTES;
            long deadline = System.nanoTime() + FLOOD_BOUND.toNanos();
            ProcessOutput output;
            do {
                output = cat.read(READ_SLICE);
                checkWithinWindow(output, window);
                received.writeBytes(output.stdout());
                Check.that(received.size() <= FLOOD_BYTES, "more bytes arrived than the flood holds: "
                        + received.size());
                Check.that(System.nanoTime() < deadline, "the flood had not arrived after " + FLOOD_BOUND.toSeconds()
                        + " s: " + received.size() + " of " + FLOOD_BYTES + " bytes");
            } while (!output.stdoutEnded());
            Check.equal(OptionalInt.of(0), waitFor(cat, ENDING, "cat of the flood"), "exit code of cat of the flood");
        }
        byte[] bytes = received.toByteArray();
        Check.equal(FLOOD_BYTES, bytes.length, "bytes of the flood that arrived");
        String guestSays = digest.stdoutText().strip();
        if (guestSays.startsWith("cksum")) {
            Check.equal(guestSays.substring("cksum".length()).strip(), PosixCksum.of(bytes) + " " + bytes.length,
                    "cksum of the flood, guest against host");
        } else {
            String guestDigest = guestSays.split("\\s+")[0];
            Check.equal(guestDigest, ExecSuite.digest(bytes), "SHA-256 of the flood, guest against host");
        }
    }

    private static void largeStdinStreamsThrough(ProbeContext context) throws Exception {
        byte[] input = ExecSuite.patternedBytes(LARGE_STDIN_BYTES);
        ExecutorService writer = Executors.newSingleThreadExecutor();
        try (SandboxProcess cat = start(context, Command.argv("cat"))) {
            Future<Integer> written = writer.submit(() -> {
                int total = 0;
                for (int off = 0; off < input.length; off += WRITE_CHUNK_BYTES) {
                    byte[] chunk = java.util.Arrays.copyOfRange(input, off, Math.min(input.length, off + WRITE_CHUNK_BYTES));
                    int accepted = cat.write(chunk, FLOOD_BOUND);
                    total += accepted;
                    if (accepted < chunk.length) {
                        break;
                    }
                }
                cat.closeStdin();
                return total;
            });
            Seen seen = readToEnd(cat, FLOOD_BOUND, context);
            Check.equal(input.length, written.get(ARRIVAL.toSeconds(), TimeUnit.SECONDS), "bytes written to cat");
            Check.equal(OptionalInt.of(0), waitFor(cat, ENDING, "cat of a large stdin"), "exit code of cat");
            Check.equal(input.length, seen.stdout().length, "bytes cat echoed");
            Check.equal(ExecSuite.digest(input), ExecSuite.digest(seen.stdout()), "SHA-256 of what cat echoed");
        } finally {
            writer.shutdownNow();
        }
    }

    private static void slowListenerBackPressures(ProbeContext context) throws InterruptedException {
        String counter = context.paths().in("blocks-to-a-listener-" + token());
        long bound = (ProcessOptions.DEFAULT_WINDOW_BYTES + TRANSPORT_SLACK) / BLOCK_BYTES;
        java.util.concurrent.atomic.AtomicLong delivered = new java.util.concurrent.atomic.AtomicLong();
        java.util.concurrent.atomic.AtomicBoolean thrown = new java.util.concurrent.atomic.AtomicBoolean();
        java.util.concurrent.atomic.AtomicBoolean slowing = new java.util.concurrent.atomic.AtomicBoolean(true);
        org.sandbox4j.core.ExecListener slow = (stream, chunk) -> {
            delivered.addAndGet(chunk.length);
            if (thrown.compareAndSet(false, true)) {
                throw new IllegalStateException("a listener that throws once (the TCK's; the process must go on)");
            }
            try {
                TimeUnit.MILLISECONDS.sleep(slowing.get() ? SLOW_LISTENER_PAUSE.toMillis() : 0);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        };
        try (SandboxProcess flood = context.sandbox().start(ExecSuite.shellCommand(FLOOD_COUNTING_SCRIPT, counter),
                options(context).withListener(slow))) {
            TimeUnit.MILLISECONDS.sleep(UNREAD_FOR.toMillis());
            long first = blocksWritten(context, counter);
            Check.that(thrown.get() && first >= 1, "the flooding guest wrote " + first + " blocks to a listener in "
                    + UNREAD_FOR.toSeconds() + " s (positive control)");
            Check.that(first <= bound, "the guest wrote " + first + " blocks of " + BLOCK_BYTES + " bytes to a "
                    + "listener that took " + delivered.get() + " bytes, more than the window and " + TRANSPORT_SLACK
                    + " bytes of slack hold (" + bound + " blocks): output is buffered without bound");
            Check.that(flood.isAlive(), "the process ended after its listener threw once");
            // The listener speeds up: a guest that was slowed, not stopped, writes on. (While it is slow, how
            // soon the guest moves depends on how finely the transport cuts its output, so that is not timed.)
            slowing.set(false);
            long deadline = System.nanoTime() + ARRIVAL.toNanos();
            long later = first;
            while (later <= first && System.nanoTime() < deadline) {
                TimeUnit.MILLISECONDS.sleep(POLL.toMillis() * 5);
                later = blocksWritten(context, counter);
            }
            Check.that(later > first, "the guest stayed at " + first + " blocks once the listener took its output "
                    + "at full speed: it was stopped, not slowed");
        }
    }

    // ---- many handles

    private static void manyHandlesKeepTheirStreams(ProbeContext context) throws Exception {
        try (ProbeSandboxes.FreshKey fresh = ProbeSandboxes.fresh(context, "interactive-many")) {
            ProbeSandboxes.Placed placed = fresh.acquire(context);
            int count = HostCeilings.MAX_PROCESSES_PER_SANDBOX;
            List<SandboxProcess> cats = new ArrayList<>();
            ExecutorService pool = Executors.newFixedThreadPool(count);
            try {
                for (int index = 0; index < count; index++) {
                    cats.add(placed.sandbox().start(Command.argv("cat"),
                            ProcessOptions.in(placed.workingDirectory(), LIFETIME)));
                }
                List<Future<String>> echoed = new ArrayList<>();
                for (int index = 0; index < count; index++) {
                    SandboxProcess cat = cats.get(index);
                    String line = "handle-" + index + "-" + token() + "\n";
                    echoed.add(pool.submit(() -> {
                        byte[] bytes = line.getBytes(StandardCharsets.UTF_8);
                        for (int round = 0; round < LINES_PER_HANDLE; round++) {
                            Check.equal(bytes.length, cat.write(bytes, ARRIVAL), "bytes written to a cat");
                        }
                        cat.closeStdin();
                        return line + "\0" + readToEnd(cat, ENDING, context).stdoutText();
                    }));
                }
                for (int index = 0; index < count; index++) {
                    String[] result = echoed.get(index).get(ENDING.toSeconds() * 2, TimeUnit.SECONDS).split("\0", 2);
                    Check.equal(result[0].repeat(LINES_PER_HANDLE), result[1], "what cat " + index + " of " + count
                            + " echoed");
                    Check.equal(OptionalInt.of(0), waitFor(cats.get(index), ENDING, "cat " + index), "exit code of cat "
                            + index);
                }
            } finally {
                pool.shutdownNow();
                cats.forEach(SandboxProcess::close);
            }
        }
    }

    private static void pastTheLimitIsRefused(ProbeContext context) throws InterruptedException {
        try (ProbeSandboxes.FreshKey fresh = ProbeSandboxes.fresh(context, "interactive-limit")) {
            ProbeSandboxes.Placed placed = fresh.acquire(context);
            ProcessOptions options = ProcessOptions.in(placed.workingDirectory(), LIFETIME);
            List<SandboxProcess> running = new ArrayList<>();
            try {
                for (int index = 0; index < HostCeilings.MAX_PROCESSES_PER_SANDBOX; index++) {
                    running.add(placed.sandbox().start(Command.argv("cat"), options));
                }
                String marker = placed.in("ran-past-the-limit");
                Check.refusedWith(SandboxProcessLimitExceeded.class, "start number "
                        + (HostCeilings.MAX_PROCESSES_PER_SANDBOX + 1),
                        () -> placed.sandbox().start(Command.argv("touch", marker), options).close());
                TimeUnit.MILLISECONDS.sleep(STILL_ALIVE_AFTER.toMillis());
                Check.that(!context.target().guestSide(placed.sandbox()).exists(marker),
                        "the start refused past the limit ran anyway: it created " + marker);
                for (SandboxProcess process : running) {
                    Check.that(process.isAlive(), "a handle under the limit ended when another was refused");
                }
                running.remove(0).close();
                try (SandboxProcess again = placed.sandbox().start(Command.argv("printf", "freed"), options)) {
                    Check.equal("freed", readToEnd(again, ENDING, context).stdoutText(), "a start after one close");
                }
            } finally {
                running.forEach(SandboxProcess::close);
            }
        }
    }

    // ---- dispose

    private static void handleOutlivingItsSandboxIsDead(ProbeContext context) {
        disposedWhileItRuns(context, false);
    }

    private static void disposalByAnotherInstanceEndsTheHandle(ProbeContext context) {
        disposedWhileItRuns(context, true);
    }

    /** A forking guest runs while its sandbox is disposed of, by this instance or by another one's disposeScope. */
    private static void disposedWhileItRuns(ProbeContext context, boolean byAnotherInstance) {
        try (ProbeSandboxes.FreshKey fresh = ProbeSandboxes.fresh(context, "interactive-dispose")) {
            ProbeSandboxes.Placed placed = fresh.acquire(context);
            SandboxProcess process = placed.sandbox().start(ExecSuite.shellCommand(
                    "( sleep 300 ) & sleep 300 & echo ready; while :; do sleep 1; done"),
                    ProcessOptions.in(placed.workingDirectory(), LIFETIME));
            try {
                awaitReady(process, context);
                if (byAnotherInstance) {
                    context.target().newBackend().disposeScope(fresh.key().scope(), fresh.key().threadId());
                } else {
                    context.backend().dispose(fresh.key());
                }
                long disposed = System.nanoTime();
                Check.refusedWith(SandboxDisposed.class, "waitFor after the sandbox was disposed of", () -> {
                    OptionalInt code = process.waitFor(DISPOSAL_BOUND);
                    throw new AssertionError("waitFor after the sandbox was disposed of "
                            + (code.isPresent() ? "reported exit code " + code.getAsInt() + " as the command's"
                                    : "found it still running " + DISPOSAL_BOUND.toSeconds() + " s on"));
                });
                Duration took = Duration.ofNanos(System.nanoTime() - disposed);
                Check.that(took.compareTo(DISPOSAL_BOUND) <= 0, "the handle knew of the disposal only after "
                        + took.toMillis() + " ms");
                Check.that(!process.isAlive(), "the handle is alive after its sandbox was disposed of");
                Check.refusedWith(SandboxDisposed.class, "write after the disposal",
                        () -> process.write("x\n".getBytes(StandardCharsets.UTF_8), READ_SLICE));
                long deadline = System.nanoTime() + ARRIVAL.toNanos();
                Check.refusedWith(SandboxDisposed.class, "read after the disposal, once what was buffered was read",
                        () -> {
                            while (System.nanoTime() < deadline) {
                                process.read(READ_SLICE);
                            }
                        });
                process.kill();
                process.close();
                process.close();
                Check.that(!process.isAlive(), "the handle is alive after close");
            } finally {
                process.close();
            }
        }
    }

    // ---- refusal for every backend

    private static void undeclaredStartIsRefused(ProbeContext context) {
        String marker = context.paths().in("undeclared-start-ran");
        if (context.capabilities().contains(Capability.INTERACTIVE_EXEC)) {
            try (SandboxProcess process = start(context, Command.argv("printf", "declared"))) {
                Check.equal("declared", readToEnd(process, ENDING, context).stdoutText(),
                        "what a declared start printed");
            }
            return;
        }
        Check.refusedWith(SandboxOperationNotSupported.class, "start on a backend that does not declare "
                + Capability.INTERACTIVE_EXEC.wire(), () -> start(context, Command.argv("touch", marker)).close());
        Check.that(!context.guest().exists(marker), "the refused start ran anyway: it created " + marker);
    }

    // ---- helpers

    static ProcessOptions options(ProbeContext context) {
        return ProcessOptions.in(context.workingDirectory(), LIFETIME);
    }

    /** A fresh go file's path (not yet made). */
    private static String goFile(ProbeContext context) {
        return context.paths().in("go-" + token());
    }

    /** The probe's options with the go-file children's variables, and {@code more}. */
    private static ProcessOptions survivorOptions(ProbeContext context, String go, Map<String, String> more) {
        Map<String, String> environment = new java.util.LinkedHashMap<>(more);
        environment.put(GO_VARIABLE, go);
        environment.put(CHILD_VARIABLE, AWAIT_GO_CHILD);
        return options(context).withEnvironment(environment);
    }

    private static ProcessOptions survivorOptions(ProbeContext context, String go) {
        return survivorOptions(context, go, Map.of());
    }

    private static SandboxProcess start(ProbeContext context, Command command) {
        return context.sandbox().start(command, options(context));
    }

    /** What the reads took so far. */
    private record Seen(byte[] stdout, byte[] stderr, boolean ended) {
        String stdoutText() {
            return new String(stdout, StandardCharsets.UTF_8);
        }

        String stderrText() {
            return new String(stderr, StandardCharsets.UTF_8);
        }
    }

    /** Reads until {@code enough} holds, both streams ended, or {@code bound} passed; every read within the window. */
    private static Seen readUntil(SandboxProcess process, Predicate<Seen> enough, Duration bound,
            ProbeContext context) {
        ByteArrayOutputStream stdout = new ByteArrayOutputStream();
        ByteArrayOutputStream stderr = new ByteArrayOutputStream();
        long deadline = System.nanoTime() + bound.toNanos();
        Seen seen = new Seen(new byte[0], new byte[0], false);
        while (!enough.test(seen) && !seen.ended() && System.nanoTime() < deadline) {
            ProcessOutput output = process.read(READ_SLICE);
            checkWithinWindow(output, ProcessOptions.DEFAULT_WINDOW_BYTES);
            stdout.writeBytes(output.stdout());
            stderr.writeBytes(output.stderr());
            seen = new Seen(stdout.toByteArray(), stderr.toByteArray(), output.ended());
        }
        return seen;
    }

    /** Reads both streams to their end, which must come within {@code bound}. */
    private static Seen readToEnd(SandboxProcess process, Duration bound, ProbeContext context) {
        Seen seen = readUntil(process, s -> false, bound, context);
        Check.that(seen.ended(), "the output had not ended " + bound.toSeconds() + " s on: stdout "
                + Check.show(seen.stdoutText()) + ", stderr " + Check.show(seen.stderrText()));
        return seen;
    }

    private static void awaitReady(SandboxProcess process, ProbeContext context) {
        Seen seen = readUntil(process, s -> s.stdoutText().contains("ready\n"), ARRIVAL, context);
        Check.that(seen.stdoutText().contains("ready\n"), "the guest did not say it was ready within "
                + ARRIVAL.toSeconds() + " s: stdout " + Check.show(seen.stdoutText()) + ", stderr "
                + Check.show(seen.stderrText()));
    }

    private static void checkWithinWindow(ProcessOutput output, int window) {
        Check.that(output.stdout().length <= window && output.stderr().length <= window, "one read returned "
                + output + ", more than the window of " + window + " bytes per stream");
    }

    /** The exit code within {@code bound}; a process still running then fails the probe. */
    private static OptionalInt waitFor(SandboxProcess process, Duration bound, String what) {
        OptionalInt code = process.waitFor(bound);
        Check.that(code.isPresent(), what + " was still running " + bound.toSeconds() + " s on");
        return code;
    }

    private static void awaitMarkers(ProbeContext context, List<String> markers, List<String> children)
            throws InterruptedException {
        long deadline = System.nanoTime() + ExecSuite.CONTROL_MARKER_WAIT.toNanos();
        for (int child = 0; child < markers.size(); child++) {
            while (!context.guest().exists(markers.get(child))) {
                Check.that(System.nanoTime() < deadline, "the " + children.get(child) + " child wrote no marker "
                        + "within " + ExecSuite.CONTROL_MARKER_WAIT.toSeconds() + " s with no delay (positive "
                        + "control): the guest lacks sh, sleep, touch or setsid, so the probe could not show a "
                        + "survivor");
                TimeUnit.MILLISECONDS.sleep(POLL.toMillis());
            }
        }
    }

    /** Makes the go file, waits the grace a living child needs to see it; then no marker may exist. */
    private static void checkNoSurvivors(ProbeContext context, List<String> markers, List<String> children,
            String go, String when) throws InterruptedException {
        context.guest().plantFile(go, new byte[0]);
        TimeUnit.MILLISECONDS.sleep(MARKER_GRACE.toMillis());
        List<String> survivors = new ArrayList<>();
        for (int child = 0; child < markers.size(); child++) {
            if (context.guest().exists(markers.get(child))) {
                survivors.add(children.get(child));
            }
        }
        Check.that(survivors.isEmpty(), when + " these children lived on and wrote their markers: "
                + String.join(", ", survivors));
    }

    /** The /proc entries of processes carrying {@code token} in their environment, as a fresh exec sees them. */
    private static List<String> environScan(ProbeContext context, String token) {
        ExecResult scan = context.shell(ENVIRON_SCAN_SCRIPT, token);
        Check.equal(0, scan.exitCode(), "exit code of the /proc scan; stderr " + scan.stderrText());
        return scan.stdoutText().lines().filter(line -> line.startsWith("/proc/")).toList();
    }

    private static String token() {
        return UUID.randomUUID().toString().replace("-", "").substring(0, 12);
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

        synchronized int size() {
            return stdout.size() + stderr.size();
        }
    }

    /** POSIX {@code cksum}: CRC-32 (polynomial 0x04C11DB7, not reflected) over the bytes and then their length. */
    static final class PosixCksum {
        private PosixCksum() {
        }

        static String of(byte[] bytes) {
            int crc = 0;
            for (byte b : bytes) {
                crc = step(crc, b);
            }
            for (long length = bytes.length; length != 0; length >>>= 8) {
                crc = step(crc, (byte) length);
            }
            return Long.toString(~crc & 0xFFFFFFFFL);
        }

        private static int step(int crc, byte b) {
            crc ^= (b & 0xFF) << 24;
            for (int bit = 0; bit < 8; bit++) {
                crc = (crc & 0x80000000) != 0 ? (crc << 1) ^ 0x04C11DB7 : crc << 1;
            }
            return crc;
        }
    }
}
