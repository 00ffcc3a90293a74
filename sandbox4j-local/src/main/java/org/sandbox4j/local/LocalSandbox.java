package org.sandbox4j.local;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.spi.GuestText;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxDisposed;
import org.sandbox4j.core.SandboxEntry;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxInterrupted;
import org.sandbox4j.core.ProcessOptions;
import org.sandbox4j.core.ProcessSignal;
import org.sandbox4j.core.SandboxProcess;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.TransferLimits;
import org.sandbox4j.core.spi.Disposals;
import org.sandbox4j.core.spi.ErrorDetail;
import org.sandbox4j.core.spi.GuestProcess;
import org.sandbox4j.core.spi.HostProcess;
import org.sandbox4j.core.spi.InheritedSignals;
import org.sandbox4j.core.spi.ExecRefusals;
import org.sandbox4j.core.spi.ProcessPump;
import org.sandbox4j.core.spi.WorkspaceFiles;

/**
 * What every local sandbox handle shares: file methods host-side on its workspace, a refusal once
 * the sandbox was disposed of (here or by another process), and a lease kept ahead of the reaper
 * while it is used, and one exec path (launch, record, supervise, read the launch's report).
 * Subclasses add how a command is launched and what its launcher's report means.
 */
abstract class LocalSandbox implements Sandbox {

    private final String backendName;
    private final LocalSandboxes sandboxes;
    private final String id;
    private final Path directory;
    private final WorkspaceFiles files;
    /** The spec's caps: every write and read through this handle is held to them before a byte moves. */
    private final TransferLimits filesIn;
    private final TransferLimits filesOut;
    private volatile Instant leaseUntil;

    LocalSandbox(String backendName, LocalSandboxes sandboxes, String id, Path directory, WorkspaceFiles files,
            SandboxSpec spec) {
        this.backendName = backendName;
        this.sandboxes = sandboxes;
        this.id = id;
        this.directory = directory;
        this.files = files;
        this.filesIn = spec.filesIn();
        this.filesOut = spec.filesOut();
        this.leaseUntil = Instant.now().plus(sandboxes.lease());
    }

    final String id() {
        return id;
    }

    final Path directory() {
        return directory;
    }

    /** Call before running a command: refuses a disposed sandbox and renews a waning lease. */
    private void beforeExec() {
        requireLive();
        // Half the lease in milliseconds: Duration.dividedBy goes through BigDecimal, milliseconds on a cold JVM.
        if (Instant.now().plusMillis(sandboxes.lease().toMillis() / 2).isBefore(leaseUntil)) {
            return;
        }
        leaseUntil = sandboxes.renewLease(id);
    }

    @Override
    public final void writeFile(String path, byte[] content, String workingDirectory) {
        requireLive();
        filesIn.refuseOversizeWrite(content, path);
        files.writeFile(path, content, workingDirectory);
    }

    @Override
    public final Optional<SandboxEntry> stat(String path, String workingDirectory) {
        requireLive();
        return files.stat(path, workingDirectory);
    }

    @Override
    public final byte[] readFile(String path, String workingDirectory, long maxBytes) {
        requireLive();
        return files.readFile(path, workingDirectory, filesOut.readCap(maxBytes));
    }

    @Override
    public final List<SandboxEntry> listDir(String path, String workingDirectory) {
        requireLive();
        return files.listDir(path, workingDirectory);
    }

    @Override
    public final void mkdir(String path, String workingDirectory) {
        requireLive();
        files.mkdir(path, workingDirectory);
    }

    @Override
    public final void remove(String path, String workingDirectory, boolean recursive) {
        requireLive();
        files.remove(path, workingDirectory, recursive);
    }

    /**
     * How one command is launched on the host: the process to start, how to kill everything it
     * started, and the host program that starts it (for messages).
     */
    record Launch(ProcessBuilder process, ProcessPump.TreeKill treeKill, String launcher) {
    }

    /** The launch of {@code command}, told to write how it went to {@code report}. */
    abstract Launch launch(Command command, ExecOptions options, Path report);

