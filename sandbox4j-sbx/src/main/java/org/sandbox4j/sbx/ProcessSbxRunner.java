package org.sandbox4j.sbx;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.sandbox4j.core.spi.ErrorDetail;

/** Runs the real {@code sbx} binary with the configured environment added to the host's. */
final class ProcessSbxRunner implements SbxRunner {

    /** Each stream of a management command is kept up to this many bytes; the rest is read and dropped. */
    static final int MAX_REPLY_BYTES = 4 * 1024 * 1024;
    private static final Duration DRAIN_GRACE = Duration.ofSeconds(5);

    private final SbxConfig config;

    ProcessSbxRunner(SbxConfig config) {
        this.config = config;
    }

    @Override
    public SbxReply run(List<String> args, Duration timeout) {
        Process process;
        try {
            process = start(args);
        } catch (IOException e) {
            throw new SandboxRunnerFailure("backend '" + config.name() + "' could not run " + config.sbxPath() + " ("
                    + ErrorDetail.of(e) + "); install sbx (Windows: winget install -h Docker.sbx; macOS: brew install "
                    + "docker/tap/sbx; Ubuntu: the docker-sbx apt package) or name it with "
                    + "SbxConfig.builder().sbxPath(path)", e);
        }
        closeQuietly(process);
        BoundedReader out = new BoundedReader(process.getInputStream());
        BoundedReader err = new BoundedReader(process.getErrorStream());
        out.start();
        err.start();
        boolean exited;
        try {
            exited = process.waitFor(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new org.sandbox4j.core.SandboxInterrupted("interrupted while running sbx " + String.join(" ", args), e);
        }
        if (!exited) {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
        }
        out.await();
        err.await();
        return new SbxReply(exited ? process.exitValue() : -1, out.text(), err.text(), !exited);
    }

    @Override
    public Process start(List<String> args) throws IOException {
        List<String> argv = new ArrayList<>(args.size() + 1);
        argv.add(config.sbxPath());
        argv.addAll(args);
        ProcessBuilder builder = new ProcessBuilder(argv);
        builder.environment().putAll(config.environment());
        return builder.start();
    }

    private static void closeQuietly(Process process) {
        try {
            process.getOutputStream().close();
        } catch (IOException ignored) {
            // Nothing to feed: a closed stdin is all sbx gets.
        }
    }

    /** Reads one stream to its end, keeping at most {@link #MAX_REPLY_BYTES}. */
    private static final class BoundedReader extends Thread {
        private final InputStream stream;
        private final ByteArrayOutputStream kept = new ByteArrayOutputStream();

        BoundedReader(InputStream stream) {
            super("sandbox4j-sbx-reply");
            this.stream = stream;
            setDaemon(true);
        }

        @Override
        public void run() {
            byte[] chunk = new byte[8192];
            try (stream) {
                int read;
                while ((read = stream.read(chunk)) >= 0) {
                    synchronized (kept) {
                        int room = MAX_REPLY_BYTES - kept.size();
                        kept.write(chunk, 0, Math.max(0, Math.min(room, read)));
                    }
                }
            } catch (IOException closed) {
                // Killed under the reader: what was read is kept.
            }
        }

        void await() {
            try {
                join(DRAIN_GRACE.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        String text() {
            synchronized (kept) {
                return kept.toString(StandardCharsets.UTF_8);
            }
        }
    }
}
