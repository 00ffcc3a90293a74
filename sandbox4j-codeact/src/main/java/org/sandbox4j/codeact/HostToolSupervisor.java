package org.sandbox4j.codeact;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

import org.sandbox4j.core.Command;
import org.sandbox4j.core.EntryKind;
import org.sandbox4j.core.spi.ErrorDetail;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.ExecStream;
import org.sandbox4j.core.GuestPathReclaim;
import org.sandbox4j.core.spi.GuestPaths;
import org.sandbox4j.core.spi.Json;
import org.sandbox4j.core.spi.PosixShell;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxEntry;
import org.sandbox4j.core.SandboxFileNotFound;
import org.sandbox4j.core.SandboxInterrupted;
import org.sandbox4j.core.SandboxTimeoutException;
import org.sandbox4j.core.SandboxTransferCapExceeded;
import org.sandbox4j.core.TransferLimits;
import org.sandbox4j.core.hosttools.DispatchResult;
import org.sandbox4j.core.hosttools.HostToolRun;

/**
 * The host half of the host-tool transport ("dispatch over exec"): runs a program in the guest and
 * answers the host-tool calls it makes through files, until it finishes or the run's timeout ends
 * it. Needs only {@code exec}, {@code writeFile}, {@code stat} and {@code readFile}, so it works on
 * any backend with EXEC, FILES_IN and FILES_OUT.
 *
 * <p>A run: write the shim, the program and the {@link Launcher}; start the launcher; then loop:
 * look for the exit marker (it wins over pending requests), read a window of request files
 * ({@code served+1 …}, starting at one and doubling to {@value #MAX_WINDOW} while whole windows are
 * found), answer them strictly in id order through {@link HostToolRun#dispatch} (every cap is
 * checked there), step over abandoned ids, never re-serve one (the frontier only moves forward),
 * and sleep. After {@code maxDispatchesPerRun + 1} answers (the last is the cap's refusal) it reads
 * no more requests and just waits for the exit marker. On the deadline it stops the program and
 * throws {@link SandboxProgramTimeout}. However the run ends, {@code T} is removed.
 *
 * <p>Every guest file is distrusted: requests are stat-ed then read with the per-response cap,
 * markers with {@value #MARKER_MAX_BYTES} bytes, the output with the run's total response budget; a
 * pid or session id must be ASCII digits above 0 (session: above 1) before a {@code kill} is sent.
 * Every transport call is bounded by the run's deadline (a late answer, the final reads and the
 * stop each get a fresh {@link #GRACE}); a dispatch is never cancelled mid-tool, so a blocking
 * tool can hold a run past its timeout.
 *
 * <p>Beyond the reference: the launcher's exec is held open on a thread of this run while the
 * program runs (see {@link Launcher}), and stopping also ends that exec, which on a backend that
 * gives each command its own process namespace is what actually ends the program.
 */
final class HostToolSupervisor {

    /** Extra time for one transport call after the deadline: a late answer, a final read, the pid lookup, the signal. */
    static final Duration GRACE = Duration.ofSeconds(2);
    /** Bound on removing {@code T}. */
    static final Duration RECLAIM_GRACE = Duration.ofSeconds(10);
    /**
     * The reference's bound on how far a run overruns its timeout, tool bodies aside: a response
     * write, then the final output read, the pid lookup and the signal, each with a fresh
     * {@link #GRACE}, then the reclaim. Not counted, as in the reference: the last look for the exit
     * marker and the session-file read (a {@link #GRACE} each); and, in this port, waiting for the
     * ended launcher's exec to return (one more {@link #GRACE}).
     */
    static final Duration WORST_CASE_OVERHEAD = GRACE.plus(GRACE.multipliedBy(3)).plus(RECLAIM_GRACE);
    /** How often the host looks for requests and the exit marker by default. */
    static final Duration DEFAULT_POLL_INTERVAL = Duration.ofMillis(200);
    /** Bound on removing a whole run directory by default. */
    static final Duration DEFAULT_RECLAIM_RUN_TIMEOUT = Duration.ofSeconds(30);
    /** {@code {"value": } and {@code }} around a delivered value. */
    static final long FRAMING_BYTES = "{\"value\": }".getBytes(StandardCharsets.UTF_8).length;
    /** The most read of the exit marker, the pid file or the session file. */
    static final long MARKER_MAX_BYTES = 32;
    /** The widest window of request files looked for in one poll. */
    static final int MAX_WINDOW = 4;
    /** The most of the program's output quoted in a timeout. */
    static final int TIMEOUT_OUTPUT_CHARS = 2000;
    /** What a failed launcher says when it said nothing itself. */
    static final String LAUNCHER_FAILED = "the launcher did not start the program";

