package org.sandbox4j.aca;

import java.lang.System.Logger.Level;
import java.math.BigDecimal;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.EntryKind;
import org.sandbox4j.core.spi.ErrorDetail;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.ExecStream;
import org.sandbox4j.core.spi.GuestPaths;
import org.sandbox4j.core.spi.GuestText;
import org.sandbox4j.core.spi.PosixShell;
import org.sandbox4j.core.HostCeilings;
import org.sandbox4j.core.SandboxEntry;
import org.sandbox4j.core.SandboxDisposed;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.TransferLimits;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxFileException;
import org.sandbox4j.core.SandboxFileNotFound;
import org.sandbox4j.core.SandboxIsADirectory;
import org.sandbox4j.core.SandboxOutputSizeUnknown;
import org.sandbox4j.core.SandboxPathNotConfined;
import org.sandbox4j.core.SandboxTimeoutException;
import org.sandbox4j.core.spi.ExecCapture;
import org.sandbox4j.core.spi.ExecRefusals;
import org.sandbox4j.core.spi.ConfinedFiles;
import org.sandbox4j.core.spi.FileRefusals;
import java.util.function.Function;
import java.util.HashMap;
import org.sandbox4j.core.spi.ConfinedFilesSandbox;

/**
 * A handle on one ACA sandbox (its id). Every file method confines its path and walks the
 * ancestors with the service's raw, no-follow {@code files/stat}; exec runs through
 * {@link AcaExecScript}. Handles are cheap and thread-safe.
 */
final class AcaSandbox implements ConfinedFilesSandbox {

    /** Time the request may take beyond the caller's bound, for the wrapper to report. */
    static final Duration EXEC_GRACE = Duration.ofSeconds(30);
    /** Where uploaded stdin waits for its exec (outside any work dir; removed by the wrapper). */
    static final String STDIN_DIRECTORY = "/var/tmp";
    private static final int STDIN_NAME_BYTES = 12;
    /** What an exec's answer holds besides the two encoded streams: markers, exit line, the service's fields. */
    static final long EXEC_ANSWER_SLACK = 1024 * 1024;
    /** Where commands the backend runs for itself start. */
    private static final String ROOT = "/";
    private static final SecureRandom RANDOM = new SecureRandom();
    /** An exit code at or above this is 128 + the signal that killed the command. */
    private static final int SIGNALLED = 128;
    /** How the wrapper ends a timed-out or over-cap command. */
    private static final String KILLED = "was killed with its process group";
    private static final System.Logger LOG = System.getLogger(AcaSandbox.class.getName());

    private final AcaBackend backend;
    private final AcaClient client;
    private final String id;
    /** Held to the spec's caps: every write and read is checked before a byte moves. */
    private final ServiceFiles files;

    AcaSandbox(AcaBackend backend, String id) {
        this(backend, id, TransferLimits.DEFAULT, TransferLimits.DEFAULT);
    }

    private AcaSandbox(AcaBackend backend, String id, TransferLimits filesIn, TransferLimits filesOut) {
        this.backend = backend;
        this.client = backend.client();
        this.id = id;
        this.files = new ServiceFiles(filesIn, filesOut);
    }

    /** This handle, held to {@code spec}'s per-file caps. */
    AcaSandbox limitedTo(SandboxSpec spec) {
        return new AcaSandbox(backend, id, spec.filesIn(), spec.filesOut());
    }

    String id() {
        return id;
    }

    /**
     * Makes the spec's work dir, so the first command of a conversation runs in it: the guest's own
     * {@code mkdir -p}, at the guest user's authority (no path of the host's is involved).
     */
    void makeWorkDir(String workDir) {
        ExecResult made = exec(Command.argv("mkdir", "-p", "--", workDir),
                ExecOptions.in(ROOT, backend.config().readTimeout()));
        if (made.exitCode() != 0) {
            throw new SandboxException("backend '" + backend.name() + "' could not make the work dir "
                    + GuestText.quote(workDir) + " in sandbox " + id + " (mkdir exited " + made.exitCode() + ": "
                    + GuestText.quote(made.stderrText().strip()) + "); choose a work dir the image's user may "
                    + "create, or dispose of the key and acquire again");
        }
    }

