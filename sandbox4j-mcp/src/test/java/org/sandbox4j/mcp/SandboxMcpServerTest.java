package org.sandbox4j.mcp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.sandbox4j.mcp.McpClients.call;
import static org.sandbox4j.mcp.McpClients.text;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BooleanSupplier;

import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.McpHttpClientTransportAuthorizationException;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.modelcontextprotocol.spec.McpSchema.Tool;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.sandbox4j.codeact.CodeAct;
import org.sandbox4j.core.CallerContext;
import org.sandbox4j.core.Isolation;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxRouter;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.tool.FrameworkCalls;
import org.sandbox4j.core.tool.SandboxTool;
import org.sandbox4j.core.tool.SandboxedTool;
import org.sandbox4j.core.tool.ToolResult;
import org.sandbox4j.testkit.InMemoryBackend;
import org.sandbox4j.testkit.InMemoryBackend.Purge;

/**
 * The server's contract with an in-memory backend that records every key and disposal, driven by
 * the SDK's own client over loopback streamable HTTP: where the key comes from, when sandboxes
 * are disposed of, what the model sees on failure, and the door (loopback, Origin, bearer token).
 */
class SandboxMcpServerTest {

    private static final String SCOPE = "mcp-test";
    private static final String AGENT = "agent";
    private static final String WHOAMI = "whoami";
    private static final Duration EVENTUALLY = Duration.ofSeconds(15);

