package org.sandbox4j.codeact;

import java.util.Map;
import java.util.Objects;
import java.util.Optional;

import org.sandbox4j.core.tool.SandboxTool;
import org.sandbox4j.core.tool.ToolRefusal;
import org.sandbox4j.core.tool.ToolResult;

/**
 * {@code execute_code} for a host program rather than a model: the same tool, the same per-call
 * flow (key, caps, acquire, runtime check, run, outputs, call directory reclaimed), answered with
 * a {@link Run} that holds the program's own streams and exit code beside the model's text.
 * Built by {@link CodeAct.Builder#buildRunner()}; thread-safe.
 */
public final class CodeActRunner {

    /**
     * What the body reports to the runner waiting on the same thread. The tool runs its body on
     * the caller's thread (the call is synchronous), so a thread-local hand-off needs no second
     * copy of the flow and no change to the tool glue.
     */
    private static final ThreadLocal<Observation> WAITING = new ThreadLocal<>();

    private final SandboxTool tool;

    CodeActRunner(SandboxTool tool) {
        this.tool = Objects.requireNonNull(tool, "tool");
    }

    /** The tool itself, for a host that also hands it to a model. */
    public SandboxTool tool() {
        return tool;
    }

    /**
     * Runs one call with the tool's arguments ({@code code}, {@code language}, {@code files},
     * {@code outputs}).
     *
     * @throws org.sandbox4j.core.SandboxInterrupted the calling thread was interrupted
     */
    public Run run(Map<String, Object> arguments) {
        Observation observation = new Observation();
        Observation outer = WAITING.get();
        WAITING.set(observation);
        ToolResult result;
        try {
            result = tool.call(arguments);
        } finally {
            if (outer == null) {
                WAITING.remove();
            } else {
                WAITING.set(outer);
            }
        }
        CodeActOutcome outcome = observation.outcome != null ? observation.outcome : CodeActOutcome.ended(result);
        return new Run(outcome, Optional.ofNullable(observation.failure));
    }

    static Observation observer() {
        return WAITING.get();
    }

    /**
     * One call's answer.
     *
     * @param outcome the result and the structured facts behind it
     * @param failure what ended the call before the program ran to an exit (a {@link ToolRefusal},
     *                whose cause, when any, holds the provider's detail: a timeout, a policy
     *                refusal, an unavailable backend), or an unexpected failure; empty when the
     *                program ran
     */
    public record Run(CodeActOutcome outcome, Optional<RuntimeException> failure) {

        public Run {
            Objects.requireNonNull(outcome, "outcome");
            Objects.requireNonNull(failure, "failure");
        }
    }

    /** Filled by the body on the caller's thread. */
    static final class Observation {
        private CodeActOutcome outcome;
        private RuntimeException failure;

        void outcome(CodeActOutcome value) {
            this.outcome = value;
        }

        void failure(RuntimeException value) {
            this.failure = value;
        }
    }
}
