package org.sandbox4j.codeact;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

import org.sandbox4j.core.ExecListener;
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
    private final boolean supervised;

    CodeActRunner(SandboxTool tool, boolean supervised) {
        this.tool = Objects.requireNonNull(tool, "tool");
        this.supervised = supervised;
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
        return run(arguments, Program.AS_IS);
    }

    /**
     * Runs one call as {@link #run(Map)} does, with what a host program gives its program beyond
     * the tool's arguments: standard input, command-line arguments, and a listener for its output
     * as it arrives.
     *
     * @throws IllegalArgumentException standard input or arguments for a tool built with host
     *                                  tools, whose program the supervisor starts
     */
    public Run run(Map<String, Object> arguments, Program program) {
        Objects.requireNonNull(program, "program");
        if (supervised && (program.stdin.isPresent() || !program.arguments().isEmpty())) {
            throw new IllegalArgumentException("standard input and program arguments cannot be given to a runner "
                    + "built with host tools (their supervisor starts the program); build it without hostTools");
        }
        Observation observation = new Observation(program);
        Observation outer = WAITING.get();
        WAITING.set(observation);
        ToolResult result;
        try {
            result = program.output().isPresent() ? tool.call(arguments, program.output().get())
                    : tool.call(arguments);
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

    /**
     * What the program gets beyond its source: standard input (fed whole, then closed), the
     * arguments after its file name, and a listener that sees its output as it arrives (the run's
     * result holds all of it too).
     */
    public record Program(Optional<byte[]> stdin, List<String> arguments, Optional<ExecListener> output) {

        /** No input, no arguments, nothing streamed: what {@link #run(Map)} gives. */
        public static final Program AS_IS = new Program(Optional.empty(), List.of(), Optional.empty());

        public Program {
            stdin = Objects.requireNonNull(stdin, "stdin").map(byte[]::clone);
            arguments = List.copyOf(arguments);
            Objects.requireNonNull(output, "output");
        }

        @Override
        public Optional<byte[]> stdin() {
            return stdin.map(byte[]::clone);
        }

        public Program withStdin(byte[] input) {
            return new Program(Optional.of(input), arguments, output);
        }

        public Program withArguments(List<String> values) {
            return new Program(stdin, values, output);
        }

        public Program withOutput(ExecListener listener) {
            return new Program(stdin, arguments, Optional.of(listener));
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof Program that && arguments.equals(that.arguments) && output.equals(that.output)
                    && stdin.isPresent() == that.stdin.isPresent()
                    && (stdin.isEmpty() || Arrays.equals(stdin.get(), that.stdin.get()));
        }

        @Override
        public int hashCode() {
            return Objects.hash(arguments, output, stdin.map(Arrays::hashCode).orElse(0));
        }

        @Override
        public String toString() {
            return "Program[stdin=" + stdin.map(bytes -> bytes.length + " bytes").orElse("none") + ", arguments="
                    + arguments.size() + ", output=" + (output.isPresent() ? "streamed" : "buffered") + "]";
        }
    }

    /** Filled by the body on the caller's thread. */
    static final class Observation {
        private final Program program;
        private CodeActOutcome outcome;
        private RuntimeException failure;

        Observation(Program program) {
            this.program = program;
        }

        Program program() {
            return program;
        }

        void outcome(CodeActOutcome value) {
            this.outcome = value;
        }

        void failure(RuntimeException value) {
            this.failure = value;
        }
    }
}