    private final InMemoryBackend backend = InMemoryBackend.builder().isolation(Isolation.CONTAINER).build();
    private final SandboxRouter router = SandboxRouter.builder().backend(backend).minIsolation(Isolation.CONTAINER)
            .build();
    private final List<AutoCloseable> toClose = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (int i = toClose.size() - 1; i >= 0; i--) {
            toClose.get(i).close();
        }
    }

    /** A kind that is not execute_code: it acquires its sandbox and answers with the key it ran under. */
    private static Optional<SandboxTool> whoami(SandboxRouter router, CallerContext context, boolean approval) {
        return SandboxedTool.builder(WHOAMI, SandboxSpec.builder(WHOAMI).build())
                .router(router)
                .context(context)
                .agentDir(AGENT)
                .description("Says which conversation key the call ran under.")
                .parametersSchema("{\"type\":\"object\",\"properties\":{\"threadId\":{\"type\":\"string\"}}}")
                .requiresApproval(approval)
                .body((call, arguments) -> {
                    SandboxKey key = call.key();
                    call.acquire(key);
                    return ToolResult.ok(key.scope() + "|" + key.threadId() + "|" + key.agentDir());
                })
                .build();
    }

    private SandboxMcpServer.Builder server() {
        return SandboxMcpServer.builder().router(router).scope(SCOPE)
                .tools(context -> List.of(whoami(router, context, false), CodeAct.builder(router, AGENT, context).build()));
    }

    private HttpEndpoint serve(SandboxMcpServer.Builder builder) {
        SandboxMcpServer server = builder.build();
        toClose.add(server);
        HttpEndpoint endpoint = server.serveHttp(0);
        toClose.add(endpoint);
        return endpoint;
    }

    private McpSyncClient client(HttpEndpoint endpoint) {
        McpSyncClient client = McpClients.http(endpoint, Optional.empty());
        toClose.add(client::closeGracefully);
        return client;
    }

    /** The thread id a call of {@code client}'s session ran under. */
    private static String threadOf(McpSyncClient client) {
        String[] parts = text(call(client, WHOAMI, Map.of())).split("\\|");
        assertThat(parts[0]).isEqualTo(SCOPE);
        assertThat(parts[2]).isEqualTo(AGENT);
        return parts[1];
    }

    @Test
    void theKeyIsTheScopeTheMcpSessionAndTheAgentDirAndNoArgumentChangesIt() {
        HttpEndpoint endpoint = serve(server());
        McpSyncClient a = client(endpoint);
        McpSyncClient b = client(endpoint);

        String threadA = threadOf(a);
        assertThat(threadA).isNotBlank();
        assertThat(threadOf(a)).as("one session, one thread").isEqualTo(threadA);
        assertThat(threadOf(b)).as("another session, another thread").isNotEqualTo(threadA);
        assertThat(text(call(a, WHOAMI, Map.of("threadId", "someone-else")))).contains("|" + threadA + "|");
        assertThat(backend.keys()).extracting(SandboxKey::threadId).containsOnly(threadA, threadOf(b));
    }

    @Test
    void closingASessionDisposesOfItsSandboxesAndNoOneElses() {
        HttpEndpoint endpoint = serve(server());
        McpSyncClient a = client(endpoint);
        McpSyncClient b = client(endpoint);
        String threadA = threadOf(a);
        String threadB = threadOf(b);

        a.closeGracefully();

        assertThat(backend.purged()).containsExactly(new Purge(SCOPE, threadA));
        assertThat(threadOf(b)).isEqualTo(threadB);
    }

    @Test
    void closingTheEndpointDisposesOfEverySessionItServed() {
        HttpEndpoint endpoint = serve(server());
        String threadA = threadOf(client(endpoint));
        String threadB = threadOf(client(endpoint));

        endpoint.close();

        assertThat(backend.purged()).containsExactlyInAnyOrder(new Purge(SCOPE, threadA), new Purge(SCOPE, threadB));
    }

    @Test
    void closingTheServerClosesItsEndpoints() {
        SandboxMcpServer server = server().build();
        HttpEndpoint endpoint = server.serveHttp(0);
        McpSyncClient client = McpClients.http(endpoint, Optional.empty());
        String thread = threadOf(client);

        server.close();

        assertThat(backend.purged()).containsExactly(new Purge(SCOPE, thread));
        assertThatThrownBy(() -> server.serveHttp(0)).isInstanceOf(IllegalStateException.class);
        client.close();
    }

    @Test
    void aSessionLeftIdleWithNoStreamOpenIsEndedAndItsSandboxesDisposedOf() throws Exception {
        // The SDK's client keeps a listening stream open, which keeps its session alive for as long as
        // the client lives; a client that vanished without a DELETE leaves none. Raw requests play it.
        HttpEndpoint endpoint = serve(server().idleSessionTimeout(Duration.ofMillis(400)));
        HttpResponse<String> initialized = post(endpoint, Map.of(), "{\"jsonrpc\":\"2.0\",\"id\":1,"
                + "\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                + "\"clientInfo\":{\"name\":\"vanishing\",\"version\":\"1\"}}}");
        String session = initialized.headers().firstValue("Mcp-Session-Id").orElseThrow();
        Map<String, String> inSession = Map.of("Mcp-Session-Id", session);
        assertThat(post(endpoint, inSession, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}")
                .statusCode()).isEqualTo(202);
        String answer = post(endpoint, inSession, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
                + "\"params\":{\"name\":\"whoami\",\"arguments\":{}}}").body();
        assertThat(answer).as("the MCP session id is the thread").contains(SCOPE + "|" + session + "|" + AGENT);
        assertThat(backend.purged()).isEmpty();

        awaitTrue(() -> backend.purged().contains(new Purge(SCOPE, session)));

        assertThat(post(endpoint, inSession, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}")
                .statusCode()).as("the SDK evicted the session before its sandboxes went").isEqualTo(404);
    }

    @Test
    void aClientHoldingItsListeningStreamIsNotIdle() throws Exception {
        HttpEndpoint endpoint = serve(server().idleSessionTimeout(Duration.ofMillis(400)));
        McpSyncClient client = client(endpoint);
        String thread = threadOf(client);

        Thread.sleep(Duration.ofMillis(400).multipliedBy(4).toMillis());

        assertThat(backend.purged()).isEmpty();
        assertThat(threadOf(client)).isEqualTo(thread);
    }

    @Test
    void noConfiguredToolMeansNoToolListed() {
        SandboxRouter empty = SandboxRouter.builder().build();
        HttpEndpoint withEmptyKinds = serve(SandboxMcpServer.builder().router(empty).scope(SCOPE)
                .tools(context -> List.of(CodeAct.builder(empty, AGENT, context).build(), whoami(empty, context, false))));
        HttpEndpoint withoutFactory = serve(SandboxMcpServer.builder().router(router).scope(SCOPE));

        assertThat(client(withEmptyKinds).listTools().tools()).isEmpty();
        assertThat(client(withoutFactory).listTools().tools()).isEmpty();
    }

    @Test
    void toolsAreListedWithTheKindsOwnSchemaAndDescription() {
        SandboxTool codeAct = CodeAct.builder(router, AGENT, CallerContext.of(() -> SCOPE, () -> "t",
                org.sandbox4j.core.FileListing.ALL)).build().orElseThrow();
        HttpEndpoint endpoint = serve(SandboxMcpServer.builder().router(router).scope(SCOPE).approvalByClient()
                .tools(context -> List.of(whoami(router, context, true), CodeAct.builder(router, AGENT, context).build())));

        List<Tool> tools = client(endpoint).listTools().tools();

        assertThat(tools).extracting(Tool::name).containsExactly(WHOAMI, CodeAct.TOOL_NAME);
        Tool execute = tools.get(1);
        assertThat(execute.description()).isEqualTo(codeAct.description());
        assertThat(execute.inputSchema()).isEqualTo(org.sandbox4j.core.spi.Json.parseObject(codeAct.parametersSchema()));
        assertThat(execute.outputSchema()).containsKey("properties");
        assertThat(execute.meta()).containsEntry(ToolBridge.REQUIRES_APPROVAL_META, false);
        assertThat(execute.annotations()).isNull();
        Tool approval = tools.get(0);
        assertThat(approval.meta()).containsEntry(ToolBridge.REQUIRES_APPROVAL_META, true);
        assertThat(approval.annotations().destructiveHint()).isTrue();
        assertThat(approval.annotations().readOnlyHint()).isFalse();
    }

    @Test
    void aToolThatRequiresApprovalIsRefusedAtBuildWithoutAnApprovalAndRunsOnlyWhenApproved() {
        assertThatThrownBy(() -> SandboxMcpServer.builder().router(router).scope(SCOPE)
                .tools(context -> List.of(whoami(router, context, true))).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'" + WHOAMI + "'").hasMessageContaining("approval(")
                .hasMessageContaining("approvalByClient()");

        List<String> asked = new ArrayList<>();
        boolean[] answer = {false};
        HttpEndpoint endpoint = serve(SandboxMcpServer.builder().router(router).scope(SCOPE)
                .approval((tool, arguments, session) -> {
                    asked.add(tool + " " + arguments + " " + session);
                    return answer[0];
                })
                .tools(context -> List.of(whoami(router, context, true), CodeAct.builder(router, AGENT, context).build())));
        McpSyncClient client = client(endpoint);

        CallToolResult refused = call(client, WHOAMI, Map.of());
        assertThat(refused.isError()).isTrue();
        assertThat(text(refused)).isEqualTo(FrameworkCalls.NOT_APPROVED);
        assertThat(backend.keys()).as("nothing acquired for a call not approved").isEmpty();
        answer[0] = true;
        String thread = threadOf(client);
        assertThat(asked).containsExactly(WHOAMI + " {} " + thread, WHOAMI + " {} " + thread);
        McpClients.runPython(client, "print(1)");
        assertThat(asked).as("a tool that needs no approval is not put to the approval").hasSize(2);
    }

    @Test
    void approvalByTheClientRunsACallThatRequiresApprovalAsItComes() {
        HttpEndpoint endpoint = serve(SandboxMcpServer.builder().router(router).scope(SCOPE).approvalByClient()
                .tools(context -> List.of(whoami(router, context, true))));

        assertThat(threadOf(client(endpoint))).isNotBlank();
    }

    @Test
    void aProviderFailureReachesTheModelAsAnErrorWithTheFixedSentenceOnly() {
        backend.setAcquireError(new IllegalStateException("provider detail: token=hunter2 at 10.1.2.3"));
        HttpEndpoint endpoint = serve(server());

        CallToolResult result = McpClients.runPython(client(endpoint), "print(1)");

        assertThat(result.isError()).isTrue();
        assertThat(text(result)).isEqualTo("Error: sandbox unavailable — degrading to T0 (LLM self-check only)");
        assertThat(result.structuredContent()).isEqualTo(Map.of("text", text(result), "error", true));
    }

    @Test
    void aSuccessfulCallCarriesItsTextAsStructuredContentToo() {
        HttpEndpoint endpoint = serve(server());

        CallToolResult result = call(client(endpoint), WHOAMI, Map.of());

        assertThat(result.isError()).isFalse();
        assertThat(result.structuredContent()).isEqualTo(Map.of("text", text(result), "error", false));
    }

    @Test
    void aBearerTokenIsRequiredWhenOneIsSet() throws Exception {
        HttpEndpoint endpoint = serve(server().bearerToken("s3cret-token"));

        assertThatThrownBy(() -> McpClients.http(endpoint, Optional.empty()))
                .hasRootCauseInstanceOf(McpHttpClientTransportAuthorizationException.class);
        assertThatThrownBy(() -> McpClients.http(endpoint, Optional.of("wrong-token")))
                .hasRootCauseInstanceOf(McpHttpClientTransportAuthorizationException.class);
        HttpResponse<String> raw = post(endpoint, Map.of());
        assertThat(raw.statusCode()).isEqualTo(401);
        assertThat(raw.headers().firstValue("WWW-Authenticate")).hasValue("Bearer realm=\"sandbox4j\"");

        McpSyncClient client = McpClients.http(endpoint, Optional.of("s3cret-token"));
        toClose.add(client::closeGracefully);
        assertThat(threadOf(client)).isNotBlank();
    }

    @Test
    void aCrossOriginRequestIsRefusedBeforeTheSdkSeesIt() throws Exception {
        HttpEndpoint endpoint = serve(server());

        assertThat(post(endpoint, Map.of("Origin", "http://attacker.example")).statusCode()).isEqualTo(403);
        assertThat(post(endpoint, Map.of("Origin", "null")).statusCode()).isEqualTo(403);
        assertThat(post(endpoint, Map.of("Origin", "http://localhost:3000")).statusCode())
                .as("a loopback origin passes the guard (the SDK then answers the empty body)").isNotEqualTo(403);
    }

    @Test
    void aHostHeaderNamingAnotherMachineIsRefused() {
        assertThat(HttpGuard.isLoopbackHost("127.0.0.1:8080")).isTrue();
        assertThat(HttpGuard.isLoopbackHost("localhost")).isTrue();
        assertThat(HttpGuard.isLoopbackHost("[::1]:9")).isTrue();
        assertThat(HttpGuard.isLoopbackHost("rebound.attacker.example:8080")).isFalse();
        assertThat(HttpGuard.isLoopbackHost("localhost.attacker.example")).isFalse();
        assertThat(HttpGuard.isLoopbackHost(null)).isFalse();
    }

    @Test
    void aNonLoopbackAddressIsRefused() throws Exception {
        SandboxMcpServer server = server().build();
        toClose.add(server);

        assertThatThrownBy(() -> server.serveHttp(new InetSocketAddress(InetAddress.getByName("0.0.0.0"), 0)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("loopback");
        assertThatThrownBy(() -> server.serveHttp(InetSocketAddress.createUnresolved("localhost", 0)))
                .isInstanceOf(IllegalArgumentException.class);
        HttpEndpoint endpoint = server.serveHttp(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 0));
        toClose.add(endpoint);
        assertThat(endpoint.address().getAddress().isLoopbackAddress()).isTrue();
        assertThat(endpoint.uri()).isEqualTo(URI.create("http://127.0.0.1:" + endpoint.port() + "/mcp"));
    }

    @Test
    void misconfigurationsFailAtBuild() {
        assertThatThrownBy(() -> SandboxMcpServer.builder().scope(SCOPE).build()).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> SandboxMcpServer.builder().router(router).scope(" ").build())
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> server().bearerToken("").build()).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> server().idleSessionTimeout(Duration.ZERO).build())
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> SandboxMcpServer.builder().router(router).scope(SCOPE)
                .tools(context -> List.of(whoami(router, context, false), whoami(router, context, false))).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("whoami");
    }

    private static HttpResponse<String> post(HttpEndpoint endpoint, Map<String, String> headers) throws Exception {
        return post(endpoint, headers, "");
    }

    private static HttpResponse<String> post(HttpEndpoint endpoint, Map<String, String> headers, String body)
            throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(endpoint.uri())
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        headers.forEach(request::header);
        return HttpClient.newHttpClient().send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static void awaitTrue(BooleanSupplier condition) throws InterruptedException {
        Instant deadline = Instant.now().plus(EVENTUALLY);
        while (!condition.getAsBoolean()) {
            assertThat(Instant.now()).as("still waiting").isBefore(deadline);
            Thread.sleep(50);
        }
    }
}
