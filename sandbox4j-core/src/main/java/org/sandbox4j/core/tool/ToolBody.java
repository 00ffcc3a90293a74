package org.sandbox4j.core.tool;

import java.util.Map;

/** What a kind does on each call, written against core alone. */
@FunctionalInterface
public interface ToolBody {

    /**
     * Serves one call.
     *
     * @param call      this call's key, acquire and guest path (see {@link ToolCall})
     * @param arguments the model's arguments, decoded from JSON (see {@link org.sandbox4j.core.spi.Json});
     *                  unmodifiable
     * @return the model-facing result
     * @throws ToolRefusal to end the call with a sentence for the model
     */
    ToolResult call(ToolCall call, Map<String, Object> arguments);
}
