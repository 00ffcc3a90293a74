package org.sandbox4j.mcp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.InstanceOfAssertFactories.MAP;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.sandbox4j.mcp.McpClients.runPython;
import static org.sandbox4j.mcp.McpClients.text;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.McpHttpClientTransportAuthorizationException;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.modelcontextprotocol.spec.McpSchema.Tool;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.sandbox4j.codeact.CodeAct;

/**
 * execute_code over streamable HTTP on 127.0.0.1, end to end: the SDK's own client, a real
 * bubblewrap sandbox per MCP session, a bearer token on the door.
 */
class McpHttpBubblewrapTest {

    private static final String SCOPE = "mcp-http-test";
    private static final String TOKEN = "token-" + UUID.randomUUID();

    private static BubblewrapFixture fixture;
    private static SandboxMcpServer server;
    private static HttpEndpoint endpoint;

    @BeforeAll
    static void start() {
        fixture = new BubblewrapFixture();
        server = fixture.server(SCOPE).bearerToken(TOKEN).build();
        endpoint = server.serveHttp(0);
    }

    @AfterAll
    static void stop() {
        server.close();
        fixture.close();
    }

    private static McpSyncClient client() {
        return McpClients.http(endpoint, Optional.of(TOKEN));
    }

    @Test
    void executeCodeIsListedAndRunsAProgram() {
        McpSyncClient client = client();
        try {
            List<Tool> tools = client.listTools().tools();
            assertThat(tools).extracting(Tool::name).containsExactly(CodeAct.TOOL_NAME);
            assertThat(tools.get(0).inputSchema()).containsEntry("type", "object");
            assertThat(tools.get(0).inputSchema().get("properties")).asInstanceOf(MAP).containsKey("code");

            CallToolResult result = runPython(client, "print(sum(range(10)))");

            assertThat(result.isError()).isFalse();
            assertThat(text(result)).isEqualTo("stdout:\n45");
            assertThat(result.structuredContent()).isEqualTo(Map.of("text", "stdout:\n45", "error", false,
                    "exitCode", 0));

            CallToolResult failed = runPython(client, "import sys\nprint('no')\nsys.exit(3)");
            assertThat(failed.isError()).as("a program that exits non-zero is an error result").isTrue();
            assertThat(failed.structuredContent()).asInstanceOf(MAP).containsEntry("exitCode", 3)
                    .containsEntry("error", true);
        } finally {
            client.closeGracefully();
        }
    }

    @Test
    void aClientWithoutTheTokenIsRefused() {
        assertThatThrownBy(() -> McpClients.http(endpoint, Optional.empty()))
                .hasRootCauseInstanceOf(McpHttpClientTransportAuthorizationException.class);
    }

    @Test
    void twoSessionsCannotSeeEachOthersFiles() {
        McpSyncClient a = client();
        McpSyncClient b = client();
        try {
            // Outside the call directory, so the file outlives the call in A's sandbox.
            assertThat(text(runPython(a, "open('../a-secret', 'w').write('mine')\nprint('written')")))
                    .isEqualTo("stdout:\nwritten");
            assertThat(text(runPython(a, "print(open('../a-secret').read())"))).isEqualTo("stdout:\nmine");

            CallToolResult fromB = runPython(b, String.join("\n",
                    "import os",
                    "print(os.path.exists('../a-secret'))",
                    "print(open('../a-secret').read())"));

            assertThat(text(fromB)).startsWith("stdout:\nFalse\n").contains("FileNotFoundError").doesNotContain("mine");
        } finally {
            a.closeGracefully();
            b.closeGracefully();
        }
    }

    @Test
    void closingASessionDisposesOfItsSandbox() {
        String marker = "marker-" + UUID.randomUUID();
        McpSyncClient closing = client();
        McpSyncClient staying = client();
        String stayingMarker = marker + "-staying";
        try {
            runPython(closing, "open('../" + marker + "', 'w').write('x')");
            runPython(staying, "open('../" + stayingMarker + "', 'w').write('x')");
            assertThat(BubblewrapFixture.filesNamed(fixture.stateRoot, marker)).as("the sandbox's work dir, on the host")
                    .hasSize(1);

            closing.closeGracefully();

            assertThat(BubblewrapFixture.filesNamed(fixture.stateRoot, marker)).as("the session's sandbox is gone")
                    .isEmpty();
            assertThat(BubblewrapFixture.filesNamed(fixture.stateRoot, stayingMarker)).as("another session's is not")
                    .hasSize(1);
            assertThat(text(runPython(staying, "print(open('../" + stayingMarker + "').read())")))
                    .isEqualTo("stdout:\nx");
        } finally {
            staying.closeGracefully();
        }
        assertThat(BubblewrapFixture.filesNamed(fixture.stateRoot, stayingMarker)).isEmpty();
    }
}
