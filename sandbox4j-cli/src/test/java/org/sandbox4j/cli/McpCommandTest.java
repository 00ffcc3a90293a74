package org.sandbox4j.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.sandbox4j.core.spi.Json;
import org.sandbox4j.docker.TestEngines;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.modelcontextprotocol.spec.McpSchema.TextContent;
import io.modelcontextprotocol.spec.McpSchema.Tool;
import org.junit.jupiter.api.Test;

/**
 * {@code sandbox4j mcp} as an MCP host starts it: a separate JVM driven by the SDK's own client,
 * over stdio and over streamable HTTP on loopback, running execute_code in real bubblewrap.
 */
class McpCommandTest {

    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(60);
    /** How long a server's own shutdown may take to dispose of its sessions: generous, not a timing. */
    private static final Duration SETTLE_BOUND = Duration.ofSeconds(30);
    private static final Pattern SERVING = Pattern.compile("serving MCP at (http://127\\.0\\.0\\.1:\\d+/\\S*)");

    @Test
    void overStdioItListsExecuteCodeAndRunsAProgram() throws Exception {
        try (CliProcess cli = CliProcess.fresh()) {
            ServerParameters parameters = ServerParameters.builder(java())
                    .args("-cp", System.getProperty("java.class.path"), Main.class.getName(), "--state-dir",
                            cli.stateDir().toString(), "mcp", "--backend", "bubblewrap", "--floor", "container",
                            "--scope", "mcp-stdio-test", "--lang", "python,javascript")
                    .build();
            McpSyncClient client = McpClient.sync(new StdioClientTransport(parameters, McpJsonDefaults.getMapper()))
                    .requestTimeout(REQUEST_TIMEOUT).initializationTimeout(REQUEST_TIMEOUT).build();
            try {
                client.initialize();
                List<Tool> tools = client.listTools().tools();
                assertThat(tools).extracting(Tool::name).as("without --file-tools, no file tool")
                        .containsExactly("execute_code");
                assertThat(text(client.callTool(call(Map.of("code", "print(sum(range(10)))"))))).isEqualTo("stdout:\n45");
                assertThat(text(client.callTool(call(Map.of("code", "console.log(6 * 7)", "language", "javascript"))))).isEqualTo("stdout:\n42");
                assertThat(Json.parseArrayOfObjects(cli.run("ls", "--scope", "mcp-stdio-test", "--json").stdout()))
                        .as("the session's sandbox, in the backend's own records").hasSize(1);
            } finally {
                client.closeGracefully();
            }
            assertThat(sandboxesOnceSettled(cli, "mcp-stdio-test")).as("the session's sandbox went with it").isEmpty();
        }
    }

    @Test
    void overStdioAnExportedTokenVariableIsIgnoredWithAWarningAndLogLinesGoToStandardError() throws Exception {
        try (CliProcess cli = CliProcess.fresh()) {
            ServerParameters parameters = ServerParameters.builder(java())
                    .args("-cp", System.getProperty("java.class.path"), Main.class.getName(), "--state-dir",
                            cli.stateDir().toString(), "mcp", "--backend", "bubblewrap", "--floor", "container",
                            "--scope", "mcp-stdio-token-test")
                    .env(Map.of(McpCommand.TOKEN_VARIABLE, "exported-for-another-server"))
                    .build();
            StdioClientTransport transport = new StdioClientTransport(parameters, McpJsonDefaults.getMapper());
            List<String> stderr = new CopyOnWriteArrayList<>();
            transport.setStdErrorHandler(stderr::add);
            McpSyncClient client = McpClient.sync(transport)
                    .requestTimeout(REQUEST_TIMEOUT).initializationTimeout(REQUEST_TIMEOUT).build();
            try {
                client.initialize();
                assertThat(text(client.callTool(call(Map.of("code", "print(6 * 7)"))))).isEqualTo("stdout:\n42");
            } finally {
                client.closeGracefully();
            }
            assertThat(stderr).as("one warning line naming the variable").anySatisfy(line -> assertThat(line)
                    .startsWith("sandbox4j: ").contains(McpCommand.TOKEN_VARIABLE, "ignored", "--http"));
        }
    }