    private static final Logger LOG = System.getLogger(HostToolSupervisor.class.getName());
    private static final AtomicInteger THREADS = new AtomicInteger();

    private HostToolSupervisor() {
    }

    /**
     * Runs {@code programSource} under host-tool supervision.
     *
     * @param sandbox         the sandbox (EXEC, FILES_IN, FILES_OUT)
     * @param run             the run's ledger; its registry's caps bound what is read
     * @param layout          a fresh run's layout
     * @param timeout         the whole run's bound, positive
     * @param pollInterval    how often to look for requests and the exit marker, positive
     * @param interpreterArgv e.g. {@code ["python3"]} or {@code ["node"]}
     * @param shimSource      from {@link HostToolShim}, matching the layout's shim
     * @param programSource   the program, verbatim
     * @return stdout = the program's output (stdout and stderr merged), stderr = a host note or
     *         empty, the program's exit code
     * @throws SandboxProgramTimeout the run's timeout expired; the program was stopped as far as the host could
     * @throws SandboxInterrupted    the calling thread was interrupted; the program was stopped and {@code T} reclaimed
     */
    static ExecResult run(Sandbox sandbox, HostToolRun run, GuestRunLayout layout, Duration timeout,
            Duration pollInterval, List<String> interpreterArgv, String shimSource, byte[] programSource) {
        Objects.requireNonNull(sandbox, "sandbox");
        Objects.requireNonNull(run, "run");
        Objects.requireNonNull(layout, "layout");
        requirePositive(timeout, "timeout");
        requirePositive(pollInterval, "pollInterval");
        Objects.requireNonNull(shimSource, "shimSource");
        Objects.requireNonNull(programSource, "programSource");
        String launcher = Launcher.script(layout, interpreterArgv);
        try (Supervision supervision = new Supervision(sandbox, run, layout, timeout, pollInterval)) {
            return supervision.execute(shimSource.getBytes(StandardCharsets.UTF_8), programSource,
                    launcher.getBytes(StandardCharsets.UTF_8));
        }
    }

    /**
     * Removes a whole run directory ({@code rm -rf} over exec), for the caller once it has read
     * what it needs from {@code work}.
     *
     * @return false when it was left behind (every layout path must be inside the run directory,
     *         which must be at least {@value GuestPathReclaim#MIN_PATH_COMPONENTS} components deep):
     *         a data-retention failure, after which the caller should dispose of the sandbox
     * @throws IllegalArgumentException {@code timeout} not positive, checked first
     */
    static boolean reclaimRun(Sandbox sandbox, GuestRunLayout layout, Duration timeout) {
        requirePositive(timeout, "timeout");
        Objects.requireNonNull(sandbox, "sandbox");
        Objects.requireNonNull(layout, "layout");
        String directory = layout.directory();
        if (!directory.startsWith("/") || hasDotDot(directory)) {
            LOG.log(Level.WARNING, "run directory " + quoteForLog(directory) + " left in place: not an absolute,"
                    + " '..'-free path");
            return false;
        }
        for (String path : layout.allPaths()) {
            if (!path.startsWith("/") || hasDotDot(path) || GuestPaths.relativeTo(path, directory).isEmpty()) {
                LOG.log(Level.WARNING, "run directory " + quoteForLog(directory) + " left in place: layout path "
                        + quoteForLog(path) + " is not inside it");
                return false;
            }
        }
        Optional<String> leftBecause = GuestPathReclaim.reclaim(sandbox, directory, GuestPaths.parent(directory),
                timeout);
        leftBecause.ifPresent(reason -> LOG.log(Level.WARNING, "run directory " + quoteForLog(directory)
                + " left in place: " + reason));
        return leftBecause.isEmpty();
    }

    /** Reclaims with {@link #DEFAULT_RECLAIM_RUN_TIMEOUT}. */
    static boolean reclaimRun(Sandbox sandbox, GuestRunLayout layout) {
        return reclaimRun(sandbox, layout, DEFAULT_RECLAIM_RUN_TIMEOUT);
    }

