package org.sandbox4j.mcp;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;

import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.modelcontextprotocol.spec.McpSchema.TextContent;

/** The SDK's own client, as an MCP host would use it. */
final class McpClients {

    /** Bound on any one request: a first bubblewrap acquire plus a short program. */
    static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(60);

    private McpClients() {
    }

    /** An initialized client of {@code endpoint}, sending {@code token} as a bearer token when given. */
    static McpSyncClient http(HttpEndpoint endpoint, Optional<String> token) {
        McpSyncClient client = McpClient.sync(transport(endpoint, token)).requestTimeout(REQUEST_TIMEOUT).build();
        client.initialize();
        return client;
    }

    static HttpClientStreamableHttpTransport transport(HttpEndpoint endpoint, Optional<String> token) {
        HttpClientStreamableHttpTransport.Builder transport = HttpClientStreamableHttpTransport
                .builder("http://127.0.0.1:" + endpoint.port())
                .endpoint(SandboxMcpServer.ENDPOINT_PATH);
        token.ifPresent(value -> transport.addHttpRequestCustomizer(
                (request, method, uri, body, context) -> request.header("Authorization", "Bearer " + value)));
        return transport.build();
    }

    static CallToolResult call(McpSyncClient client, String tool, Map<String, Object> arguments) {
        return client.callTool(CallToolRequest.builder(tool).arguments(arguments).build());
    }

    static CallToolResult runPython(McpSyncClient client, String program) {
        return call(client, "execute_code", Map.of("code", program));
    }

    /** The one text block of a result. */
    static String text(CallToolResult result) {
        return ((TextContent) result.content().get(0)).text();
    }
}