    // ---------------------------------------------------------------- exec

    @Override
    public ExecResult exec(Command command, ExecOptions options) {
        Objects.requireNonNull(command, "command");
        Objects.requireNonNull(options, "options");
        long started = System.nanoTime();
        Optional<String> stdinPath = Optional.empty();
        if (options.stdin().isPresent()) {
            String path = STDIN_DIRECTORY + "/sandbox4j-stdin-" + random();
            answer(resumingOnce(() -> client.write(id, path, options.stdin().get())), "upload the stdin of a command");
            stdinPath = Optional.of(path);
        }
        String shellLine = command.toShellLine();
        String line = AcaExecScript.line(shellLine, options.workingDirectory(), options.environment(),
                options.timeout(), options.outputCapBytes(), stdinPath);
        AcaHttp.Response response;
        // When the command was last sent: a resume before a second send is not the command's time.
        long[] sent = {started};
        try {
            response = resumingOnce(() -> {
                sent[0] = System.nanoTime();
                // The wrapper enters the working directory itself, so it can say why it could not.
                return client.exec(id, line, ROOT, options.timeout().plus(EXEC_GRACE),
                        answerBound(options.outputCapBytes()));
            });
        } catch (AcaHttp.AcaTimeout timedOut) {
            throw timeout(command, options);
        } catch (AcaHttp.AnswerTooLarge tooLarge) {
            // The wrapper refuses output over the cap itself; a bigger answer means the guest's tools did not obey it.
            throw ExecRefusals.outputCapExceeded(shellLine, options.outputCapBytes(), "its answer was refused unread");
        }
        Duration elapsed = Duration.ofNanos(System.nanoTime() - sent[0]);
        if (response.status() == 504) {
            if (elapsed.compareTo(options.timeout()) < 0) {
                // The service's own per-request cap ended the request, not the caller's bound.
                LOG.log(Level.WARNING, () -> "backend '" + backend.name() + "': exec in " + id + " answered 504 after "
                        + elapsed.toMillis() + " ms: " + AcaHttp.bodyForLog(response));
                throw new SandboxException("backend '" + backend.name() + "': the service ended the request for "
                        + GuestText.quote(shellLine) + " after " + elapsed.toSeconds() + " s, before its "
                        + "timeout of " + options.timeout().toSeconds() + " s (its own per-request cap); the command "
                        + "runs on until that timeout kills it: use a shorter timeout, or start long work in the "
                        + "background and poll for its result");
            }
            throw timeout(command, options);
        }
        if (response.status() == 400) {
            LOG.log(Level.WARNING, () -> "backend '" + backend.name() + "': exec in " + id + " refused: "
                    + AcaHttp.bodyForLog(response));
            throw new SandboxException("backend '" + backend.name() + "': the service refused to run "
                    + GuestText.quote(shellLine) + " (400, details in the log); nothing ran: check the sandbox's "
                    + "state with the service, or acquire a fresh one");
        }
        Map<String, Object> result = client.object(answer(response, "run a command"));
        Object code = result.get("exitCode");
        String stdout = Objects.requireNonNullElse(AcaJson.text(result, "stdout"), "");
        if (code instanceof BigDecimal number && number.intValue() >= SIGNALLED && stdout.isEmpty()
                && backend.wasDisposedOf(id)) {
            // Killed before the wrapper printed anything, with its sandbox: not the wrapper failing to start.
            throw disposedWhileRunning(shellLine);
        }
        if (code instanceof BigDecimal number && number.intValue() != 0 && stdout.isEmpty()) {
            throw new SandboxException("backend '" + backend.name() + "': the exec wrapper could not start (exit "
                    + number.intValue() + ", " + GuestText.quote(Objects.requireNonNullElse(AcaJson.text(result,
                            "stderr"), "").strip()) + "); the image needs a POSIX sh with "
                    + String.join(" ", AcaExecScript.REQUIRED_COMMANDS));
        }
        AcaExecScript.Outcome outcome = AcaExecScript.parse(stdout);
        if (outcome instanceof AcaExecScript.Capped) {
            throw ExecRefusals.outputCapExceeded(shellLine, options.outputCapBytes(), KILLED);
        }
        if (outcome instanceof AcaExecScript.WorkingDirectory refused) {
            throw workingDirectoryRefusal(refused.why(), options.workingDirectory());
        }
        if (outcome instanceof AcaExecScript.Missing missing) {
            throw new SandboxException("backend '" + backend.name() + "': the image of sandbox " + id + " lacks '"
                    + missing.command() + "'; use an image with a POSIX sh and "
                    + String.join(" ", AcaExecScript.REQUIRED_COMMANDS));
        }
        if (outcome instanceof AcaExecScript.Unreadable unreadable) {
            LOG.log(Level.WARNING, () -> "backend '" + backend.name() + "': unreadable exec output from " + id + ": "
                    + unreadable.why());
            throw new SandboxException("backend '" + backend.name() + "': the command's output could not be read "
                    + "back (details in the log)");
        }
        AcaExecScript.Finished finished = (AcaExecScript.Finished) outcome;
        // A kill's exit code on a sandbox disposed of meanwhile is not the command's word.
        if (finished.exitCode() >= SIGNALLED && backend.wasDisposedOf(id)) {
            throw disposedWhileRunning(shellLine);
        }
        // Decided from the wrapper's record (the command did not finish, its group was killed) and the clock, never
        // from the code: a command may exit 137 or 124 by itself. A group killed before the bound by something else
        // (the command's own kill 0, the kernel's OOM killer) is an ordinary result with timeout's code.
        if (finished.killed() && elapsed.compareTo(options.timeout()) >= 0) {
            throw timeout(command, options);
        }
        // The whole result arrives at once: it goes through the one capture (the cap, the listener) all the same.
        ExecCapture capture = new ExecCapture(options, backend.name());
        capture.offer(ExecStream.STDOUT, finished.stdout());
        capture.offer(ExecStream.STDERR, finished.stderr());
        Optional<RuntimeException> refused = capture.refusal(shellLine, KILLED);
        if (refused.isPresent()) {
            throw refused.get();
        }
        return capture.result(finished.exitCode(), elapsed);
    }

