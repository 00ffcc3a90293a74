package org.sandbox4j.core.tool;

import java.util.Map;
import java.util.Objects;
import java.util.Optional;

import org.sandbox4j.core.ExecListener;
import org.sandbox4j.core.spi.Json;

/**
 * A kind as a framework-neutral tool: what an adapter needs to present it to a model and to call
 * it. Built by {@link SandboxedTool}; immutable and thread-safe.
 */
public final class SandboxTool {

    static final String NOT_AN_OBJECT = "Error: the tool's arguments must be a JSON object";

    private final SandboxedTool binding;

    SandboxTool(SandboxedTool binding) {
        this.binding = binding;
    }

    /** The name the model calls. */
    public String name() {
        return binding.name();
    }

    /** The model-facing description. */
    public String description() {
        return binding.description();
    }

    /** The JSON schema (an object schema) of the parameters, as JSON text. */
    public String parametersSchema() {
        return binding.parametersSchema();
    }

    /** Whether a person must approve each call (a host tool acts with the user's identity). */
    public boolean requiresApproval() {
        return binding.requiresApproval();
    }

    /**
     * Runs one call. Never throws for anything the model or the provider did: refusals and
     * failures come back as an error result with a fixed sentence, the detail in the log.
     *
     * @throws org.sandbox4j.core.SandboxInterrupted the calling thread was interrupted; the call's
     *                                               directory was still reclaimed (with a short bound)
     */
    public ToolResult call(Map<String, Object> arguments) {
        return binding.invoke(Objects.requireNonNull(arguments, "arguments"), Optional.empty());
    }

    /**
     * Runs one call as {@link #call(Map)} does, and hands {@code output} what the call's program
     * prints as it arrives, for a host that shows progress (an MCP client's progress
     * notifications, a terminal). The result still holds all of it. A kind that runs no program
     * of the caller's, or cannot watch it, hands {@code output} nothing.
     */
    public ToolResult call(Map<String, Object> arguments, ExecListener output) {
        return binding.invoke(Objects.requireNonNull(arguments, "arguments"),
                Optional.of(Objects.requireNonNull(output, "output")));
    }

    /** Runs one call with the arguments as JSON text, as most frameworks hand them over. */
    public ToolResult callJson(String argumentsJson) {
        Map<String, Object> arguments;
        try {
            arguments = argumentsJson == null || argumentsJson.isBlank() ? Map.of() : Json.parseObject(argumentsJson);
        } catch (Json.Malformed malformed) {
            return ToolResult.error(NOT_AN_OBJECT);
        }
        return call(arguments);
    }

    @Override
    public String toString() {
        return "SandboxTool[" + name() + "]";
    }
}
