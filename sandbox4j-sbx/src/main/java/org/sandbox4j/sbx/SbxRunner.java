package org.sandbox4j.sbx;

import java.io.IOException;
import java.time.Duration;
import java.util.List;

/**
 * The one seam through which the backend runs {@code sbx}: every invocation is an argv after the
 * binary. Tests replace it with a recording fake; {@link ProcessSbxRunner} runs the real binary.
 */
interface SbxRunner {

    /**
     * Runs {@code sbx args...} to completion, stdin empty, each stream bounded, killed at
     * {@code timeout}.
     *
     * @throws SandboxRunnerFailure when the binary cannot be started
     */
    SbxReply run(List<String> args, Duration timeout);

    /** Starts {@code sbx args...} for a streamed exec; the caller reads, feeds and reaps it. */
    Process start(List<String> args) throws IOException;

    /** The binary could not be run at all (missing, not executable). */
    final class SandboxRunnerFailure extends org.sandbox4j.core.SandboxException {
        private static final long serialVersionUID = 1L;

        SandboxRunnerFailure(String message, Throwable cause) {
            super(message, cause);
        }
    }
}