    private SandboxDisposed disposedWhileRunning(String shellLine) {
        return new SandboxDisposed("backend '" + backend.name() + "': sandbox " + id + " was disposed of while "
                + GuestText.quote(shellLine) + " ran; acquire again for a fresh one");
    }

    /** The wrapper's report that it could not enter the working directory: nothing ran. */
    private SandboxException workingDirectoryRefusal(String why, String workingDirectory) {
        switch (why) {
            case AcaExecScript.WORKDIR_MISSING:
                return ExecRefusals.workingDirectoryMissing(workingDirectory);
            case AcaExecScript.WORKDIR_NOT_A_DIRECTORY:
                return ExecRefusals.workingDirectoryNotADirectory(workingDirectory);
            default:
                return ExecRefusals.workingDirectoryNotEnterable(workingDirectory);
        }
    }

    /**
     * The most an exec's answer may hold: the wrapper prints both streams base64-encoded (4 bytes per
     * 3, a newline every 76) and JSON escapes each newline, so twice the cap, plus room for the
     * markers and the service's fields.
     */
    static long answerBound(long outputCap) {
        return Math.min(outputCap, Long.MAX_VALUE / 4) * 2 + EXEC_ANSWER_SLACK;
    }

    private static SandboxTimeoutException timeout(Command command, ExecOptions options) {
        return ExecRefusals.timedOut(command.toShellLine(), options.timeout(), KILLED);
    }

    // ---------------------------------------------------------------- files

    @Override
    public ConfinedFiles<?> files() {
        return files;
    }

    /** The service's files API (and, for removal, its shell) as the kit's file primitives. */
    private final class ServiceFiles extends ConfinedFiles<Object> {

