package org.sandbox4j.testkit.tck.reference;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.ProcessOptions;
import org.sandbox4j.core.ProcessSignal;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxEntry;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxProcess;
import org.sandbox4j.core.spi.GuestProcess;
import org.sandbox4j.core.spi.HostProcess;
import org.sandbox4j.core.spi.GuestText;
import org.sandbox4j.testkit.tck.reference.NamespaceLauncher.BootstrapFailure;
import org.sandbox4j.testkit.tck.reference.NamespaceShellBackend.Flaw;
import org.sandbox4j.core.spi.ExecRefusals;
import org.sandbox4j.core.spi.ProcessPump;

/**
 * One sandbox of {@link NamespaceShellBackend}: its private storage, mounted at the work base for
 * every command, and the file methods done on the host over the guest's view of it.
 */
final class NamespaceShellSandbox implements Sandbox {

    /** How long a start may take to be confirmed (the lifetime, when shorter). */
    private static final Duration START_DEADLINE = Duration.ofSeconds(30);
    /** How long a launch that did not start its command may take to end and say why. */
    private static final Duration NOT_STARTED_GRACE = Duration.ofSeconds(5);
    private static final int LEFT_OVER_BYTES = 64 * 1024;
    private static final Duration SIGNAL_BOUND = Duration.ofSeconds(5);

    /**
     * A started command's launch, run as the namespace's init after the bootstrap entered the working
     * directory: it prints its preamble ($1) before anything of the command can write, then starts the
     * command in a session and process group of its own (so a group signal reaches the command and
     * what it started, never this init), with INT and QUIT as they came (a shell's background job
     * would ignore them) and this stdin, and waits for it. The command is never the namespace's init,
     * which ignores every signal it has no handler for; its exit ends the namespace, and with it
     * whatever the command left. Needs {@code env --default-signal} (coreutils 8.31).
     */
    private static final String STARTER = "printf '%s\\n' \"$1\"; shift\n"
            + "exec 3<&0\n"
            + "setsid env --default-signal=INT,QUIT " + NamespaceLauncher.SHELL + " -c 'exec \"$@\"' sh \"$@\" <&3 3<&- &\n"
            + "exec 3<&-\n"
            + "wait \"$!\"\n";
    private static final String STARTER_NAME = "sandbox4j-start";

    private final String id;
    private final Path storage;
    private final Path record;
    private final Optional<Path> processLimit;
    private final NamespaceLauncher launcher;
    private final GuestFiles files;
    private final Set<Process> started;
    private final Set<Flaw> flaws;

    /**
     * @param record  the sandbox's ownership record: gone once the sandbox was disposed of
     * @param started where this sandbox's started launchers are kept, for its disposal to kill
     */
    NamespaceShellSandbox(String id, Path storage, Path record, Optional<Path> processLimit, String workBase,
            Set<Flaw> flaws, Optional<GuestUser> guestUser, NamespaceLauncher launcher, Set<Process> started) {
        this.id = Objects.requireNonNull(id, "id");
        this.storage = Objects.requireNonNull(storage, "storage");
        this.record = Objects.requireNonNull(record, "record");
        this.processLimit = Objects.requireNonNull(processLimit, "processLimit");
        this.launcher = Objects.requireNonNull(launcher, "launcher");
        this.files = new GuestFiles(storage, workBase, flaws.contains(Flaw.FOLLOWS_SYMLINKS), guestUser);
        this.started = Objects.requireNonNull(started, "started");
        this.flaws = Set.copyOf(flaws);
    }

    private static List<String> guestArgv(Command command) {
        return command instanceof Command.Argv
                ? ((Command.Argv) command).words()
                : List.of(NamespaceLauncher.SHELL, "-c", ((Command.Shell) command).line());
    }

