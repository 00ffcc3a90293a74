package org.sandbox4j.mcp;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.LinkedHashMap;
import java.util.Map;

import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.server.McpServerFeatures.SyncToolSpecification;
import io.modelcontextprotocol.server.McpSyncServerExchange;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.modelcontextprotocol.spec.McpSchema.Tool;
import io.modelcontextprotocol.spec.McpSchema.ToolAnnotations;

import org.sandbox4j.core.spi.ErrorDetail;
import org.sandbox4j.core.SandboxInterrupted;
import org.sandbox4j.core.tool.SandboxTool;
import org.sandbox4j.core.tool.ToolResult;

/**
 * Presents a {@link SandboxTool} as an MCP tool: its name, description and parameter schema as
 * they are, a fixed output schema for the structured result, and a handler that runs the call
 * as the exchange's session.
 */
final class ToolBridge {

    private static final Logger LOG = System.getLogger(ToolBridge.class.getName());

    /** The {@code _meta} key saying a person must approve each call; MCP has no standard field for it. */
    static final String REQUIRES_APPROVAL_META = "org.sandbox4j/requiresApproval";

    /** What the model sees when the tool itself threw (it should not: its failures are results). */
    static final String FAILED = "Error: the tool failed unexpectedly; the detail is in the host's log";

    /** What the model sees when the server stopped the call. */
    static final String CANCELLED = "Error: the call was cancelled";

    /** The structured result every tool returns: the text the model reads and whether it reports a failure. */
    static final String OUTPUT_SCHEMA = "{\"type\":\"object\",\"properties\":{"
            + "\"text\":{\"type\":\"string\"},\"error\":{\"type\":\"boolean\"}},"
            + "\"required\":[\"text\",\"error\"]}";

    private ToolBridge() {
    }

    /** The body of a call: the model's arguments in, the result out. */
    @FunctionalInterface
    interface Body {
        ToolResult call(Map<String, Object> arguments) throws IOException;
    }

    /** The MCP tool for {@code tool}; calls run as the exchange's session, recorded in {@code ledger}. */
    static SyncToolSpecification specification(SandboxTool tool, McpJsonMapper mapper, SessionContext sessions,
            SessionLedger ledger) {
        // Through JSON text, so the kind parses the arguments with core's own reader, as every adapter's.
        return specification(describe(tool, mapper), arguments -> tool.callJson(mapper.writeValueAsString(arguments)),
                sessions, ledger);
    }

    /** The MCP tool {@code tool} whose calls run {@code body} as the exchange's session, recorded in {@code ledger}. */
    static SyncToolSpecification specification(Tool tool, Body body, SessionContext sessions, SessionLedger ledger) {
        return SyncToolSpecification.builder()
                .tool(tool)
                .callHandler((exchange, request) -> call(tool.name(), body, sessions, ledger, exchange, request))
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

    private static CallToolResult call(String name, Body body, SessionContext sessions, SessionLedger ledger,
            McpSyncServerExchange exchange, CallToolRequest request) {
        String sessionId = exchange.sessionId();
        if (sessionId != null) {
            ledger.begin(sessionId);
        }
        try {
            Map<String, Object> arguments = request.arguments() == null ? Map.of() : request.arguments();
            return result(sessions.callAs(sessionId, () -> {
                try {
                    return body.call(arguments);
                } catch (IOException failure) {
                    throw new UncheckedIOException(failure);
                }
            }));
        } catch (SandboxInterrupted cancelled) {
            Thread.currentThread().interrupt();
            return result(ToolResult.error(CANCELLED));
        } catch (RuntimeException failure) {
            LOG.log(Level.ERROR, () -> name + ": the MCP call failed: " + ErrorDetail.of(failure));
            return result(ToolResult.error(FAILED));
        } finally {
            if (sessionId != null) {
                ledger.end(sessionId);
            }
        }
    }

    static CallToolResult result(ToolResult result) {
        Map<String, Object> structured = new LinkedHashMap<>();
        structured.put("text", result.text());
        structured.put("error", result.error());
        return CallToolResult.builder()
                .addTextContent(result.text())
                .structuredContent(structured)
                .isError(result.error())
                .build();
    }
}