        ServiceFiles(TransferLimits filesIn, TransferLimits filesOut) {
            super(filesIn, filesOut);
        }

        @Override
        protected <T> T call(String path, String operation, Function<Object, T> body) {
            return body.apply(null);
        }

        @Override
        protected Optional<Stat> lstat(Object call, String absolute) {
            return rawEntry(absolute).map(RawEntry::stat);
        }

        @Override
        protected void write(Object call, String confined, byte[] content, String path) {
            AcaHttp.Response response;
            try {
                response = resumingOnce(() -> client.write(id, confined, content));
            } catch (AcaHttp.AcaTimeout timedOut) {
                throw fileCallTimedOut("writing", path, "a FIFO the guest put there never takes the bytes: write to a "
                        + "regular file's path", timedOut);
            }
            if (response.status() == 400 && "PathIsDirectory".equals(AcaClient.errorCode(response).orElse(""))) {
                throw new SandboxIsADirectory(GuestText.quote(path) + " is a directory; a write needs a file path");
            }
            answer(response, "write " + GuestText.quote(path));
        }

        /**
         * The service has no directory call (its uploads make parents themselves): the guest's own
         * {@code mkdir -p}, as the work dir is made, after the walk refused every link on the way.
         */
        @Override
        protected void makeDirectories(Object call, String confined, String path) {
            ExecResult made = exec(Command.argv("mkdir", "-p", "--", confined),
                    ExecOptions.in(ROOT, backend.config().readTimeout()));
            if (made.exitCode() != 0) {
                throw new SandboxFileException("backend '" + backend.name() + "': the guest could not make the "
                        + "directory " + GuestText.quote(path) + " (mkdir exited " + made.exitCode() + ": "
                        + GuestText.quote(made.stderrText().strip()) + ")");
            }
        }

        /** The service's reads follow links; the walk and this stat refused a link before the read is sent. */
        @Override
        protected byte[] read(Object call, String confined, Stat stat, long cap, String path) {
            if (stat.size().isEmpty()) {
                throw new SandboxOutputSizeUnknown("the service did not report the size of " + GuestText.quote(path)
                        + ", so it cannot be checked against the cap before reading; nothing was read");
            }
            if (stat.size().getAsLong() == 0) {
                // Nothing to fetch: and the service shows a FIFO as an empty file, whose read would wait for a writer.
                return new byte[0];
            }
            AcaHttp.Response response;
            try {
                response = resumingOnce(() -> client.read(id, confined, cap));
            } catch (AcaHttp.AcaTimeout timedOut) {
                throw fileCallTimedOut("reading", path, "a FIFO or a file still being written never ends: read a "
                        + "regular file", timedOut);
            } catch (AcaHttp.AnswerTooLarge grew) {
                // It grew after the stat: refused with nothing kept, never truncated.
                throw FileRefusals.readOverCap(path, -1, cap);
            }
            if (pathNotFound(response)) {
                throw new SandboxFileNotFound(GuestText.quote(path) + " does not exist");
            }
            return answer(response, "read " + GuestText.quote(path)).body();
        }

        @Override
        protected Map<String, Stat> list(Object call, String confined, String path) {
            AcaHttp.Response response = resumingOnce(() -> client.list(id, confined));
            if (pathNotFound(response)) {
                throw new SandboxFileNotFound(GuestText.quote(path) + " does not exist");
            }
            Map<String, Object> listing = client.object(answer(response, "list " + GuestText.quote(path)));
            if (!(listing.get("entries") instanceof List<?> entries)) {
                throw unreadable("list " + GuestText.quote(path), "no 'entries' array");
            }
            if (entries.size() > HostCeilings.MAX_LISTED_ENTRIES) {
                throw FileRefusals.listingTooLarge(path);
            }
            Map<String, Stat> children = new HashMap<>();
            for (Object item : entries) {
                Map<String, Object> object = AcaJson.asObject(item);
                if (object == null) {
                    throw unreadable("list " + GuestText.quote(path), "an entry that is not an object");
                }
                RawEntry entry = RawEntry.of(object, AcaSandbox.this);
                String entryPath = AcaJson.text(object, "path");
                if (entryPath == null) {
                    throw unreadable("list " + GuestText.quote(path), "an entry without 'path'");
                }
                String normal = GuestPaths.normalize(entryPath);
                if (!GuestPaths.parent(normal).equals(confined) || normal.equals(confined)) {
                    throw new SandboxPathNotConfined("the listing of " + GuestText.quote(path) + " named "
                            + GuestText.quote(entryPath) + ", which is not directly inside it; the listing was refused");
                }
                children.put(GuestPaths.fileName(normal), entry.stat());
            }
            return children;
        }

