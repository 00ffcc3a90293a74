package org.sandbox4j.core.tool;

import java.util.Objects;
import java.util.OptionalInt;

/**
 * What a tool call hands back to the model: text, whether it reports a failure, and the exit code
 * of the program it ran, when it ran one to an exit. An error's text is a fixed sentence starting
 * {@code Error:} (or the program's own output); provider detail never appears in it.
 */
public record ToolResult(String text, boolean error, OptionalInt exitCode) {

    public ToolResult {
        Objects.requireNonNull(text, "text");
        Objects.requireNonNull(exitCode, "exitCode");
    }

    /** A result of no program's exit. */
    public ToolResult(String text, boolean error) {
        this(text, error, OptionalInt.empty());
    }

    public static ToolResult ok(String text) {
        return new ToolResult(text, false);
    }

    public static ToolResult error(String text) {
        return new ToolResult(text, true);
    }

    /** A program's report: an error exactly when it exited with other than 0, as a shell sees it. */
    public static ToolResult ofProgram(String text, int exitCode) {
        return new ToolResult(text, exitCode != 0, OptionalInt.of(exitCode));
    }

    /** The same result, now an error with {@code text} (a step after the program failed), its exit code kept. */
    public ToolResult failedAfter(String text) {
        return new ToolResult(text, true, exitCode);
    }
}