    /**
     * The command's result, or the refusal when the launch's {@code report} says the command never
     * started (the launcher, not the command, ended with {@code launched}'s exit code).
     */
    abstract ExecResult commandResult(ExecResult launched, String report, Command command, ExecOptions options);

    /** The refusal when the launcher could not even be started (the host failed to run it). */
    SandboxException couldNotStart(Launch launch, ExecOptions options, IOException cause) {
        return ExecRefusals.couldNotStart(backendName, launch.launcher(), cause);
    }

    /**
     * Runs {@code command}: starts its launch, records it among the sandbox's launches so that a
     * disposal (here or in another process) stops it before touching the files, waits for it
     * under {@code options}, and reads the launch's report so that a launcher's failure is never
     * returned as the command's exit code. A disposal before or during the run ends the call with
     * {@link SandboxDisposed}, never with whatever exit code the kill left.
     */
    @Override
    public final ExecResult exec(Command command, ExecOptions options) {
        Objects.requireNonNull(command, "command");
        Objects.requireNonNull(options, "options");
        beforeExec();
        Optional<ExecResult> resident = execResident(command, options);
        if (resident.isPresent()) {
            return resident.get();
        }
        try (LaunchReport report = newReport()) {
            Launch launch = launch(command, options, report.file());
            long start = System.nanoTime();
            Process process;
            try {
                process = started(launch);
            } catch (IOException e) {
                throw couldNotStart(launch, options, e);
            }
            ExecResult launched = supervise(process, launch.treeKill(), options, command.toShellLine(), start);
            return commandResult(launched, report.read(), command, options);
        }
    }

    /**
     * Starts {@code command} on the same launch as {@link #exec} (recorded among the sandbox's
     * launches, so that a disposal stops it), announcing itself on stdout just before the command
     * runs: the handle is returned only once that line came, and a launch that ended without it is
     * refused as exec refuses it (a missing working directory, a failed launcher), nothing run.
     */
    @Override
    public final SandboxProcess start(Command command, ProcessOptions options) {
        Objects.requireNonNull(command, "command");
        Objects.requireNonNull(options, "options");
        beforeExec();
        Optional<SandboxProcess> resident = startResident(command, options);
        if (resident.isPresent()) {
            return resident.get();
        }
        GuestProcess handle = GuestProcess.reserve(backendName, id, command.toShellLine(), options);
        ExecOptions launchOptions = options.asExecOptions();
        LaunchReport report = null;
        Optional<Launches.Registration> registration = Optional.empty();
        boolean served = false;
        try {
            report = newReport();
            Launch launch = launch(GuestCommand.announcingStart(command), launchOptions, report.file());
            long startNanos = System.nanoTime();
            Process process;
            try {
                process = started(launch);
            } catch (IOException e) {
                throw couldNotStart(launch, launchOptions, e);
            }
            registration = Launches.register(directory, process);
            if (registration.isEmpty()) {
                launch.treeKill().kill(process);
                throw disposedDuring(command.toShellLine(), null);
            }
            if (!HostProcess.startConfirmed(process, ANNOUNCED, START_DEADLINE)) {
                throw notStarted(process, launch, report, command, launchOptions, startNanos);
            }
            LaunchReport launched = report;
            Launches.Registration recorded = registration.get();
            handle.whenEnded(() -> {
                recorded.close();
                launched.close();
            });
            HostProcess.serve(handle, process, launch.treeKill(), (started, signal) -> signal(started, signal),
                    () -> new Disposals().wasDisposedOf(id, this::retired),
                    code -> launcherFailure(code, launched, command, launchOptions));
            served = true;
            return handle;
        } finally {
            if (!served) {
                handle.abandon();
                registration.ifPresent(Launches.Registration::close);
                if (report != null) {
                    report.close();
                }
            }
        }
    }