        /**
         * Removes what {@code path} names, never what a link there points to. The removal itself is
         * {@code rm -f} or {@code rm -rf} run through {@code executeShellCommand} (the path POSIX-quoted),
         * not the files API's DELETE: POSIX {@code rm} unlinks a link operand and never follows a link
         * inside a tree, whereas whether the service's DELETE follows links is not established, and a
         * guess that is wrong would delete outside the working directory. Afterwards a raw stat checks
         * that it is gone.
         */
        @Override
        protected void unlink(Object call, String confined, Stat stat, boolean recursive, String path) {
            String operation = "remove " + GuestText.quote(path);
            String line = PosixShell.join(List.of("rm", recursive ? "-rf" : "-f", "--", confined));
            Map<String, Object> result;
            try {
                result = client.object(answer(resumingOnce(() -> client.exec(id, line, ROOT,
                        backend.config().readTimeout(), AcaHttp.MAX_ANSWER_BYTES)), operation));
            } catch (AcaHttp.AcaTimeout timedOut) {
                throw new SandboxTimeoutException("removing " + GuestText.quote(path) + " did not finish within the "
                        + "read timeout; whether anything was removed is unknown");
            }
            if (!(result.get("exitCode") instanceof BigDecimal code) || code.signum() != 0
                    || rawEntry(confined).isPresent()) {
                LOG.log(Level.WARNING, () -> "backend '" + backend.name() + "': " + operation + " in " + id
                        + " answered " + AcaJson.write(result));
                throw new SandboxFileException("the sandbox could not " + operation + " (details in the log)");
            }
        }
    }

    // ---------------------------------------------------------------- raw stat

    /** GET files/stat, raw: the typed model lacks isSymlink. Empty on 404. */
    private static SandboxTimeoutException fileCallTimedOut(String doing, String path, String why,
            AcaHttp.AcaTimeout timedOut) {
        return new SandboxTimeoutException(doing + " " + GuestText.quote(path) + " did not finish within "
                + AcaClient.FILE_CALL_TIMEOUT.toSeconds() + " s; " + why, timedOut);
    }

    private Optional<RawEntry> rawEntry(String absolutePath) {
        AcaHttp.Response response = resumingOnce(() -> client.stat(id, absolutePath));
        if (pathNotFound(response)) {
            return Optional.empty();
        }
        return Optional.of(RawEntry.of(client.object(answer(response, "stat " + GuestText.quote(absolutePath))), this));
    }

    /**
     * One entry as the service describes it; both flags must be booleans. {@code mode} (permission
     * bits as a JSON integer) and {@code modifiedTime} (an ISO-8601 instant) are kept when they are
     * well formed, else left unknown: neither decides anything.
     */
    record RawEntry(EntryKind kind, OptionalLong size, OptionalInt mode, Optional<Instant> modified) {
        static RawEntry of(Map<String, Object> object, AcaSandbox sandbox) {
            if (!(object.get("isDir") instanceof Boolean dir) || !(object.get("isSymlink") instanceof Boolean link)) {
                throw sandbox.unreadable("describe a path", "an entry without boolean 'isDir' and 'isSymlink'");
            }
            OptionalInt mode = modeOf(object.get("mode"));
            Optional<Instant> modified = timeOf(object.get("modifiedTime"));
            if (link) {
                return new RawEntry(EntryKind.SYMLINK, OptionalLong.empty(), mode, modified);
            }
            if (dir) {
                return new RawEntry(EntryKind.DIRECTORY, OptionalLong.empty(), mode, modified);
            }
            Object size = object.get("size");
            if (size instanceof BigDecimal number && number.signum() >= 0) {
                try {
                    return new RawEntry(EntryKind.FILE, OptionalLong.of(number.longValueExact()), mode, modified);
                } catch (ArithmeticException notWhole) {
                    // Unknown size: fails closed.
                }
            }
            return new RawEntry(EntryKind.FILE, OptionalLong.empty(), mode, modified);
        }

