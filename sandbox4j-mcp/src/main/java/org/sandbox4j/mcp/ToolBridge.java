package org.sandbox4j.mcp;

import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.server.McpServerFeatures.SyncToolSpecification;
import io.modelcontextprotocol.server.McpSyncServerExchange;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.modelcontextprotocol.spec.McpSchema.Tool;
import io.modelcontextprotocol.spec.McpSchema.ToolAnnotations;

import org.sandbox4j.core.ExecListener;
import org.sandbox4j.core.spi.ErrorDetail;
import org.sandbox4j.core.spi.Json;
import org.sandbox4j.core.tool.CallApproval;
import org.sandbox4j.core.tool.FrameworkCalls;
import org.sandbox4j.core.tool.SandboxTool;
import org.sandbox4j.core.tool.ToolResult;

/**
 * Presents a {@link SandboxTool} as an MCP tool: its name, description and parameter schema as
 * they are, a fixed output schema for the structured result, and a handler that runs the call
 * as the exchange's session (through core's {@link FrameworkCalls}, which asks the approval and
 * answers failures with its fixed sentences).
 */
final class ToolBridge {

    static final Logger LOG = System.getLogger(ToolBridge.class.getName());

    /** The {@code _meta} key saying a person must approve each call; MCP has no standard field for it. */
    static final String REQUIRES_APPROVAL_META = "org.sandbox4j/requiresApproval";

    /** The structured result every tool returns: the text the model reads and whether it reports a failure. */
    static final String OUTPUT_SCHEMA = "{\"type\":\"object\",\"properties\":{"
            + "\"text\":{\"type\":\"string\"},\"error\":{\"type\":\"boolean\"}},"
            + "\"required\":[\"text\",\"error\"]}";

    private ToolBridge() {
    }

    /**
     * The body of a call: the session, the model's arguments and, when the client asked for
     * progress, where the program's output goes as it arrives; the result out; never throws.
     */
    @FunctionalInterface
    interface Body {
        ToolResult call(String session, Map<String, Object> arguments, Optional<ExecListener> output);
    }

    /** The MCP tool for {@code tool}; calls run through {@code calls} as the exchange's session, recorded in {@code ledger}. */
    static SyncToolSpecification specification(SandboxTool tool, McpJsonMapper mapper, FrameworkCalls calls,
            Optional<CallApproval> approval, SessionLedger ledger, ClientCancellations cancellations) {
        return specification(describe(tool, mapper), (session, arguments, output) -> {
            // Through JSON text, so the kind parses the arguments with core's own reader, as every adapter's.
            String argumentsJson;
            try {
                argumentsJson = mapper.writeValueAsString(arguments);
            } catch (IOException unencodable) {
                // The SDK has just decoded them from JSON; kept honest anyway.
                LOG.log(Level.ERROR, () -> tool.name() + ": the MCP call's arguments could not be encoded: "
                        + ErrorDetail.of(unencodable));
                return ToolResult.error(FrameworkCalls.FAILED);
            }
            if (output.isEmpty() || tool.requiresApproval()) {
                // A tool that needs approval goes the way that asks it (and runs no watched program).
                return calls.call(tool, session, argumentsJson, approval);
            }
            return calls.call(tool.name(), session, () -> tool.call(Json.parseObject(argumentsJson), output.get()));
        }, ledger, cancellations);
    }

    /** The MCP tool {@code tool} whose calls run {@code body} as the exchange's session, recorded in {@code ledger}. */
    static SyncToolSpecification specification(Tool tool, Body body, SessionLedger ledger,
            ClientCancellations cancellations) {
        return SyncToolSpecification.builder()
                .tool(tool)
                .callHandler((exchange, request) -> call(tool.name(), body, ledger, cancellations, exchange, request))
                .build();
    }

    static Tool describe(SandboxTool tool, McpJsonMapper mapper) {
        Tool.Builder builder = Tool.builder()
                .name(tool.name())
                .description(tool.description())
                .inputSchema(mapper, tool.parametersSchema())
                .outputSchema(mapper, OUTPUT_SCHEMA)
                .meta(Map.of(REQUIRES_APPROVAL_META, tool.requiresApproval()));
        if (tool.requiresApproval()) {
            // The tool acts with the user's identity outside the sandbox: the hints a client shows
            // before it lets a call through.
            builder.annotations(ToolAnnotations.builder().readOnlyHint(false).destructiveHint(true)
                    .openWorldHint(true).build());
        }
        return builder.build();
    }

    /**
     * Runs one call; null (the SDK then sends no response) when the client cancelled it, as the
     * MCP specification asks of a cancelled request.
     */
    private static CallToolResult call(String name, Body body, SessionLedger ledger,
            ClientCancellations cancellations, McpSyncServerExchange exchange, CallToolRequest request) {
        String sessionId = exchange.sessionId();
        if (sessionId == null) {
            // The SDK gives every call a session; without one there is no key that is this client's own.
            return result(ToolResult.error(FrameworkCalls.noConversation(name)));
        }
        Map<String, Object> arguments = request.arguments() == null ? Map.of() : request.arguments();
        Optional<Object> progressToken = Optional.ofNullable(request.progressToken());
        ledger.begin(sessionId);
        try (ClientCancellations.Running running = cancellations.start(sessionId, TransportMapper.requestId(request));
                ProgressReporter progress = progressToken
                        .map(token -> ProgressReporter.start(token, exchange::progressNotification,
                                () -> !running.cancelled()))
                        .orElse(null)) {
            if (running.cancelled()) {
                return null;
            }
            ToolResult result = body.call(sessionId, arguments, Optional.<ExecListener>ofNullable(progress));
            return running.cancelled() ? null : result(result);
        } finally {
            ledger.end(sessionId);
        }
    }

    static CallToolResult result(ToolResult result) {
        Map<String, Object> structured = new LinkedHashMap<>();
        structured.put("text", result.text());
        structured.put("error", result.error());
        result.exitCode().ifPresent(code -> structured.put("exitCode", code));
        return CallToolResult.builder()
                .addTextContent(result.text())
                .structuredContent(structured)
                .isError(result.error())
                .build();
    }
}