    /**
     * Why a started launch's exit {@code code} is not its command's, read from its {@code report} as
     * exec reads it: empty when the command's end was recorded. A launcher killed under its command
     * (as a disposal kills it) recorded none, and its code is its own.
     */
    private Optional<SandboxException> launcherFailure(int code, LaunchReport report, Command command,
            ExecOptions options) {
        try {
            commandResult(new ExecResult(new byte[0], new byte[0], code, Duration.ZERO), report.read(), command,
                    options);
            return Optional.empty();
        } catch (SandboxException notTheCommands) {
            return Optional.of(notTheCommands);
        }
    }

    /**
     * Runs {@code command} through the sandbox's resident agent, when it has one; empty: launch it
     * on its own. Called after the sandbox was checked to be live.
     */
    Optional<ExecResult> execResident(Command command, ExecOptions options) {
        return Optional.empty();
    }

    /** As {@link #execResident}, for a started process. */
    Optional<SandboxProcess> startResident(Command command, ProcessOptions options) {
        return Optional.empty();
    }

    /** Starts the launch with the signal dispositions a terminal gives (not what this JVM's starter ignored). */
    private static Process started(Launch launch) throws IOException {
        ProcessBuilder builder = launch.process();
        builder.command().addAll(0, InheritedSignals.resetting());
        return builder.start();
    }

    /** How long a launch may take to announce its command before it is killed and refused. */
    static final Duration START_DEADLINE = Duration.ofSeconds(30);
    private static final byte[] ANNOUNCED = GuestCommand.ANNOUNCED.getBytes(StandardCharsets.US_ASCII);
    /** The most a failed launcher's own words are read for its refusal. */
    private static final int LAUNCHER_TEXT_BYTES = 64 * 1024;

    /**
     * The refusal of a launch that never announced its command: killed, then read as exec reads a
     * launch (its report and its own words) so that the reason is exec's; never an exit code.
     */
    private SandboxException notStarted(Process process, Launch launch, LaunchReport report, Command command,
            ExecOptions options, long startNanos) {
        // A launcher that failed exits by itself; its words are read before a kill, which closes its streams.
        int exitCode;
        try {
            exitCode = process.waitFor(HostProcess.KILL_GRACE.toNanos(), TimeUnit.NANOSECONDS) ? process.exitValue() : -1;
        } catch (InterruptedException e) {
            launch.treeKill().kill(process);
            Thread.currentThread().interrupt();
            return ExecRefusals.interrupted(command.toShellLine(), "the launch was killed", e);
        }
        byte[] stderr = exitCode < 0 ? new byte[0]
                : HostProcess.leftOver(process.getErrorStream(), LAUNCHER_TEXT_BYTES, HostProcess.KILL_GRACE);
        launch.treeKill().kill(process);
        ExecResult launched = new ExecResult(new byte[0], stderr, exitCode,
                Duration.ofNanos(System.nanoTime() - startNanos));
        if (retired()) {
            return disposedDuring(command.toShellLine(), null);
        }
        try {
            commandResult(launched, report.read(), command, options);
        } catch (SandboxException refused) {
            return refused;
        }
        return launcherFailed(launch.launcher(), launched, command);
    }

