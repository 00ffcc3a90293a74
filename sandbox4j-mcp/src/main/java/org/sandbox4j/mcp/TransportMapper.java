package org.sandbox4j.mcp;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;

import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;

/**
 * A transport's JSON mapper. It writes an MCP error (the HTTP transport's answer to a bad
 * request) as a JSON-RPC error envelope, never as the serialised Java exception with its stack
 * trace the SDK's mapper makes of it; and it sees each incoming JSON-RPC message as it is decoded: a
 * {@code tools/call} request gets its request id written into its {@code _meta} under
 * {@link #REQUEST_ID_META} (replacing any the client put there), for the handler to register the
 * call under; a {@code notifications/cancelled} cancels the call it names in
 * {@link ClientCancellations}. The SDK decodes every incoming message through its transport's
 * mapper ({@code McpSchema.deserializeJsonRpcMessage}), on the thread that received it.
 */
final class TransportMapper implements McpJsonMapper {

    /** Where a tools/call request carries its own JSON-RPC id to the handler. */
    static final String REQUEST_ID_META = "org.sandbox4j/requestId";

    static final String METHOD_NOTIFICATION_CANCELLED = "notifications/cancelled";

    private final McpJsonMapper delegate;
    private final ClientCancellations cancellations;
    private final Supplier<String> receivingSession;

    /**
     * @param receivingSession the MCP session of the message being decoded on the calling thread
     *                         (null when it has none yet)
     */
    TransportMapper(McpJsonMapper delegate, ClientCancellations cancellations, Supplier<String> receivingSession) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
        this.cancellations = Objects.requireNonNull(cancellations, "cancellations");
        this.receivingSession = Objects.requireNonNull(receivingSession, "receivingSession");
    }

    /** The request id a tools/call carried, as JSON text (so {@code 1} and {@code "1"} stay two ids). */
    static Optional<String> requestId(McpSchema.CallToolRequest request) {
        return Optional.ofNullable(request.meta()).map(meta -> meta.get(REQUEST_ID_META))
                .filter(String.class::isInstance).map(String.class::cast);
    }

    @Override
    public <T> T readValue(String content, TypeRef<T> type) throws IOException {
        return seen(delegate.readValue(content, type));
    }

    @Override
    public <T> T readValue(byte[] content, TypeRef<T> type) throws IOException {
        return seen(delegate.readValue(content, type));
    }

    @Override
    public <T> T readValue(String content, Class<T> type) throws IOException {
        return seen(delegate.readValue(content, type));
    }

    @Override
    public <T> T readValue(byte[] content, Class<T> type) throws IOException {
        return seen(delegate.readValue(content, type));
    }

    @Override
    public <T> T convertValue(Object fromValue, Class<T> type) {
        return delegate.convertValue(fromValue, type);
    }

    @Override
    public <T> T convertValue(Object fromValue, TypeRef<T> type) {
        return delegate.convertValue(fromValue, type);
    }

    @Override
    public String writeValueAsString(Object value) throws IOException {
        if (value instanceof McpError error) {
            return JsonRpcErrors.envelope(error.getJsonRpcError());
        }
        return delegate.writeValueAsString(value);
    }

    @Override
    public byte[] writeValueAsBytes(Object value) throws IOException {
        if (value instanceof McpError error) {
            return JsonRpcErrors.envelope(error.getJsonRpcError()).getBytes(StandardCharsets.UTF_8);
        }
        return delegate.writeValueAsBytes(value);
    }

    @SuppressWarnings("unchecked")
    private <T> T seen(T decoded) throws IOException {
        if (!(decoded instanceof Map<?, ?> message) || !(message.get("method") instanceof String method)) {
            return decoded;
        }
        Object id = message.get("id");
        if (McpSchema.METHOD_TOOLS_CALL.equals(method) && id != null
                && message.get("params") instanceof Map<?, ?> params) {
            Map<String, Object> meta = new LinkedHashMap<>();
            if (params.get("_meta") instanceof Map<?, ?> given) {
                given.forEach((key, value) -> meta.put(String.valueOf(key), value));
            }
            meta.put(REQUEST_ID_META, delegate.writeValueAsString(id));
            ((Map<String, Object>) params).put("_meta", meta);
        } else if (METHOD_NOTIFICATION_CANCELLED.equals(method) && id == null
                && message.get("params") instanceof Map<?, ?> params && params.get("requestId") != null) {
            String session = receivingSession.get();
            if (session != null) {
                cancellations.cancel(session, delegate.writeValueAsString(params.get("requestId")));
            }
        }
        return decoded;
    }
}
