package org.sandbox4j.core.tool;

import java.util.Objects;

/**
 * What a tool call hands back to the model: text, and whether it reports a failure. An error's
 * text is a fixed sentence starting {@code Error:} (or the program's own output); provider detail
 * never appears in it.
 */
public record ToolResult(String text, boolean error) {

    public ToolResult {
        Objects.requireNonNull(text, "text");
    }

    public static ToolResult ok(String text) {
        return new ToolResult(text, false);
    }

    public static ToolResult error(String text) {
        return new ToolResult(text, true);
    }
}
