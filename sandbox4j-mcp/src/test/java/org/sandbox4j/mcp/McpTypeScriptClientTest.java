package org.sandbox4j.mcp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.InstanceOfAssertFactories.LIST;
import static org.assertj.core.api.InstanceOfAssertFactories.MAP;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.TypeRef;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.sandbox4j.codeact.CodeAct;

/**
 * The server driven by a client that is not ours: the official MCP TypeScript SDK (pinned in
 * src/test/node, installed by scripts/test.sh), over stdio with the server JVM in the C locale as
 * desktop hosts start it, and over streamable HTTP. The node script reports what it saw; this
 * test asserts it.
 */
class McpTypeScriptClientTest {

    /** Where scripts/test.sh installed the SDK. */
    static final String MODULES_VARIABLE = "SANDBOX4J_MCP_NODE_MODULES";

    private static final Path NODE = Path.of("/usr/bin/node");
    private static final Path SCRIPT = Path.of("src/test/node/client.mjs").toAbsolutePath();

    /** Bound on one run of the script: a few bubblewrap calls and the waits it makes; generous. */
    private static final Duration SCRIPT_BOUND = Duration.ofMinutes(3);

    /** The most of the script's report read. */
    private static final long MAX_REPORT_BYTES = 1 << 20;

    private static final String TOKEN = "token-" + UUID.randomUUID();

    private final Path stateRoot = BubblewrapFixture.newStateRoot();
    private final List<Path> scratch = new ArrayList<>();

    @AfterEach
    void removeScratch() {
        BubblewrapFixture.deleteTree(stateRoot);
        scratch.forEach(BubblewrapFixture::deleteTree);
    }

    @Test
    void overStdioInTheCLocaleCancellationProgressAndNonAsciiNamesWork() throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        Path files = temporary("s4jm-ts-files");
        Map<String, Object> report = runScript("stdio", java, classPath, StdioServerMain.class.getName(),
                stateRoot.toString(), files.toString());

        assertCallsBehave(report);
        assertThat(report.get("files")).asInstanceOf(MAP).satisfies(checks -> {
            assertThat(checks.get("written")).asInstanceOf(MAP).containsEntry("isError", false);
            assertThat(checks.get("read")).asInstanceOf(MAP).containsEntry("isError", false)
                    .extractingByKey("text").asString().contains("grüße");
            assertThat(checks.get("listed")).asString().contains("é日本.txt");
        });
    }

    @Test
    void overHttpCancellationProgressAndErrorsAreWhatAClientExpects() throws Exception {
        Path files = temporary("s4jm-ts-files");
        try (BubblewrapFixture fixture = new BubblewrapFixture(stateRoot);
                SandboxMcpServer server = McpSessionFilesTest.withFiles(fixture, files).bearerToken(TOKEN).build();
                HttpEndpoint endpoint = server.serveHttp(0)) {
            Map<String, Object> report = runScript("http", endpoint.uri().toString(), TOKEN);

            assertCallsBehave(report);
            Map<String, Map<String, Object>> http = McpJsonDefaults.getMapper().convertValue(report.get("http"),
                    new TypeRef<Map<String, Map<String, Object>>>() {
                    });
            assertThat(http.get("badToken")).containsEntry("status", 401);
            assertThat(http.get("noToken")).containsEntry("status", 401);
            assertThat(http.get("badProtocolVersion")).containsEntry("status", 400);
            assertThat(http.get("unknownSession")).containsEntry("status", 404);
            assertThat(http.get("malformed")).containsEntry("status", 400);
            for (String discovery : List.of("oauthProtectedResource", "oauthProtectedResourceMcp",
                    "oauthAuthorizationServer")) {
                assertThat(http.get(discovery)).as(discovery).containsEntry("status", 404);
            }
            http.forEach((check, response) -> {
                String body = String.valueOf(response.get("body"));
                assertThat(body).as(check + ": no stack trace").doesNotContain("\tat ", "Exception", ".java:");
                if (!String.valueOf(response.get("status")).equals("200")) {
                    assertThat(body).as(check + ": a JSON-RPC error").contains("\"jsonrpc\":\"2.0\"", "\"error\"");
                }
            });
        }
    }

    private static void assertCallsBehave(Map<String, Object> report) {
        assertThat(report).doesNotContainKey("failure");
        assertThat(report.get("tools")).asInstanceOf(LIST).contains(CodeAct.TOOL_NAME);

        Map<?, ?> progress = (Map<?, ?>) report.get("progress");
        assertThat(progress.get("isError")).isEqualTo(false);
        assertThat(String.join("", ((List<?>) progress.get("messages")).stream()
                .map(message -> message == null ? "" : message.toString()).toList()))
                .as("the output came as progress").contains("line 0", "line 4");

        Map<?, ?> cancellation = (Map<?, ?>) report.get("cancellation");
        assertThat(cancellation.get("outcome")).asString().startsWith("rejected");
        String[] sizes = cancellation.get("measured").toString().replace("stdout:", "").strip().split("\\s+");
        assertThat(sizes).as("the ticks file's size a second apart, 2 s after the cancellation").hasSize(2);
        assertThat(Long.parseLong(sizes[0])).as("the program ran before the cancellation").isPositive();
        assertThat(sizes[1]).as("the program was stopped by the cancellation").isEqualTo(sizes[0]);
        assertThat(report.get("clientErrors")).as("no response to the cancelled request").asInstanceOf(LIST)
                .isEmpty();
    }

    private Map<String, Object> runScript(String... arguments) throws IOException, InterruptedException {
        String modules = System.getenv(MODULES_VARIABLE);
        assertThat(NODE).as("node, which scripts/test.sh installs").isExecutable();
        assertThat(modules).as(MODULES_VARIABLE + ": run scripts/test.sh, which installs the MCP TypeScript SDK "
                + "and exports it").isNotBlank();
        assertThat(Path.of(modules, "@modelcontextprotocol", "sdk", "package.json"))
                .as("the MCP TypeScript SDK under " + MODULES_VARIABLE + "; run scripts/test.sh to install it")
                .isRegularFile();
        Path out = Files.createTempFile("s4jm-ts-report", ".json");
        scratch.add(out);
        List<String> command = new ArrayList<>(List.of(NODE.toString(), SCRIPT.toString(), modules));
        command.addAll(List.of(arguments));
        Process node = new ProcessBuilder(command).redirectOutput(out.toFile())
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        if (!node.waitFor(SCRIPT_BOUND.toMillis(), TimeUnit.MILLISECONDS)) {
            node.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            throw new AssertionError("the TypeScript client did not finish within " + SCRIPT_BOUND);
        }
        assertThat(Files.size(out)).isPositive().isLessThan(MAX_REPORT_BYTES);
        String text = Files.readString(out, StandardCharsets.UTF_8);
        return McpJsonDefaults.getMapper().readValue(text, new TypeRef<Map<String, Object>>() {
        });
    }

    private Path temporary(String prefix) throws IOException {
        Path directory = Files.createTempDirectory(prefix);
        scratch.add(directory);
        return directory;
    }
}
