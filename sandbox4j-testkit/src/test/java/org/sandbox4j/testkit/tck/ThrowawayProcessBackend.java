package org.sandbox4j.testkit.tck;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.sandbox4j.core.BackendDeclarations;
import org.sandbox4j.core.Capability;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.ExecStream;
import org.sandbox4j.core.Isolation;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxExecOutputLimitExceeded;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.SandboxTimeoutException;

/**
 * A throwaway exec-only backend for developing the EXEC suite before the reference backend lands:
 * host processes, optionally in a PID namespace ({@code unshare --kill-child}) and with a cleared
 * environment. Without them it shows two classic flaws: the host environment leaks, and a timeout
 * kills only the direct child. No file methods, no boundary.
 */
final class ThrowawayProcessBackend implements SandboxBackend {

    private static final int CHUNK = 8192;
    private static final List<String> PID_NAMESPACE =
            List.of("unshare", "--pid", "--fork", "--kill-child", "--mount-proc");

    private final boolean pidNamespace;
    private final boolean clearEnvironment;

    ThrowawayProcessBackend(boolean pidNamespace, boolean clearEnvironment) {
        this.pidNamespace = pidNamespace;
        this.clearEnvironment = clearEnvironment;
    }

    static ConformanceTarget target(Path base, boolean pidNamespace, boolean clearEnvironment) {
        return new ConformanceTarget() {
            @Override
            public SandboxBackend newBackend() {
                return new ThrowawayProcessBackend(pidNamespace, clearEnvironment);
            }

            @Override
            public String workBase() {
                return base.toString();
            }
        };
    }

    @Override
    public String name() {
        return "throwaway-process" + (pidNamespace ? "+pidns" : "") + (clearEnvironment ? "+clearenv" : "");
    }

    @Override
    public BackendDeclarations declarations() {
        return BackendDeclarations.builder(Isolation.OS_PROCESS).capabilities(Capability.EXEC, Capability.FILES_IN)
                .build();
    }

    @Override
    public Sandbox acquire(SandboxKey key, SandboxSpec spec) {
        return new Sandbox() {
            @Override
            public void writeFile(String path, byte[] content, String workingDirectory) {
                try {
                    Path target = Path.of(workingDirectory).resolve(path);
                    Files.createDirectories(target.getParent());
                    Files.write(target, content);
                } catch (IOException failure) {
                    throw new SandboxException("write failed: " + failure.getMessage(), failure);
                }
            }

            @Override
            public ExecResult exec(Command command, ExecOptions options) {
                return run(command, options);
            }
        };
    }

    @Override
    public void dispose(SandboxKey key) {
    }

    @Override
    public int disposeScope(String scope, String threadId) {
        return 0;
    }

    private ExecResult run(Command command, ExecOptions options) {
        List<String> argv = new ArrayList<>();
        if (pidNamespace) {
            argv.addAll(PID_NAMESPACE);
        }
        if (command instanceof Command.Argv words) {
            argv.addAll(words.words());
        } else {
            argv.addAll(List.of("sh", "-c", command.toShellLine()));
        }
        ProcessBuilder builder = new ProcessBuilder(argv);
        if (!Files.isDirectory(Path.of(options.workingDirectory()))) {
            throw new SandboxException("no working directory " + options.workingDirectory());
        }
        builder.directory(Path.of(options.workingDirectory()).toFile());
        if (clearEnvironment) {
            builder.environment().keySet().removeIf(name -> !name.equals("PATH"));
        }
        builder.environment().putAll(options.environment());
        long started = System.nanoTime();
        Process process;
        try {
            process = builder.start();
        } catch (IOException failure) {
            throw new SandboxException("could not start: " + failure.getMessage(), failure);
        }
        AtomicLong total = new AtomicLong();
        AtomicBoolean overCap = new AtomicBoolean();
        ByteArrayOutputStream stdout = new ByteArrayOutputStream();
        ByteArrayOutputStream stderr = new ByteArrayOutputStream();
        Thread out = pump(process.getInputStream(), stdout, ExecStream.STDOUT, options, total, overCap, process);
        Thread err = pump(process.getErrorStream(), stderr, ExecStream.STDERR, options, total, overCap, process);
        Thread in = new Thread(() -> {
            try (OutputStream stdin = process.getOutputStream()) {
                stdin.write(options.stdin().orElse(new byte[0]));
            } catch (IOException ignored) {
                // The command exited without reading it all.
            }
        });
        in.start();
        try {
            boolean ended = process.waitFor(options.timeout().toNanos(), TimeUnit.NANOSECONDS);
            if (!ended) {
                process.destroyForcibly();
                throw new SandboxTimeoutException("timed out after " + options.timeout());
            }
            out.join();
            err.join();
        } catch (InterruptedException interrupted) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new SandboxException("interrupted", interrupted);
        }
        if (overCap.get()) {
            throw new SandboxExecOutputLimitExceeded("over the cap of " + options.outputCapBytes());
        }
        synchronized (stdout) {
            synchronized (stderr) {
                return new ExecResult(stdout.toByteArray(), stderr.toByteArray(), process.exitValue(),
                        Duration.ofNanos(System.nanoTime() - started));
            }
        }
    }

    private static Thread pump(InputStream source, ByteArrayOutputStream sink, ExecStream stream, ExecOptions options,
            AtomicLong total, AtomicBoolean overCap, Process process) {
        Thread pump = new Thread(() -> {
            byte[] buffer = new byte[CHUNK];
            try (source) {
                int read;
                while ((read = source.read(buffer)) > 0) {
                    long allowed = options.outputCapBytes() - total.getAndAdd(read);
                    int kept = (int) Math.max(0, Math.min(read, allowed));
                    if (kept > 0) {
                        synchronized (sink) {
                            sink.write(buffer, 0, kept);
                        }
                        byte[] chunk = java.util.Arrays.copyOf(buffer, kept);
                        options.listener().ifPresent(listener -> listener.onOutput(stream, chunk));
                    }
                    if (kept < read) {
                        overCap.set(true);
                        process.destroyForcibly();
                        return;
                    }
                }
            } catch (IOException closed) {
                // The process was killed.
            }
        });
        pump.setDaemon(true);
        pump.start();
        return pump;
    }
}
