package org.sandbox4j.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.List;

/** The raw mechanism's side of a row: a host process started straight from Java, its output dropped. */
final class RawProcess {

    /** The PATH a sandbox4j launch gets; a direct launch gets it too, and nothing else. */
    private static final String LAUNCH_PATH = "/usr/bin:/bin:/usr/sbin:/sbin";

    private RawProcess() {
    }

    /** A builder for a backend's own command line, with the bare environment that line expects. */
    static ProcessBuilder bare(List<String> line) {
        ProcessBuilder builder = new ProcessBuilder(line);
        builder.environment().clear();
        builder.environment().put("PATH", LAUNCH_PATH);
        return builder;
    }

    /** Runs to exit with nothing on stdin, both streams read and dropped; fails on a non-zero exit. */
    static void runExpectingSuccess(ProcessBuilder builder) throws IOException, InterruptedException {
        int exit = WarmSandboxBenchmark.runToExit(builder);
        if (exit != 0) {
            throw new IllegalStateException("exit " + exit + " from " + builder.command());
        }
    }

    /**
     * Runs to exit with stderr discarded and stdout drained into a null stream; returns how many
     * bytes stdout carried. Fails on a non-zero exit.
     */
    static long drainStdout(ProcessBuilder builder) throws IOException, InterruptedException {
        Process process = builder.redirectError(ProcessBuilder.Redirect.DISCARD).start();
        process.getOutputStream().close();
        long bytes;
        try (InputStream stdout = process.getInputStream()) {
            bytes = stdout.transferTo(OutputStream.nullOutputStream());
        }
        int exit = process.waitFor();
        if (exit != 0) {
            throw new IllegalStateException("exit " + exit + " from " + builder.command());
        }
        return bytes;
    }
}