    /** A transport call that ran out of the time it was given; never escapes {@link #run}. */
    private static final class Stalled extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Stalled(String call) {
            super(call, null, false, false);
        }
    }

    /** What a request file held, as far as the host will read it. */
    private sealed interface Request permits NotYet, TooLarge, Bytes {
    }

    private record NotYet() implements Request {
    }

    private record TooLarge() implements Request {
    }

    private record Bytes(byte[] content) implements Request {
    }

    /**
     * A pid or session id as the guest recorded it.
     *
     * @param exists whether the file was there
     * @param value  its number, when it held ASCII digits (one trailing newline allowed) that fit a long
     */
    private record GuestId(boolean exists, Optional<Long> value) {
    }

    /** The result of trying to stop the program. */
    private record Stop(SandboxProgramTimeout.Outcome outcome, Optional<SandboxProgramTimeout.Reach> reach,
            boolean launcherEnded) {
    }

    /** One run's state; closing it ends its threads. */
    private static final class Supervision implements AutoCloseable {

        private final Sandbox sandbox;
        private final HostToolRun run;
        private final GuestRunLayout layout;
        private final Duration timeout;
        private final Duration pollInterval;
        private final TransferLimits limits;
        private final int allowance;
        private final long started = System.nanoTime();
        private final long deadline;
        private final ExecutorService calls;
        private final StringBuffer launcherStdout = new StringBuffer();
        private Future<ExecResult> launcher;
        /** Counted down when the launcher's exec has returned or thrown, cancelled or not. */
        private final CountDownLatch launcherReturned = new CountDownLatch(1);
        /** The highest id answered or stepped over: the frontier, which only moves forward. */
        private int served;
        private int answered;
        private int window = 1;
        private boolean stoppedReading;
        /** Set when the launcher's command failed after starting the program. */
        private boolean launcherLost;
        /** Set once the program has been stopped or seen to finish, so the cleanup does not stop it again. */
        private boolean settled;

        Supervision(Sandbox sandbox, HostToolRun run, GuestRunLayout layout, Duration timeout, Duration pollInterval) {
            this.sandbox = sandbox;
            this.run = run;
            this.layout = layout;
            this.timeout = timeout;
            this.pollInterval = pollInterval;
            this.limits = run.registry().responseLimits();
            this.allowance = run.registry().maxDispatchesPerRun() + 1;
            this.deadline = started + saturatedNanos(timeout);
            this.calls = Executors.newCachedThreadPool(daemonThreads());
        }

        ExecResult execute(byte[] shim, byte[] program, byte[] launcherScript) {
            boolean ownTimeout = false;
            try {
                try {
                    bounded("writing the shim", deadline, () -> write(layout.shim(), shim));
                    bounded("writing the program", deadline, () -> write(layout.program(), program));
                    bounded("writing the launcher", deadline, () -> write(layout.launcher(), launcherScript));
                } catch (Stalled stalled) {
                    settled = true;
                    ownTimeout = true;
                    throw new SandboxProgramTimeout("The program did not start within " + seconds(timeout)
                            + " seconds: " + stalled.getMessage() + " ran out of time, so no launcher ran.",
                            SandboxProgramTimeout.Outcome.ABSENT, Optional.empty(), false, Optional.empty(),
                            "the program never started.");
                }
                startLauncher();
                try {
                    return supervise();
                } catch (SandboxProgramTimeout timedOut) {
                    ownTimeout = true;
                    throw timedOut;
                }
            } finally {
                cleanUp(ownTimeout);
            }
        }

        private ExecResult supervise() {
            while (true) {
                try {
                    if (System.nanoTime() - deadline >= 0) {
                        return expire(Optional.empty());
                    }
                    if (markerPresent(deadline)) {
                        return complete();
                    }
                    Optional<ExecResult> launcherFailure = launcherFailure();
                    if (launcherFailure.isPresent()) {
                        settled = true;
                        return launcherFailure.get();
                    }
                    serveWindow();
                    sleep(Math.min(saturatedNanos(pollInterval), deadline - System.nanoTime()));
                } catch (Stalled stalled) {
                    return expire(Optional.of(stalled.getMessage()));
                }
            }
        }

        // ------------------------------------------------------------ the launcher

        private void startLauncher() {
            // Bounded by the backend too, so a supervisor that never returns still cannot leave it running for ever.
            Duration bound = timeout.plus(WORST_CASE_OVERHEAD);
            ExecOptions options = ExecOptions.in(layout.directory(), bound).withListener((stream, chunk) -> {
                if (stream == ExecStream.STDOUT && launcherStdout.length() < Launcher.SESSION_MARKER.length() * 4) {
                    launcherStdout.append(new String(chunk, StandardCharsets.UTF_8));
                }
            });
            Command command = Command.shell("sh " + PosixShell.quote(layout.launcher()));
            launcher = calls.submit(() -> {
                try {
                    return sandbox.exec(command, options);
                } finally {
                    launcherReturned.countDown();
                }
            });
        }

        /** The launcher's own result when it failed before starting the program: no supervision then. */
        private Optional<ExecResult> launcherFailure() {
            if (!launcher.isDone() || launcher.isCancelled()) {
                return Optional.empty();
            }
            ExecResult result;
            try {
                result = launcher.get();
            } catch (ExecutionException e) {
                if (e.getCause() instanceof SandboxTimeoutException) {
                    // Its own bound is later than the run's; the loop's deadline handles this.
                    return Optional.empty();
                }
                if (launcherLostAfterStart(ErrorDetail.of(e.getCause()))) {
                    return Optional.empty();
                }
                throw propagate(e.getCause());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new SandboxInterrupted("interrupted while supervising a host-tool run", e);
            }
            if (result.exitCode() == 0 || launcherLostAfterStart("it exited " + result.exitCode())) {
                return Optional.empty();
            }
            String stderr = result.stderrText().isBlank() ? LAUNCHER_FAILED : result.stderrText();
            return Optional.of(new ExecResult(result.stdout(), stderr.getBytes(StandardCharsets.UTF_8),
                    result.exitCode(), elapsed()));
        }

        /**
         * Whether a launcher that ended badly had started the program first. A backend may drop a long
         * command (a remote exec with a time limit) while the program, detached in a session of its own,
         * runs on: supervision then goes on through the files alone.
         */
        private boolean launcherLostAfterStart(String how) {
            if (!launcherLost && programStarted()) {
                launcherLost = true;
                LOG.log(Level.WARNING, "the launcher's command ended badly after it started the program ("
                        + how + "); supervising through the files");
            }
            return launcherLost;
        }

        /** Whether the launcher got as far as starting the program: it announced a session or a pid was recorded. */
        private boolean programStarted() {
            return madeSession() || bounded("looking for the pid file", deadline,
                    () -> sandbox.stat(layout.pid(), layout.directory())).isPresent();
        }

        /** Whether the launcher announced a session: only its own stdout counts, never the guest's session file. */
        private boolean madeSession() {
            return launcherStdout.toString().lines().anyMatch(Launcher.SESSION_MARKER::equals);
        }

        /** Ends the launcher's exec (the backend kills what the command started); whether this call ended it. */
        private boolean endLauncher() {
            if (launcher == null || launcher.isDone()) {
                return false;
            }
            // Interrupting the exec makes the backend kill the command; cancel() itself returns at once.
            launcher.cancel(true);
            try {
                boolean returned = launcherReturned.await(GRACE.toNanos(), TimeUnit.NANOSECONDS);
                if (!returned) {
                    LOG.log(Level.WARNING, "the launcher's exec did not return within " + GRACE.toSeconds()
                            + " s of being ended");
                }
                return returned;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new SandboxInterrupted("interrupted while ending a host-tool run's launcher", e);
            }
        }

        // ------------------------------------------------------------ requests

        private void serveWindow() {
            if (stoppedReading) {
                return;
            }
            int found = 0;
            for (int i = 0; i < window; i++) {
                int id = served + 1;
                if (id > HostToolShim.MAX_CALL_ID) {
                    break;
                }
                Request request = readRequest(id);
                if (request instanceof NotYet) {
                    break;
                }
                if (System.nanoTime() - deadline >= 0) {
                    // Discovered too late to dispatch: the tool would run for a program about to be stopped.
                    return;
                }
                found++;
                answer(id, request);
                if (stoppedReading) {
                    return;
                }
            }
            window = found == window ? Math.min(window * 2, MAX_WINDOW) : 1;
        }

        private Request readRequest(int id) {
            String path = layout.request(id);
            Optional<SandboxEntry> entry = bounded("looking for request " + id, deadline,
                    () -> sandbox.stat(path, layout.directory()));
            if (entry.isEmpty() || entry.get().kind() != EntryKind.FILE || entry.get().sizeBytes().orElse(1) == 0) {
                return new NotYet();
            }
            if (entry.get().sizeBytes().isEmpty() || entry.get().sizeBytes().getAsLong() > limits.maxBytesPerFile()) {
                return new TooLarge();
            }
            byte[] content;
            try {
                content = bounded("reading request " + id, deadline,
                        () -> sandbox.readFile(path, layout.directory(), limits.maxBytesPerFile()));
            } catch (SandboxTransferCapExceeded tooLarge) {
                return new TooLarge();
            } catch (SandboxFileNotFound gone) {
                return new NotYet();
            }
            return content.length > limits.maxBytesPerFile() ? new TooLarge() : new Bytes(content);
        }

        private void answer(int id, Request request) {
            Optional<String> response;
            if (request instanceof TooLarge) {
                response = Optional.of(refusal("Error: this host-tool request is larger than the "
                        + limits.maxBytesPerFile() + "-byte cap; pass less, or write the data to a file and pass"
                        + " its name."));
            } else {
                response = respond(((Bytes) request).content());
            }
            served = id;
            if (response.isEmpty()) {
                LOG.log(Level.DEBUG, () -> "host-tool call " + id + " was abandoned by the guest; stepped over");
                return;
            }
            long writeBy = Math.max(deadline, System.nanoTime() + GRACE.toNanos());
            byte[] bytes = response.get().getBytes(StandardCharsets.UTF_8);
            bounded("answering request " + id, writeBy, () -> write(layout.response(id), bytes));
            answered++;
            if (answered >= allowance) {
                stoppedReading = true;
                LOG.log(Level.INFO, "host-tool run answered " + answered + " requests, the dispatch cap plus one;"
                        + " reading no more requests and waiting for the program to finish");
            }
        }

        /** The response to one request, or empty for an abandoned id. */
        private Optional<String> respond(byte[] content) {
            Object document;
            try {
                String text = StandardCharsets.UTF_8.newDecoder()
                        .onMalformedInput(CodingErrorAction.REPORT)
                        .onUnmappableCharacter(CodingErrorAction.REPORT)
                        .decode(ByteBuffer.wrap(content)).toString();
                document = Json.parse(text);
            } catch (CharacterCodingException | Json.Malformed e) {
                return Optional.of(refusal("Error: this host-tool request is not valid JSON."));
            }
            if (!(document instanceof Map<?, ?> object)) {
                return Optional.of(refusal("Error: a host-tool request must be a JSON object."));
            }
            if (Boolean.TRUE.equals(object.get("abandoned"))) {
                return Optional.empty();
            }
            DispatchResult result = run.dispatch(object.get("name"), object.get("arguments"), FRAMING_BYTES);
            return Optional.of(result.ok() ? "{\"value\": " + result.valueJson() + "}" : refusal(result.refusal()));
        }

        private static String refusal(String sentence) {
            return "{\"refusal\": " + Json.quote(sentence) + "}";
        }

        // ------------------------------------------------------------ the end of a run

        private ExecResult complete() {
            settled = true;
            long readBy = Math.max(deadline, System.nanoTime() + GRACE.toNanos());
            int exitCode = readExitCode(readBy);
            readBy = Math.max(deadline, System.nanoTime() + GRACE.toNanos());
            String note = "";
            byte[] output = new byte[0];
            try {
                output = readOutput(readBy);
            } catch (SandboxTransferCapExceeded tooLarge) {
                note = "the program's output was larger than " + limits.maxTotalBytes() + " bytes, so it was not read";
            } catch (Stalled stalled) {
                note = "the program finished, but its output could not be read in time";
            }
            return new ExecResult(output, note.getBytes(StandardCharsets.UTF_8), exitCode, elapsed());
        }

        private int readExitCode(long readBy) {
            byte[] marker;
            try {
                marker = bounded("reading the exit marker", readBy,
                        () -> sandbox.readFile(layout.exitCode(), layout.directory(), MARKER_MAX_BYTES));
            } catch (Stalled | SandboxTransferCapExceeded | SandboxFileNotFound unreadable) {
                return 1;
            }
            try {
                return Integer.parseInt(new String(marker, StandardCharsets.UTF_8).strip());
            } catch (NumberFormatException unparsable) {
                return 1;
            }
        }

        /** The output as UTF-8 (malformed bytes repaired); empty when the program left no output file. */
        private byte[] readOutput(long readBy) {
            try {
                byte[] raw = bounded("reading the output", readBy,
                        () -> sandbox.readFile(layout.output(), layout.directory(), limits.maxTotalBytes()));
                return new String(raw, StandardCharsets.UTF_8).getBytes(StandardCharsets.UTF_8);
            } catch (SandboxFileNotFound none) {
                return new byte[0];
            }
        }

        private ExecResult expire(Optional<String> stalledCall) {
            long lookBy = System.nanoTime() + GRACE.toNanos();
            try {
                if (markerPresent(lookBy)) {
                    return complete();
                }
            } catch (Stalled stillStalled) {
                // Could not look; the program is treated as still running.
            }
            Optional<String> output = Optional.empty();
            String note;
            try {
                String text = new String(readOutput(System.nanoTime() + GRACE.toNanos()), StandardCharsets.UTF_8);
                output = Optional.of(text.length() <= TIMEOUT_OUTPUT_CHARS ? text
                        : text.substring(0, TIMEOUT_OUTPUT_CHARS) + "\n… (cut at " + TIMEOUT_OUTPUT_CHARS + " characters)");
                note = "";
            } catch (SandboxTransferCapExceeded tooLarge) {
                note = "the output was larger than " + limits.maxTotalBytes() + " bytes.";
            } catch (Stalled stalled) {
                note = "reading it ran out of time.";
            } catch (SandboxInterrupted interrupted) {
                throw interrupted;
            } catch (RuntimeException failed) {
                LOG.log(Level.WARNING, "could not read a timed-out program's output: " + ErrorDetail.of(failed));
                note = "it could not be read.";
            }
            boolean launcherWasRunning = launcher != null && !launcher.isDone();
            Stop stop = stopProgram();
            SandboxProgramTimeout.Outcome outcome = stop.outcome();
            if (outcome == SandboxProgramTimeout.Outcome.ABSENT) {
                // The launcher ran, so "absent" means it never recorded a pid, or is not known to have started it.
                outcome = launcherWasRunning ? SandboxProgramTimeout.Outcome.UNKNOWN
                        : SandboxProgramTimeout.Outcome.UNRECORDED;
            }
            String situation = stalledCall
                    .map(call -> "The program did not finish within " + seconds(timeout) + " seconds (" + call
                            + " ran out of time).")
                    .orElse("The program did not finish within " + seconds(timeout) + " seconds.");
            if (outcome == SandboxProgramTimeout.Outcome.UNKNOWN) {
                situation += " Whether it started is not known.";
            }
            throw new SandboxProgramTimeout(situation, outcome, stop.reach(), stop.launcherEnded(), output, note);
        }

        /**
         * Sends SIGKILL to the program's session (when the launcher announced one and the guest's
         * session file holds digits above 1) or else to its pid (digits above 0), each lookup and the
         * signal with a fresh {@link #GRACE}; then ends the launcher's exec. Never throws but for
         * interruption.
         */
        private Stop stopProgram() {
            settled = true;
            SandboxProgramTimeout.Outcome outcome;
            Optional<SandboxProgramTimeout.Reach> reach = Optional.empty();
            GuestId pid;
            try {
                pid = readId(layout.pid(), "the pid file");
                if (!pid.exists()) {
                    return new Stop(SandboxProgramTimeout.Outcome.ABSENT, Optional.empty(), endLauncher());
                }
                outcome = SandboxProgramTimeout.Outcome.REFUSED;
            } catch (SandboxInterrupted interrupted) {
                throw interrupted;
            } catch (RuntimeException couldNotLook) {
                LOG.log(Level.WARNING, "could not look for a timed-out program's pid: " + describe(couldNotLook));
                return new Stop(SandboxProgramTimeout.Outcome.UNKNOWN, Optional.empty(), endLauncher());
            }
            if (pid.value().isPresent() && pid.value().get() > 0) {
                String target = Long.toString(pid.value().get());
                SandboxProgramTimeout.Reach aimed = SandboxProgramTimeout.Reach.PROGRAM;
                if (madeSession()) {
                    Optional<Long> session = sessionId();
                    if (session.isPresent() && session.get() > 1) {
                        target = "-" + session.get();
                        aimed = SandboxProgramTimeout.Reach.GROUP;
                    }
                }
                if (signal(target)) {
                    outcome = SandboxProgramTimeout.Outcome.SENT;
                    reach = Optional.of(aimed);
                }
            } else {
                LOG.log(Level.WARNING, "the guest's pid file does not hold a usable pid; no signal sent");
            }
            return new Stop(outcome, reach, endLauncher());
        }

        private Optional<Long> sessionId() {
            try {
                return readId(layout.session(), "the session file").value();
            } catch (SandboxInterrupted interrupted) {
                throw interrupted;
            } catch (RuntimeException unreadable) {
                LOG.log(Level.WARNING, "could not read the program's session id: " + describe(unreadable));
                return Optional.empty();
            }
        }

        /** Reads a guest-written id; a stat failure propagates, a read failure reads as no usable value. */
        private GuestId readId(String path, String what) {
            Optional<SandboxEntry> entry = bounded("looking for " + what, System.nanoTime() + GRACE.toNanos(),
                    () -> sandbox.stat(path, layout.directory()));
            if (entry.isEmpty()) {
                return new GuestId(false, Optional.empty());
            }
            byte[] raw;
            try {
                raw = bounded("reading " + what, System.nanoTime() + GRACE.toNanos(),
                        () -> sandbox.readFile(path, layout.directory(), MARKER_MAX_BYTES));
            } catch (SandboxInterrupted interrupted) {
                throw interrupted;
            } catch (RuntimeException unreadable) {
                LOG.log(Level.WARNING, "could not read " + what + ": " + describe(unreadable));
                return new GuestId(true, Optional.empty());
            }
            return new GuestId(true, parseId(raw));
        }

        /** Sends SIGKILL to {@code target} (digits, or {@code -} and digits); whether the guest accepted it. */
        private boolean signal(String target) {
            Command kill = Command.shell("kill -KILL " + PosixShell.quote(target) + " 2>/dev/null");
            try {
                // The exec's own bound is the grace too: its SandboxTimeoutException means that grace ran out.
                ExecResult result = bounded("signalling the program", System.nanoTime() + GRACE.toNanos(),
                        () -> sandbox.exec(kill, ExecOptions.in(layout.directory(), GRACE)));
                return result.exitCode() == 0;
            } catch (SandboxInterrupted interrupted) {
                throw interrupted;
            } catch (RuntimeException failed) {
                LOG.log(Level.WARNING, "could not signal the program: " + describe(failed));
                return false;
            }
        }

        private void cleanUp(boolean ownTimeout) {
            // Cleanup must run even when the caller was interrupted; the interruption is restored after.
            boolean interrupted = Thread.interrupted();
            try {
                if (!settled && !ownTimeout && launcher != null) {
                    stopIfRunning();
                }
                awaitLauncher();
                reclaimTransport();
            } finally {
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        /** After a failure that was not the run's own timeout: stop the program unless it has finished. */
        private void stopIfRunning() {
            try {
                if (markerPresent(System.nanoTime() + GRACE.toNanos())) {
                    return;
                }
            } catch (SandboxInterrupted | Stalled | SandboxTimeoutException couldNotLook) {
                // Treat as still running.
            } catch (RuntimeException couldNotLook) {
                LOG.log(Level.WARNING, "could not look for the exit marker after a failure: " + describe(couldNotLook));
            }
            try {
                Stop stop = stopProgram();
                LOG.log(Level.INFO, "host-tool run failed; its program was stopped: " + stop);
            } catch (SandboxInterrupted interrupted) {
                LOG.log(Level.WARNING, "interrupted while stopping a failed run's program");
            }
        }

        /** The launcher returns once the program has finished; one that does not within the grace is ended. */
        private void awaitLauncher() {
            if (launcher == null || launcher.isDone()) {
                return;
            }
            try {
                launcher.get(GRACE.toNanos(), TimeUnit.NANOSECONDS);
            } catch (TimeoutException stillRunning) {
                LOG.log(Level.INFO, "the launcher outlived its program by " + GRACE.toSeconds() + " s; ending it");
                endLauncher();
            } catch (ExecutionException | CancellationException ended) {
                // Its outcome no longer matters.
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                endLauncher();
            }
        }

        /**
         * Removes {@code T}, guarded: every transport file directly in it, {@code T} and {@code work}
         * apart, {@code T} not the run directory, absolute, no {@code ..}, deep enough, inside the run.
         */
        private void reclaimTransport() {
            String transport = layout.transport();
            Optional<String> refusal = transportReclaimRefusal(layout);
            if (refusal.isPresent()) {
                LOG.log(Level.WARNING, "host-tool transport directory " + quoteForLog(transport) + " left in place: "
                        + refusal.get());
                return;
            }
            try {
                Optional<String> leftBecause = GuestPathReclaim.reclaim(sandbox, transport, layout.directory(),
                        RECLAIM_GRACE);
                leftBecause.ifPresent(reason -> LOG.log(Level.WARNING, "host-tool transport directory "
                        + quoteForLog(transport) + " left in place: " + reason));
            } catch (SandboxInterrupted interrupted) {
                LOG.log(Level.WARNING, "interrupted while reclaiming host-tool transport directory "
                        + quoteForLog(transport));
            }
        }

        // ------------------------------------------------------------ transport calls

        private boolean markerPresent(long by) {
            return bounded("looking for the exit marker", by, () -> sandbox.stat(layout.exitCode(),
                    layout.directory())).isPresent();
        }

        private Void write(String path, byte[] content) {
            sandbox.writeFile(path, content, layout.directory());
            return null;
        }

        /**
         * Runs one transport call bounded by {@code by} (a {@link System#nanoTime} instant): on expiry
         * the call is cancelled and {@link Stalled} names it. A backend's own failure propagates as is.
         */
        private <T> T bounded(String call, long by, Callable<T> body) {
            long remaining = by - System.nanoTime();
            if (remaining <= 0) {
                throw new Stalled(call);
            }
            Future<T> future = calls.submit(body);
            try {
                return future.get(remaining, TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                future.cancel(true);
                throw new Stalled(call);
            } catch (ExecutionException e) {
                throw propagate(e.getCause());
            } catch (InterruptedException e) {
                future.cancel(true);
                Thread.currentThread().interrupt();
                throw new SandboxInterrupted("interrupted while " + call + " for a host-tool run", e);
            }
        }

        private Duration elapsed() {
            return Duration.ofNanos(System.nanoTime() - started);
        }

        @Override
        public void close() {
            if (launcher != null && !launcher.isDone()) {
                launcher.cancel(true);
            }
            calls.shutdownNow();
        }
    }

    /** Why {@code T} must not be removed, if it must not. */
    static Optional<String> transportReclaimRefusal(GuestRunLayout layout) {
        String transport = layout.transport();
        String directory = layout.directory();
        for (String file : layout.transportFiles()) {
            if (!GuestPaths.parent(file).equals(transport) || hasDotDot(file)) {
                return Optional.of("transport file " + quoteForLog(file) + " is not directly in it");
            }
        }
        if (GuestPaths.relativeTo(transport, layout.work()).isPresent()
                || GuestPaths.relativeTo(layout.work(), transport).isPresent()) {
            return Optional.of("it overlaps the work directory " + quoteForLog(layout.work()));
        }
        if (!transport.startsWith("/") || hasDotDot(transport)) {
            return Optional.of("it is not an absolute, '..'-free path");
        }
        Optional<String> inside = GuestPaths.relativeTo(transport, directory);
        if (inside.isEmpty() || inside.get().isEmpty()) {
            return Optional.of(inside.isEmpty() ? "it is not inside the run directory " + quoteForLog(directory)
                    : "it is the run directory itself");
        }
        if (GuestPaths.directoryChain(transport).size() < GuestPathReclaim.MIN_PATH_COMPONENTS) {
            return Optional.of("it is too close to the root");
        }
        return Optional.empty();
    }

    /** ASCII digits (one trailing newline allowed) that fit a long; anything else is empty. */
    static Optional<Long> parseId(byte[] raw) {
        int length = raw.length;
        if (length > 0 && raw[length - 1] == '\n') {
            length--;
        }
        if (length == 0 || length > String.valueOf(Long.MAX_VALUE).length() - 1) {
            return Optional.empty();
        }
        long value = 0;
        for (int i = 0; i < length; i++) {
            if (raw[i] < '0' || raw[i] > '9') {
                return Optional.empty();
            }
            value = value * 10 + (raw[i] - '0');
        }
        return Optional.of(value);
    }

    private static boolean hasDotDot(String path) {
        for (String part : path.split("/", -1)) {
            if (part.equals("..")) {
                return true;
            }
        }
        return false;
    }

    private static void requirePositive(Duration duration, String what) {
        Objects.requireNonNull(duration, what);
        if (duration.isNegative() || duration.isZero()) {
            throw new IllegalArgumentException(what + " must be positive, not " + duration);
        }
    }

    private static long saturatedNanos(Duration duration) {
        try {
            return duration.toNanos();
        } catch (ArithmeticException tooLong) {
            return Long.MAX_VALUE / 4;
        }
    }

    private static String seconds(Duration duration) {
        return java.math.BigDecimal.valueOf(duration.toMillis(), 3).stripTrailingZeros().toPlainString();
    }

    private static void sleep(long nanos) {
        if (nanos <= 0) {
            return;
        }
        try {
            TimeUnit.NANOSECONDS.sleep(nanos);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SandboxInterrupted("interrupted while supervising a host-tool run", e);
        }
    }

    private static RuntimeException propagate(Throwable cause) {
        if (cause instanceof RuntimeException runtime) {
            return runtime;
        }
        if (cause instanceof Error error) {
            throw error;
        }
        return new IllegalStateException("a transport call failed: " + ErrorDetail.of(cause), cause);
    }

    private static String describe(Throwable error) {
        return error instanceof Stalled ? error.getMessage() + " ran out of time" : ErrorDetail.of(error);
    }

    private static String quoteForLog(String path) {
        return "'" + path + "'";
    }

    private static ThreadFactory daemonThreads() {
        return body -> {
            Thread thread = new Thread(body, "sandbox4j-host-tools-" + THREADS.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }
}
