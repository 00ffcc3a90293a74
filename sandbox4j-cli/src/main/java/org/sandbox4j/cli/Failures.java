package org.sandbox4j.cli;

import java.util.Optional;

import org.sandbox4j.core.spi.ErrorDetail;
import org.sandbox4j.core.NoSandboxBackend;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxExecOutputLimitExceeded;
import org.sandbox4j.core.SandboxNoBackendCanServe;
import org.sandbox4j.core.SandboxPolicyRefusal;
import org.sandbox4j.core.SandboxTimeoutException;
import org.sandbox4j.core.SandboxUnsupportedRefusal;
import org.sandbox4j.core.tool.ToolRefusal;

/**
 * Turns what the library threw into an exit code and a line for the user. The user here is the
 * host, not a model: the provider's own detail is shown, after the tool's fixed sentence.
 */
final class Failures {

    private static final String ERROR_PREFIX = "Error: ";

    private Failures() {
    }

    /** A refusal or failure the library threw directly (building the tool, acquiring, exec). */
    static CliFailure of(SandboxException failure) {
        String message = failure.getMessage();
        if (isPolicy(failure)) {
            return CliFailure.refused("refused: " + message);
        }
        if (failure instanceof SandboxTimeoutException) {
            return CliFailure.timedOut(message);
        }
        if (failure instanceof SandboxExecOutputLimitExceeded) {
            return CliFailure.failed(message);
        }
        return CliFailure.unavailable(message);
    }

    /**
     * A call of the tool that ended before the program ran to an exit: the tool's sentence, and the
     * cause's detail when there is one.
     */
    static CliFailure ofCall(String text, Optional<RuntimeException> failure) {
        Throwable cause = failure.filter(ToolRefusal.class::isInstance).map(Throwable::getCause).orElse(null);
        String said = sentence(text);
        if (cause instanceof SandboxTimeoutException) {
            return CliFailure.timedOut(said);
        }
        if (cause instanceof SandboxExecOutputLimitExceeded) {
            return CliFailure.failed(said);
        }
        if (cause instanceof SandboxException provider && isPolicy(provider)) {
            return CliFailure.refused("refused: " + provider.getMessage());
        }
        if (cause instanceof NoSandboxBackend || cause instanceof LinkageError) {
            return CliFailure.unavailable(said + " (" + ErrorDetail.of(cause) + ")");
        }
        if (cause instanceof RuntimeException provider) {
            // The acquire, a write or the run failed in the backend: it is not usable right now.
            return CliFailure.unavailable(said + " (" + ErrorDetail.of(provider) + ")");
        }
        if (failure.isPresent() && !(failure.get() instanceof ToolRefusal)) {
            return CliFailure.failed(said + " (" + ErrorDetail.of(failure.get()) + ")");
        }
        return CliFailure.failed(said);
    }

    /** The tool's text without its model-facing {@code Error:} lead. */
    static String sentence(String text) {
        return text.startsWith(ERROR_PREFIX) ? text.substring(ERROR_PREFIX.length()) : text;
    }

    static boolean isPolicy(SandboxException failure) {
        return failure instanceof SandboxPolicyRefusal || failure instanceof SandboxUnsupportedRefusal
                || failure instanceof SandboxNoBackendCanServe;
    }
}
