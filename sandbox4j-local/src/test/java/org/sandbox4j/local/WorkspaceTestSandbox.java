package org.sandbox4j.local;

import org.sandbox4j.core.spi.WorkspaceFiles;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxEntry;
import org.sandbox4j.core.SandboxExecOutputLimitExceeded;
import org.sandbox4j.core.SandboxInterrupted;
import org.sandbox4j.core.SandboxTimeoutException;

/**
 * TEST ONLY: a sandbox whose file methods are {@link WorkspaceFiles} over a host directory and
 * whose {@code exec} runs the command in bubblewrap with that directory bound at the mount point,
 * {@code /usr} read-only, private {@code /tmp}, {@code /proc}, {@code /dev} and every namespace
 * unshared, so nothing a probe runs can touch the host's file system outside the workspace.
 */
final class WorkspaceTestSandbox implements Sandbox {

    static final String BWRAP = "/usr/bin/bwrap";
    private static final String GUEST_PATH = "/usr/bin:/bin:/usr/sbin:/sbin";

    private final Path workspace;
    private final String mountPoint;
    private final WorkspaceFiles files;

    WorkspaceTestSandbox(Path workspace, String mountPoint, String backendName) {
        this.workspace = workspace;
        this.mountPoint = mountPoint;
        this.files = new WorkspaceFiles(workspace, mountPoint, backendName);
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

    @Override
    public ExecResult exec(Command command, ExecOptions options) {
        List<String> argv = new ArrayList<>(List.of(BWRAP,
                "--bind", workspace.toString(), mountPoint,
                "--ro-bind", "/usr", "/usr",
                "--symlink", "usr/bin", "/bin",
                "--symlink", "usr/lib", "/lib",
                "--symlink", "usr/lib64", "/lib64",
                "--symlink", "usr/sbin", "/sbin",
                "--proc", "/proc",
                "--dev", "/dev",
                "--tmpfs", "/tmp",
                "--unshare-all",
                "--die-with-parent",
                "--clearenv",
                "--setenv", "PATH", GUEST_PATH,
                "--chdir", options.workingDirectory()));
        options.environment().forEach((name, value) -> argv.addAll(List.of("--setenv", name, value)));
        argv.add("--");
        if (command instanceof Command.Argv words) {
            argv.addAll(words.words());
        } else {
            argv.addAll(List.of("sh", "-c", command.toShellLine()));
        }
        return run(argv, options);
    }

    private static ExecResult run(List<String> argv, ExecOptions options) {
        long started = System.nanoTime();
        ProcessBuilder builder = new ProcessBuilder(argv);
        builder.environment().clear();
        Process process;
        try {
            process = builder.start();
        } catch (IOException e) {
            throw new UncheckedIOException("could not start bwrap", e);
        }
        ExecutorService pumps = Executors.newFixedThreadPool(2);
        try {
            AtomicLong budget = new AtomicLong(options.outputCapBytes());
            Future<byte[]> stdout = pumps.submit(() -> drain(process.getInputStream(), budget));
            Future<byte[]> stderr = pumps.submit(() -> drain(process.getErrorStream(), budget));
            try (OutputStream stdin = process.getOutputStream()) {
                if (options.stdin().isPresent()) {
                    stdin.write(options.stdin().get());
                }
            } catch (IOException ignored) {
                // The command need not read its input.
            }
            if (!process.waitFor(options.timeout().toNanos(), TimeUnit.NANOSECONDS)) {
                throw new SandboxTimeoutException("the command did not finish within " + options.timeout());
            }
            byte[] out = stdout.get();
            byte[] err = stderr.get();
            if (budget.get() < 0) {
                throw new SandboxExecOutputLimitExceeded("the command wrote more than " + options.outputCapBytes()
                        + " bytes of output");
            }
            return new ExecResult(out, err, process.exitValue(), Duration.ofNanos(System.nanoTime() - started));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SandboxInterrupted("interrupted while running a command", e);
        } catch (ExecutionException e) {
            throw new IllegalStateException("could not read the command's output", e.getCause());
        } finally {
            // The PID namespace ends with bwrap, taking every guest process with it.
            process.destroyForcibly();
            pumps.shutdownNow();
        }
    }

    /** Reads a stream to its end, keeping at most what is left of the shared budget. */
    private static byte[] drain(InputStream stream, AtomicLong budget) throws IOException {
        ByteArrayOutputStream kept = new ByteArrayOutputStream();
        byte[] chunk = new byte[8192];
        int read;
        while ((read = stream.read(chunk)) > 0) {
            long left = budget.addAndGet(-read);
            if (left >= 0) {
                kept.write(chunk, 0, read);
            }
        }
        return kept.toByteArray();
    }
}