    /** Sends {@code signal} to the process group of the command {@code launcher} started. */
    private void signal(Process launcher, ProcessSignal signal) {
        long group = processGroup(launcher);
        Path kill = KILL.orElseThrow(() -> new SandboxException("backend '" + backendName + "' needs kill(1) to "
                + "signal a started process (procps on Linux)"));
        try {
            Process killer = new ProcessBuilder(kill.toString(), "-s", signal.shellName(), "--", "-" + group)
                    .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            if (!killer.waitFor(HostProcess.KILL_GRACE.toNanos(), TimeUnit.NANOSECONDS)) {
                killer.destroyForcibly();
            }
        } catch (IOException e) {
            throw new SandboxException("backend '" + backendName + "' could not signal the process group " + group
                    + ": " + ErrorDetail.of(e), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw ExecRefusals.interrupted("kill -s " + signal.shellName(), "the signal may not have been sent", e);
        }
    }

    private static final Optional<Path> KILL = HostPrograms.find("kill");

    /** The process group of the command {@code launcher} started (its leader's host pid). */
    abstract long processGroup(Process launcher);

    /**
     * The one wording of a launcher that failed before the command started: nothing ran, and what
     * the launcher said (the guest printed nothing yet) is the reason.
     */
    final SandboxException launcherFailed(String launcher, ExecResult launched, Command command) {
        return ExecRefusals.launcherFailed(backendName, launcher, command.toShellLine(), launched.exitCode(),
                new String(launched.stderr(), StandardCharsets.UTF_8).strip());
    }

    private LaunchReport newReport() {
        try {
            return LaunchReport.in(directory);
        } catch (IOException e) {
            requireLive();
            throw new SandboxException("backend '" + backendName + "' could not prepare the launch of a command in "
                    + "the sandbox " + id + ": " + ErrorDetail.of(e), e);
        }
    }

    private ExecResult supervise(Process process, ProcessPump.TreeKill treeKill, ExecOptions options, String description,
            long startNanos) {
        Optional<Launches.Registration> registration = Launches.register(directory, process);
        if (registration.isEmpty()) {
            treeKill.kill(process);
            throw disposedDuring(description, null);
        }
        try (Launches.Registration ignored = registration.get()) {
            ExecResult result = ProcessPump.await(process, treeKill, options, description, backendName, startNanos);
            if (retired()) {
                throw disposedDuring(description, null);
            }
            return guestSeesHostPaths() ? result : withoutHostPaths(result);
        } catch (SandboxDisposed | SandboxInterrupted passOn) {
            throw passOn;
        } catch (SandboxException failed) {
            if (retired()) {
                throw disposedDuring(description, failed);
            }
            throw failed;
        }
    }

    /**
     * The result with this host's state directory kept out of its stderr: only a launcher failing
     * (bwrap naming a bind source) could print it, and where sandboxes live is the host's business.
     */
    private ExecResult withoutHostPaths(ExecResult result) {
        byte[] hostPath = directory.getParent().toString().getBytes(StandardCharsets.UTF_8);
        byte[] stderr = result.stderr();
        if (indexOf(stderr, hostPath, 0) < 0) {
            return result;
        }
        byte[] hidden = "<sandbox4j state>".getBytes(StandardCharsets.UTF_8);
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream(stderr.length);
        int from = 0;
        for (int at = indexOf(stderr, hostPath, 0); at >= 0; at = indexOf(stderr, hostPath, from)) {
            out.write(stderr, from, at - from);
            out.write(hidden, 0, hidden.length);
            from = at + hostPath.length;
        }
        out.write(stderr, from, stderr.length - from);
        return new ExecResult(result.stdout(), out.toByteArray(), result.exitCode(), result.elapsed());
    }

    private static int indexOf(byte[] haystack, byte[] needle, int from) {
        outer:
        for (int i = from; i + needle.length <= haystack.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    /** Whether the guest's own paths are host paths (an os_process guest): then its stderr is left as it is. */
    abstract boolean guestSeesHostPaths();

    final boolean retired() {
        return !Files.isDirectory(directory, LinkOption.NOFOLLOW_LINKS);
    }

    final SandboxDisposed disposedDuring(String description, Throwable cause) {
        return new SandboxDisposed("backend '" + backendName + "': this sandbox (" + id + ") was disposed of while "
                + GuestText.quote(description) + " ran, here or by another process sharing the state root; the "
                + "command was stopped with everything it started: acquire the sandbox again for a fresh one", cause);
    }

    private void requireLive() {
        if (retired()) {
            throw new SandboxDisposed("backend '" + backendName + "': this sandbox (" + id + ") was disposed of, "
                    + "here or by another process sharing the state root; acquire it again for a fresh one");
        }
        if (workspaceLost()) {
            throw new SandboxDisposed("backend '" + backendName + "': this sandbox's (" + id + ") workspace is gone "
                    + "(its keeper process ended: it was killed, or the host restarted); acquire the sandbox again "
                    + "for a fresh, empty workspace");
        }
    }

    /** Whether the workspace's files are gone while the sandbox's record is still there. */
    boolean workspaceLost() {
        return false;
    }
}