        ConfinedFiles.Stat stat() {
            return new ConfinedFiles.Stat(kind, size, mode, modified);
        }

        private static OptionalInt modeOf(Object value) {
            if (value instanceof BigDecimal number) {
                try {
                    int bits = number.intValueExact();
                    if (bits >= 0 && bits <= SandboxEntry.MAX_MODE) {
                        return OptionalInt.of(bits);
                    }
                } catch (ArithmeticException notWhole) {
                    // Not a mode: unknown.
                }
            }
            return OptionalInt.empty();
        }

        private static Optional<Instant> timeOf(Object value) {
            if (value instanceof String text && text.length() <= 64) {
                try {
                    return Optional.of(java.time.OffsetDateTime.parse(text).toInstant());
                } catch (java.time.format.DateTimeParseException notATime) {
                    // Not a time: unknown.
                }
            }
            return Optional.empty();
        }
    }

    // ---------------------------------------------------------------- helpers

    /**
     * Sends a data-plane call; on 409 (the sandbox is not running: ASSUMED that the service refuses exec and files on a
     * suspended or stopped sandbox rather than waking it, as its CLI resumes before an exec) resumes the sandbox, as the
     * CLI does, and sends the call once more. A 409 means the call did nothing, so the replay cannot run a command
     * twice. A second 409 is the caller's to report.
     */
    private AcaHttp.Response resumingOnce(java.util.function.Supplier<AcaHttp.Response> call) {
        AcaHttp.Response response = call.get();
        if (response.status() != 409) {
            return response;
        }
        LOG.log(Level.INFO, () -> "backend '" + backend.name() + "': sandbox " + id + " is not running; resuming it "
                + "before the call is sent again");
        backend.ensureRunning(id, AcaBackend.RESUME_TIMEOUT);
        return call.get();
    }

    /** A 409 means the sandbox stopped under us (auto-suspend); anything else non-2xx is the service's. */
    private AcaHttp.Response answer(AcaHttp.Response response, String operation) {
        if (response.status() == 409) {
            client.failed(response, operation);
            throw new SandboxException("backend '" + backend.name() + "': sandbox " + id + " is not running (the "
                    + "service suspended or stopped it); acquire again to resume it");
        }
        if (response.status() == 404 && sandboxNotFound(response)) {
            throw backend.gone(id);
        }
        return client.require(response, operation);
    }

    /** A 404 about the path; one saying the sandbox itself is gone is thrown as that instead. */
    private boolean pathNotFound(AcaHttp.Response response) {
        if (response.status() != 404) {
            return false;
        }
        if (sandboxNotFound(response)) {
            throw backend.gone(id);
        }
        return true;
    }

    private static boolean sandboxNotFound(AcaHttp.Response response) {
        return AcaClient.errorCode(response).filter(AcaClient.SANDBOX_NOT_FOUND_CODE::equals).isPresent();
    }

    private SandboxException unreadable(String operation, String why) {
        LOG.log(Level.WARNING, () -> "backend '" + backend.name() + "': " + operation + " in " + id + ": " + why);
        return new SandboxException("backend '" + backend.name() + "' could not " + operation + ": the service's "
                + "answer was incomplete (details in the log)");
    }

    private static String random() {
        byte[] value = new byte[STDIN_NAME_BYTES];
        RANDOM.nextBytes(value);
        return HexFormat.of().formatHex(value);
    }

    @Override
    public String toString() {
        return "AcaSandbox[" + id + "]";
    }

    static String describe(Throwable error) {
        return ErrorDetail.of(error);
    }
}
