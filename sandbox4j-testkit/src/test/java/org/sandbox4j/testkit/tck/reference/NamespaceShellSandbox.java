package org.sandbox4j.testkit.tck.reference;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxEntry;
import org.sandbox4j.core.SandboxException;
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

    private final Path storage;
    private final Optional<Path> processLimit;
    private final NamespaceLauncher launcher;
    private final GuestFiles files;

    NamespaceShellSandbox(Path storage, Optional<Path> processLimit, String workBase, Set<Flaw> flaws,
            Optional<GuestUser> guestUser, NamespaceLauncher launcher) {
        this.storage = Objects.requireNonNull(storage, "storage");
        this.processLimit = Objects.requireNonNull(processLimit, "processLimit");
        this.launcher = Objects.requireNonNull(launcher, "launcher");
        this.files = new GuestFiles(storage, workBase, flaws.contains(Flaw.FOLLOWS_SYMLINKS), guestUser);
    }

    @Override
    public ExecResult exec(Command command, ExecOptions options) {
        Objects.requireNonNull(command, "command");
        Objects.requireNonNull(options, "options");
        List<String> guestArgv = command instanceof Command.Argv
                ? ((Command.Argv) command).words()
                : List.of(NamespaceLauncher.SHELL, "-c", ((Command.Shell) command).line());
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

    /** The bootstrap failed before the command started: a typed error, never the command's exit code. */
    private SandboxException refusal(BootstrapFailure failure, String workingDirectory, ExecResult result) {
        return switch (failure) {
            case WORKING_DIRECTORY_MISSING -> ExecRefusals.workingDirectoryMissing(workingDirectory);
            case WORKING_DIRECTORY_NOT_A_DIRECTORY -> ExecRefusals.workingDirectoryNotADirectory(workingDirectory);
            case WORKING_DIRECTORY_UNENTERABLE -> new SandboxException("backend '" + launcher.backendName()
                    + "' could not enter the working directory " + GuestText.quote(workingDirectory)
                    + ", so nothing ran: let the guest search it, or run in another");
            case PROCESS_LIMIT, MOUNT -> new SandboxException("backend '" + launcher.backendName() + "' could not "
                    + (failure == BootstrapFailure.MOUNT ? "mount the sandbox's storage" : "join its process limit")
                    + " before the command started, so nothing ran: " + GuestText.quote(result.stderrText()));
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