    @Override
    public ExecResult exec(Command command, ExecOptions options) {
        Objects.requireNonNull(command, "command");
        Objects.requireNonNull(options, "options");
        List<String> guestArgv = guestArgv(command);
        String nonce = NamespaceLauncher.nonce();
        ProcessBuilder builder = new ProcessBuilder(
                launcher.command(storage, processLimit, options.workingDirectory(), nonce, guestArgv));
        launcher.environment(builder.environment(), options.environment());
        long start = System.nanoTime();
        Process process;
        try {
            process = builder.start();
        } catch (IOException e) {
            throw ExecRefusals.couldNotStart(launcher.backendName(), "unshare(1)", e);
        }
        ExecResult result = ProcessPump.await(process, Process::destroyForcibly, options, command.toShellLine(),
                launcher.backendName(), start);
        Optional<BootstrapFailure> failure = NamespaceLauncher.bootstrapFailure(result, nonce);
        if (failure.isPresent()) {
            throw refusal(failure.get(), options.workingDirectory(), result);
        }
        return result;
    }

    /**
     * Starts the command and returns once its launch said it is starting (its preamble, which nothing
     * of the command can print first); a launch that failed before is a typed refusal, and holds no slot.
     */
    @Override
    public SandboxProcess start(Command command, ProcessOptions options) {
        Objects.requireNonNull(command, "command");
        Objects.requireNonNull(options, "options");
        GuestProcess handle = GuestProcess.reserve(launcher.backendName(), id, command.toShellLine(), options);
        if (flaws.contains(Flaw.REPLAYS_EXEC)) {
            handle.attach(new ReplayedExec(handle, input -> exec(command, options.asExecOptions().withStdin(input))));
            return handle;
        }
        String nonce = NamespaceLauncher.nonce();
        String preamble = nonce + " STARTED";
        List<String> starter = new ArrayList<>(List.of(NamespaceLauncher.SHELL, "-c", STARTER, STARTER_NAME, preamble));
        starter.addAll(guestArgv(command));
        ProcessBuilder builder = new ProcessBuilder(
                launcher.command(storage, processLimit, options.workingDirectory(), nonce, starter));
        launcher.environment(builder.environment(), options.environment());
        Process process;
        try {
            process = builder.start();
        } catch (IOException e) {
            handle.abandon();
            throw ExecRefusals.couldNotStart(launcher.backendName(), "unshare(1)", e);
        }
        started.add(process);
        Duration deadline = options.lifetime().compareTo(START_DEADLINE) < 0 ? options.lifetime() : START_DEADLINE;
        if (!HostProcess.startConfirmed(process, (preamble + "\n").getBytes(StandardCharsets.UTF_8), deadline)) {
            started.remove(process);
            handle.abandon();
            throw notStarted(process, nonce, options.workingDirectory());
        }
        handle.whenEnded(() -> started.remove(process));
        BooleanSupplier disposed = () -> !Files.exists(record);
        Process served = new DisposalAwareExit(flaws.contains(Flaw.BUFFERS_WITHOUT_BOUND) ? new EagerOutput(process)
                : process, disposed);
        HostProcess.serve(handle, served, NamespaceShellSandbox::killNamespace, NamespaceShellSandbox::signalGroup,
                disposed);
        return handle;
    }

