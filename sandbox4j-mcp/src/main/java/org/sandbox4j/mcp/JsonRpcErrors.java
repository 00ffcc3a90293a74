package org.sandbox4j.mcp;

import java.io.IOException;
import java.io.PrintWriter;

import io.modelcontextprotocol.spec.McpSchema.ErrorCodes;
import io.modelcontextprotocol.spec.McpSchema.JSONRPCResponse.JSONRPCError;

import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;

import org.sandbox4j.core.spi.Json;

/**
 * What an HTTP error answers: a JSON-RPC error envelope ({@code id} null, as for a request that
 * could not be read), never an HTML page or a serialised Java exception; MCP clients show the
 * {@code error.message}.
 */
final class JsonRpcErrors {

    /** JSON-RPC's code for a server error of its own; MCP servers answer an unknown session with it. */
    static final int SERVER_ERROR = -32000;

    static final int SESSION_NOT_FOUND = -32001;

    /** The longest message an envelope carries: it may quote a header the client sent. */
    static final int MAX_MESSAGE_CHARS = 300;

    private JsonRpcErrors() {
    }

    static String envelope(JSONRPCError error) {
        int code = error == null || error.code() == null ? ErrorCodes.INTERNAL_ERROR : error.code();
        return envelope(code, error == null ? null : error.message());
    }

    /** {@code {"jsonrpc":"2.0","id":null,"error":{"code":..,"message":..}}}, the message shortened and escaped. */
    static String envelope(int code, String message) {
        String text = message == null || message.isBlank() ? "the request failed" : message.strip();
        if (text.length() > MAX_MESSAGE_CHARS) {
            text = text.substring(0, MAX_MESSAGE_CHARS) + "…";
        }
        String quoted;
        try {
            quoted = Json.quote(text);
        } catch (IllegalArgumentException loneSurrogate) {
            quoted = "\"the request failed\"";
        }
        return "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":" + code + ",\"message\":" + quoted + "}}";
    }

    /** The JSON-RPC code for an HTTP status the transport or the guard answers with. */
    static int codeFor(int status) {
        return switch (status) {
            case HttpServletResponse.SC_BAD_REQUEST -> ErrorCodes.INVALID_REQUEST;
            case HttpServletResponse.SC_NOT_FOUND -> SESSION_NOT_FOUND;
            default -> SERVER_ERROR;
        };
    }

    /** Writes {@code status} with an envelope of {@code message}. */
    static void send(HttpServletResponse response, int status, String message) throws IOException {
        if (response.isCommitted()) {
            return;
        }
        response.resetBuffer();
        response.setStatus(status);
        response.setContentType("application/json");
        response.setCharacterEncoding("UTF-8");
        PrintWriter writer = response.getWriter();
        writer.write(envelope(codeFor(status), message));
        writer.flush();
    }

    /** A response whose {@code sendError} (the SDK's, for some of its answers) writes an envelope instead of a page. */
    static final class Enveloping extends HttpServletResponseWrapper {

        Enveloping(HttpServletResponse response) {
            super(response);
        }

        @Override
        public void sendError(int status, String message) throws IOException {
            send((HttpServletResponse) getResponse(), status, message);
        }

        @Override
        public void sendError(int status) throws IOException {
            send((HttpServletResponse) getResponse(), status, defaultMessage(status));
        }

        private static String defaultMessage(int status) {
            return switch (status) {
                case HttpServletResponse.SC_NOT_FOUND -> "not found: this server answers MCP at "
                        + SandboxMcpServer.ENDPOINT_PATH + " only, for a session it knows";
                case HttpServletResponse.SC_REQUEST_ENTITY_TOO_LARGE -> "the request is too large";
                case HttpServletResponse.SC_METHOD_NOT_ALLOWED -> "this method is not allowed here";
                default -> "the request failed with HTTP status " + status;
            };
        }
    }
}
