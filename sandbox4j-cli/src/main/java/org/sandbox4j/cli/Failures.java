package org.sandbox4j.cli;

import java.util.Map;
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
    /** 128 + SIGKILL: how a shell reports a process the kernel's OOM killer (or anyone) killed. */
    static final int KILLED = 137;

    /**
     * Library sentences written for a Java caller, and what a command-line user writes instead:
     * every core message that reaches the user passes through {@link #forUser}.
     */
    private static final Map<String, String> JAVA_TO_FLAGS = Map.of(
            "raise the cap with ExecOptions.withOutputCap", "raise the cap with " + SandboxOptions.MAX_OUTPUT_FLAG,
            ", or allow pulling with pullPolicy(PullPolicy.IF_MISSING)", " (sandbox4j pulls nothing)",
            "raise the timeout, or make", "raise it with --timeout, or make",
            "(stateRoot(...) on the builder, or set XDG_STATE_HOME)", "(--state-dir DIR, or SANDBOX4J_STATE_DIR)");

    private Failures() {
    }

    /** A refusal or failure the library threw directly (building the tool, acquiring, exec). */
    static CliFailure of(SandboxException failure) {
        String message = forUser(failure.getMessage());
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
            return CliFailure.timedOut(said + " Raise the limit with --timeout.");
        }
        if (cause instanceof SandboxExecOutputLimitExceeded) {
            return CliFailure.failed(said + " To allow more, raise the cap with " + SandboxOptions.MAX_OUTPUT_FLAG + ".");
        }
        if (cause instanceof SandboxException provider && isPolicy(provider)) {
            return CliFailure.refused("refused: " + forUser(provider.getMessage()));
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

    /**
     * What to say when the program exited 137: killed, most likely by the kernel for memory (a
     * timeout or an output cap would have said so itself).
     *
     * @param memoryBytes the sandbox's memory limit, where the command knows it
     */
    static Optional<String> killed(int exitCode, Optional<Long> memoryBytes) {
        if (exitCode != KILLED) {
            return Optional.empty();
        }
        String limit = memoryBytes.map(bytes -> "the memory limit of " + Sizes.describe(bytes))
                .orElse("the sandbox's memory limit (sandbox4j doctor shows it)");
        return Optional.of("the program was killed (exit " + KILLED + "): it may have exceeded " + limit
                + "; raise it with " + GuestLimits.MEMORY_FLAG);
    }

    /** A library message with the Java API it names replaced by the flag a user passes. */
    static String forUser(String message) {
        String said = message == null ? "" : message;
        for (Map.Entry<String, String> replacement : JAVA_TO_FLAGS.entrySet()) {
            said = said.replace(replacement.getKey(), replacement.getValue());
        }
        return said;
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