    /** Why a launch did not start its command: its bootstrap's typed refusal, or the launcher's own words. */
    private SandboxException notStarted(Process process, String nonce, String workingDirectory) {
        boolean ended;
        try {
            ended = process.waitFor(NOT_STARTED_GRACE.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            ended = false;
        }
        // Read before the kill: destroying a Process closes its streams.
        String stderr = new String(HostProcess.leftOver(process.getErrorStream(), LEFT_OVER_BYTES, NOT_STARTED_GRACE),
                StandardCharsets.UTF_8);
        process.destroyForcibly();
        if (ended) {
            Optional<BootstrapFailure> failure = NamespaceLauncher.bootstrapFailure(process.exitValue(), stderr, nonce);
            if (failure.isPresent()) {
                return refusal(failure.get(), workingDirectory, stderr);
            }
        }
        return new SandboxException("backend '" + launcher.backendName() + "' could not start the command: its "
                + "launch " + (ended ? "ended with " + process.exitValue() : "did not confirm the start within "
                + START_DEADLINE.toSeconds() + " s") + " before the command ran: " + GuestText.quote(stderr));
    }

    /**
     * Kills the launcher, and with it (--kill-child) the namespace's init and everything in it. Through
     * its handle, never {@link Process#destroyForcibly}: that closes the launcher's streams, and the
     * kit kills again after the leader exited, while its readers may still be taking the output's tail.
     */
    private static void killNamespace(Process launcher) {
        launcher.toHandle().destroyForcibly();
    }

    /**
     * Sends {@code signal} to the command's process group: the first process below the launcher that
     * leads its own group (the starter's {@code setsid}); nothing once it is gone.
     */
    private static void signalGroup(Process launcher, ProcessSignal signal) {
        Optional<Long> leader = groupLeaderBelow(launcher.toHandle());
        if (leader.isEmpty()) {
            return;
        }
        try {
            Process kill = new ProcessBuilder("kill", "-s", signal.shellName(), "--", "-" + leader.get())
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.DISCARD)
                    .start();
            if (!kill.waitFor(SIGNAL_BOUND.toNanos(), TimeUnit.NANOSECONDS)) {
                kill.destroyForcibly();
            }
        } catch (IOException e) {
            throw new SandboxException("backend namespace-shell could not run kill(1) to signal the command: "
                    + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Breadth first, so the command's group leader comes before any group its own children lead. */
    private static Optional<Long> groupLeaderBelow(ProcessHandle top) {
        List<ProcessHandle> level = top.children().toList();
        while (!level.isEmpty()) {
            for (ProcessHandle process : level) {
                if (leadsItsGroup(process.pid())) {
                    return Optional.of(process.pid());
                }
            }
            level = level.stream().flatMap(ProcessHandle::children).toList();
        }
        return Optional.empty();
    }

    private static boolean leadsItsGroup(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"), StandardCharsets.US_ASCII);
            // pid (comm) state ppid pgrp ...: comm may hold anything, so split after its last ')'.
            String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return Long.parseLong(fields[2]) == pid;
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /** The bootstrap failed before the command started: a typed error, never the command's exit code. */
    private SandboxException refusal(BootstrapFailure failure, String workingDirectory, ExecResult result) {
        return refusal(failure, workingDirectory, result.stderrText());
    }

    private SandboxException refusal(BootstrapFailure failure, String workingDirectory, String stderr) {
        return switch (failure) {
            case WORKING_DIRECTORY_MISSING -> ExecRefusals.workingDirectoryMissing(workingDirectory);
            case WORKING_DIRECTORY_NOT_A_DIRECTORY -> ExecRefusals.workingDirectoryNotADirectory(workingDirectory);
            case WORKING_DIRECTORY_UNENTERABLE -> new SandboxException("backend '" + launcher.backendName()
                    + "' could not enter the working directory " + GuestText.quote(workingDirectory)
                    + ", so nothing ran: let the guest search it, or run in another");
            case PROCESS_LIMIT, MOUNT -> new SandboxException("backend '" + launcher.backendName() + "' could not "
                    + (failure == BootstrapFailure.MOUNT ? "mount the sandbox's storage" : "join its process limit")
                    + " before the command started, so nothing ran: " + GuestText.quote(stderr));
        };
    }

    @Override
    public void writeFile(String path, byte[] content, String workingDirectory) {
        files.writeFile(path, content, workingDirectory);
    }

    @Override
    public Optional<SandboxEntry> stat(String path, String workingDirectory) {
        return files.stat(path, workingDirectory);
    }

    @Override
    public byte[] readFile(String path, String workingDirectory, long maxBytes) {
        return files.readFile(path, workingDirectory, maxBytes);
    }

    @Override
    public List<SandboxEntry> listDir(String path, String workingDirectory) {
        return files.listDir(path, workingDirectory);
    }

    @Override
    public void mkdir(String path, String workingDirectory) {
        files.mkdir(path, workingDirectory);
    }

    @Override
    public void remove(String path, String workingDirectory, boolean recursive) {
        files.remove(path, workingDirectory, recursive);
    }
}
