package org.sandbox4j.core.tool;

import java.util.Objects;

/**
 * Ends a tool call with a sentence for the model. Thrown by {@link ToolCall}'s accessors and by
 * tool bodies; {@link SandboxTool#call} turns it into an error {@link ToolResult}. The sentence
 * must be fit for a model: fixed text plus, at most, validated names — never a provider's detail.
 */
public final class ToolRefusal extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public ToolRefusal(String sentence) {
        super(Objects.requireNonNull(sentence, "sentence"), null, false, false);
    }

    public ToolRefusal(String sentence, Throwable cause) {
        super(Objects.requireNonNull(sentence, "sentence"), cause, false, false);
    }

    /** The text the model sees. */
    public String sentence() {
        return getMessage();
    }
}