    @Test
    void withFileToolsAFileWrittenReachesTheProgramAndItsOutputIsReadBack() throws Exception {
        try (CliProcess cli = CliProcess.fresh()) {
            ServerParameters parameters = ServerParameters.builder(java())
                    .args("-cp", System.getProperty("java.class.path"), Main.class.getName(), "--state-dir",
                            cli.stateDir().toString(), "mcp", "--backend", "bubblewrap", "--floor", "container", "--scope", "mcp-files-test",
                            "--file-tools")
                    .build();
            McpSyncClient client = McpClient.sync(new StdioClientTransport(parameters, McpJsonDefaults.getMapper()))
                    .requestTimeout(REQUEST_TIMEOUT).initializationTimeout(REQUEST_TIMEOUT).build();
            Path areas = cli.stateDir().resolve(McpFileRoot.STATE_SUBDIRECTORY);
            try {
                client.initialize();
                assertThat(client.listTools().tools()).extracting(Tool::name).containsExactly("execute_code",
                        "write_file", "read_file", "list_files", "delete_file");

                assertThat(text(client.callTool(tool("write_file", Map.of("name", "numbers.txt", "content", "3\n4\n")))))
                        .startsWith("Wrote 'numbers.txt' (4 bytes).");
                String program = "n = [int(x) for x in open('numbers.txt').read().split()]\n"
                        + "print(sum(n))\n"
                        + "open('squares.txt', 'w').write(' '.join(str(x * x) for x in n))";
                assertThat(text(client.callTool(call(Map.of("code", program, "files", List.of("numbers.txt"),
                        "outputs", List.of("squares.txt"))))))
                        .isEqualTo("stdout:\n7\nSaved:\n- squares.txt (4 bytes; read_file reads it)");
                assertThat(text(client.callTool(tool("read_file", Map.of("name", "squares.txt"))))).isEqualTo("9 16");
                assertThat(text(client.callTool(tool("list_files", Map.of()))))
                        .startsWith("numbers.txt (4 bytes)\nsquares.txt (4 bytes)\n2 of ");
                try (Stream<Path> roots = Files.list(areas)) {
                    assertThat(roots).as("this process's own root, under the state directory").hasSize(1);
                }
            } finally {
                client.closeGracefully();
            }
            long deadline = System.nanoTime() + SETTLE_BOUND.toNanos();
            while (!isEmpty(areas) && System.nanoTime() < deadline) {
                Thread.sleep(100);
            }
            assertThat(areas).as("the session's area and the process's root, gone at exit").isEmptyDirectory();
        }
    }

    @Test
    void theHelpSaysWhatTheFileToolsAre() {
        try (CliProcess cli = CliProcess.fresh()) {
            CliProcess.Result help = cli.run("mcp", "--help");
            assertThat(help.exitCode()).isZero();
            assertThat(help.stdout()).contains("--file-tools", "write_file", "read_file", "list_files", "delete_file",
                    "`outputs`");
        }
    }

    private static boolean isEmpty(Path directory) throws java.io.IOException {
        try (Stream<Path> children = Files.list(directory)) {
            return children.findAny().isEmpty();
        }
    }

    @Test
    void onTheDockerBackendItRunsAProgramAndTheSessionsContainerGoesWithIt() throws Exception {
        try (CliProcess cli = CliProcess.fresh().env("DOCKER_HOST", TestEngines.dockerHost())
                .env("SANDBOX4J_DOCKER_IMAGE", TestEngines.image())) {
            ServerParameters parameters = ServerParameters.builder(java())
                    .args("-cp", System.getProperty("java.class.path"), Main.class.getName(), "--state-dir",
                            cli.stateDir().toString(), "mcp", "--backend", "docker", "--floor", "container",
                            "--docker-host", TestEngines.dockerHost(), "--image", TestEngines.image(),
                            "--scope", "mcp-docker-test")
                    .build();
            McpSyncClient client = McpClient.sync(new StdioClientTransport(parameters, McpJsonDefaults.getMapper()))
                    .requestTimeout(REQUEST_TIMEOUT).initializationTimeout(REQUEST_TIMEOUT).build();
            try {
                client.initialize();
                assertThat(text(client.callTool(call(Map.of("code", "print(sum(range(10)))"))))).isEqualTo("stdout:\n45");
                assertThat(Json.parseArrayOfObjects(cli.run("ls", "--scope", "mcp-docker-test", "--json").stdout()))
                        .as("the session's container, in the engine's own records").hasSize(1)
                        .allSatisfy(listing -> assertThat(listing).containsEntry("backend", "docker"));
            } finally {
                client.closeGracefully();
            }
            assertThat(sandboxesOnceSettled(cli, "mcp-docker-test")).as("the session's container went with it")
                    .isEmpty();
            // The server's exit can cut its disposal short between the container and its work-area volume;
            // a purge removes whatever its labels still select, so the shared engine is left clean.
            cli.run("purge", "--scope", "mcp-docker-test");
        }
    }

