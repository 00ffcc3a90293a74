package org.sandbox4j.mcp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.InstanceOfAssertFactories.MAP;
import static org.sandbox4j.mcp.McpClients.runPython;
import static org.sandbox4j.mcp.McpClients.text;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;

import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.modelcontextprotocol.spec.McpSchema.Tool;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.sandbox4j.codeact.CodeAct;

/**
 * The server as an MCP host starts it: a separate JVM speaking MCP on its stdin and stdout,
 * driven by the SDK's own stdio client, running execute_code in a real bubblewrap sandbox.
 */
class McpStdioSubprocessTest {

    /** How long the server's own shutdown may take to remove the session's sandbox: generous, not a timing. */
    private static final Duration DISPOSAL_BOUND = Duration.ofSeconds(90);

    private final Path stateRoot = BubblewrapFixture.newStateRoot();

    @AfterEach
    void removeStateRoot() {
        BubblewrapFixture.deleteTree(stateRoot);
    }

    @Test
    void aStdioClientListsExecuteCodeRunsAProgramAndItsSandboxGoesWithTheSession() throws InterruptedException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        ServerParameters parameters = ServerParameters.builder(java)
                .args("-cp", classPath, StdioServerMain.class.getName(), stateRoot.toString())
                .build();
        String marker = "stdio-" + UUID.randomUUID();
        McpSyncClient client = McpClient.sync(new StdioClientTransport(parameters, McpJsonDefaults.getMapper()))
                .requestTimeout(McpClients.REQUEST_TIMEOUT).initializationTimeout(McpClients.REQUEST_TIMEOUT).build();
        try {
            client.initialize();

            List<Tool> tools = client.listTools().tools();
            assertThat(tools).extracting(Tool::name).containsExactly(CodeAct.TOOL_NAME);
            assertThat(tools.get(0).inputSchema().get("properties")).asInstanceOf(MAP).containsKey("code");

            CallToolResult result = runPython(client, "print(sum(range(10)))");
            assertThat(result.isError()).isFalse();
            assertThat(text(result)).isEqualTo("stdout:\n45");

            runPython(client, "open('../" + marker + "', 'w').write('x')");
            assertThat(BubblewrapFixture.filesNamed(stateRoot, marker)).hasSize(1);
        } finally {
            client.closeGracefully();
        }
        // The client ends the server with a signal and does not wait for its exit: the server's shutdown disposes
        // of the sandbox while this test goes on, so the check waits (boundedly) for the files to be gone.
        long deadline = System.nanoTime() + DISPOSAL_BOUND.toNanos();
        while (!BubblewrapFixture.filesNamed(stateRoot, marker).isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(100);
        }
        assertThat(BubblewrapFixture.filesNamed(stateRoot, marker)).as("the session's sandbox was disposed of").isEmpty();
    }
}
