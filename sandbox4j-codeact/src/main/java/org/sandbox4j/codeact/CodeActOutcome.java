package org.sandbox4j.codeact;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.outputs.LandedArtifact;
import org.sandbox4j.core.tool.ToolResult;

/**
 * One {@code execute_code} call as a host program (a command line, a test) needs it: the
 * model-facing {@link ToolResult}, plus the structured facts behind it, so nobody parses the
 * report text back.
 *
 * @param result     exactly what the tool hands the model for this call
 * @param program    the program's run when it ran to an exit: both streams verbatim and its own
 *                   exit code; empty when the call was refused or failed before or during it
 * @param saved      declared outputs that landed in the sink
 * @param notWritten declared outputs the program did not write
 * @param problem    why outputs could not be saved, when the program exited 0 and saving failed
 *                   (the sentence the result also ends with)
 */
public record CodeActOutcome(ToolResult result, Optional<ExecResult> program, List<LandedArtifact> saved,
        List<String> notWritten, Optional<String> problem) {

    public CodeActOutcome {
        Objects.requireNonNull(result, "result");
        Objects.requireNonNull(program, "program");
        saved = List.copyOf(saved);
        notWritten = List.copyOf(notWritten);
        Objects.requireNonNull(problem, "problem");
    }

    /** A program that ran, with nothing to save. */
    static CodeActOutcome ran(String report, ExecResult program) {
        return new CodeActOutcome(ToolResult.ofProgram(report, program.exitCode()), Optional.of(program), List.of(),
                List.of(), Optional.empty());
    }

    /** A call that ended before the program ran to an exit: the result is the refusal's sentence. */
    static CodeActOutcome ended(ToolResult result) {
        return new CodeActOutcome(result, Optional.empty(), List.of(), List.of(), Optional.empty());
    }
}