    @Test
    void atTheDefaultFloorItIsRefusedWithTheFix() {
        try (CliProcess cli = CliProcess.fresh()) {
            CliProcess.Result result = cli.run("mcp");
            assertThat(result.exitCode()).isEqualTo(ExitCodes.REFUSED);
            assertThat(result.stderr()).contains("--floor container");
        }
    }

    @Test
    void overHttpItNeedsTheBearerTokenAndRunsAProgram() throws Exception {
        try (CliProcess cli = CliProcess.fresh()) {
            ProcessBuilder builder = new ProcessBuilder(java(), "-cp", System.getProperty("java.class.path"),
                    Main.class.getName(), "--state-dir", cli.stateDir().toString(), "mcp", "--backend", "bubblewrap",
                    "--floor", "container", "--scope", "mcp-http-test", "--http", "0");
            builder.environment().put("SANDBOX4J_MCP_TOKEN", "s3cret-token");
            builder.environment().put("XDG_CONFIG_HOME", cli.configHome().toString());
            builder.redirectOutput(ProcessBuilder.Redirect.DISCARD);
            Process server = builder.start();
            try {
                URI endpoint = endpointOf(server);
                HttpResponse<String> anonymous = HttpClient.newHttpClient().send(HttpRequest.newBuilder(endpoint)
                        .header("Content-Type", "application/json").header("Accept", "application/json, text/event-stream")
                        .POST(HttpRequest.BodyPublishers.ofString("{}")).build(), HttpResponse.BodyHandlers.ofString());
                assertThat(anonymous.statusCode()).isEqualTo(401);

                HttpClientStreamableHttpTransport transport = HttpClientStreamableHttpTransport
                        .builder(endpoint.resolve("/").toString()).endpoint(endpoint.getPath())
                        .addHttpRequestCustomizer((request, method, uri, body, context) ->
                                request.header("Authorization", "Bearer s3cret-token")).build();
                McpSyncClient client = McpClient.sync(transport).requestTimeout(REQUEST_TIMEOUT)
                        .initializationTimeout(REQUEST_TIMEOUT).build();
                try {
                    client.initialize();
                    assertThat(text(client.callTool(call(Map.of("code", "print(sum(range(10)))"))))).isEqualTo("stdout:\n45");
                    assertThat(Json.parseArrayOfObjects(cli.run("ls", "--scope", "mcp-http-test", "--json").stdout()))
                            .as("the session's sandbox, in the backend's own records").hasSize(1);
                } finally {
                    client.closeGracefully();
                }
            } finally {
                server.destroy();
                assertThat(server.waitFor(30, TimeUnit.SECONDS)).isTrue();
            }
            assertThat(sandboxesOnceSettled(cli, "mcp-http-test")).as("closing the session disposed of its sandbox")
                    .isEmpty();
        }
    }

    /**
     * The scope's sandboxes in the backend's records, once the server's shutdown has had its chance: a client
     * ends a stdio server with a signal and does not wait for it, so disposal may still be under way.
     */
    private static List<Map<String, Object>> sandboxesOnceSettled(CliProcess cli, String scope)
            throws InterruptedException {
        long deadline = System.nanoTime() + SETTLE_BOUND.toNanos();
        List<Map<String, Object>> listed = Json.parseArrayOfObjects(cli.run("ls", "--scope", scope, "--json").stdout());
        while (!listed.isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(200);
            listed = Json.parseArrayOfObjects(cli.run("ls", "--scope", scope, "--json").stdout());
        }
        return listed;
    }

    private static URI endpointOf(Process server) throws Exception {
        BufferedReader stderr = new BufferedReader(new InputStreamReader(server.getErrorStream(), StandardCharsets.UTF_8));
        String line;
        while ((line = stderr.readLine()) != null) {
            Matcher serving = SERVING.matcher(line);
            if (serving.find()) {
                Thread drain = new Thread(() -> stderr.lines().forEach(ignored -> { }));
                drain.setDaemon(true);
                drain.start();
                return URI.create(serving.group(1));
            }
        }
        throw new AssertionError("the server never said where it serves");
    }

    private static CallToolRequest call(Map<String, Object> arguments) {
        return tool("execute_code", arguments);
    }

    private static CallToolRequest tool(String name, Map<String, Object> arguments) {
        return CallToolRequest.builder(name).arguments(arguments).build();
    }

    private static String text(CallToolResult result) {
        return ((TextContent) result.content().get(0)).text();
    }

    private static String java() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }
}
