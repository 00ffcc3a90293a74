package org.sandbox4j.mcp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.InstanceOfAssertFactories.LIST;
import static org.assertj.core.api.InstanceOfAssertFactories.MAP;
import static org.sandbox4j.mcp.McpClients.call;
import static org.sandbox4j.mcp.McpClients.text;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;

import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.modelcontextprotocol.spec.McpSchema.Tool;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.sandbox4j.codeact.CodeAct;
import org.sandbox4j.codeact.OutputMode;

/**
 * The file tools over streamable HTTP on 127.0.0.1, end to end: the SDK's own client, the areas on
 * the host, and execute_code in a real bubblewrap sandbox taking its {@code files} from the
 * session's area and landing its {@code outputs} there.
 */
class McpSessionFilesTest {

    private static final String SCOPE = "mcp-files-test";
    private static final long MAX_FILE_BYTES = 1000;
    private static final int MAX_FILES = 3;
    private static final long MAX_TOTAL_BYTES = 1500;
    private static final Duration EVENTUALLY = Duration.ofSeconds(10);

    private static BubblewrapFixture fixture;
    private static Path filesRoot;
    private static SandboxMcpServer server;
    private static HttpEndpoint endpoint;

    private final List<McpSyncClient> clients = new ArrayList<>();

    @BeforeAll
    static void start() throws IOException {
        fixture = new BubblewrapFixture();
        filesRoot = Files.createTempDirectory("s4jm-files");
        server = withFiles(fixture, filesRoot).build();
        endpoint = server.serveHttp(0);
    }

    /** execute_code with the session's area as its file store and output sink, and the file tools. */
    static SandboxMcpServer.Builder withFiles(BubblewrapFixture fixture, Path root) {
        return SandboxMcpServer.builder().router(fixture.router).scope(SCOPE)
                .sessionFiles(SessionFiles.builder().root(root).maxFileBytes(MAX_FILE_BYTES).maxFiles(MAX_FILES)
                        .maxTotalBytes(MAX_TOTAL_BYTES).build())
                .tools((context, files) -> List.of(CodeAct.builder(fixture.router, BubblewrapFixture.AGENT, context)
                        .fileStore(files).outputs(OutputMode.DECLARED).outputSink(files).build()));
    }

    @AfterAll
    static void stop() {
        server.close();
        fixture.close();
        BubblewrapFixture.deleteTree(filesRoot);
    }

    @AfterEach
    void closeClients() {
        clients.forEach(McpSyncClient::closeGracefully);
    }

    private McpSyncClient client(HttpEndpoint at) {
        McpSyncClient client = McpClients.http(at, Optional.empty());
        clients.add(client);
        return client;
    }

    private McpSyncClient client() {
        return client(endpoint);
    }

    private static CallToolResult write(McpSyncClient client, String name, String content) {
        return call(client, SessionFiles.WRITE_FILE, Map.of("name", name, "content", content));
    }

    private static CallToolResult read(McpSyncClient client, String name) {
        return call(client, SessionFiles.READ_FILE, Map.of("name", name));
    }

    private static CallToolResult list(McpSyncClient client) {
        return call(client, SessionFiles.LIST_FILES, Map.of());
    }

    private static String ok(CallToolResult result) {
        assertThat(result.isError()).as(text(result)).isFalse();
        return text(result);
    }

    private static String refused(CallToolResult result) {
        assertThat(result.isError()).as(text(result)).isTrue();
        assertThat(result.structuredContent()).isEqualTo(Map.of("text", text(result), "error", true));
        return text(result);
    }

    private static Set<Path> areas() {
        try (Stream<Path> children = Files.list(filesRoot)) {
            return new HashSet<>(children.toList());
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    /** The area {@code client}'s session made with its first write. */
    private static Path areaMadeBy(McpSyncClient client) {
        Set<Path> before = areas();
        ok(write(client, "first.txt", "1"));
        Set<Path> made = areas();
        made.removeAll(before);
        assertThat(made).as("the first write makes one area").hasSize(1);
        return made.iterator().next();
    }

    private static void awaitGone(Path path) throws InterruptedException {
        long deadline = System.nanoTime() + EVENTUALLY.toNanos();
        while (Files.exists(path, LinkOption.NOFOLLOW_LINKS) && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
    }

    @Test
    void theFileToolsAreListedOnlyWhenTheHostEnablesThem() {
        List<Tool> tools = client().listTools().tools();

        assertThat(tools).extracting(Tool::name).containsExactly(CodeAct.TOOL_NAME, "write_file", "read_file",
                "list_files", "delete_file");
        assertThat(tools.get(0).inputSchema().get("properties")).asInstanceOf(MAP).containsKeys("files", "outputs");
        Tool writeFile = tools.get(1);
        assertThat(writeFile.inputSchema().get("required")).asInstanceOf(LIST).containsExactly("name", "content");
        assertThat(writeFile.inputSchema().get("properties")).asInstanceOf(MAP).containsKeys("name", "content",
                "encoding");
        assertThat(writeFile.description()).contains("`files`", "`outputs`", "read_file", "1000 bytes");
        assertThat(writeFile.outputSchema()).containsKey("properties");
        assertThat(tools.get(2).annotations().readOnlyHint()).isTrue();
        assertThat(tools.get(4).annotations().destructiveHint()).isTrue();
        assertThat(server.toolNames()).containsExactly(CodeAct.TOOL_NAME, "write_file", "read_file", "list_files",
                "delete_file");

        try (SandboxMcpServer without = fixture.server(SCOPE).build(); HttpEndpoint plain = without.serveHttp(0)) {
            assertThat(client(plain).listTools().tools()).extracting(Tool::name).containsExactly(CodeAct.TOOL_NAME);
            assertThat(without.sessionFiles()).isEmpty();
        }
    }

    @Test
    void aFileWrittenReachesTheProgramAndItsOutputComesBackThroughReadFile() {
        McpSyncClient client = client();

        assertThat(ok(write(client, "data.csv", "x,y\n1,2\n3,4\n"))).startsWith("Wrote 'data.csv' (12 bytes).");
        String program = String.join("\n",
                "rows = [line.split(',') for line in open('data.csv').read().split()[1:]]",
                "total = sum(int(y) for _, y in rows)",
                "print('sum of y:', total)",
                "open('summary.txt', 'w').write(f'rows={len(rows)} sum={total}')");
        String ran = ok(call(client, CodeAct.TOOL_NAME, Map.of("code", program, "files", List.of("data.csv"),
                "outputs", List.of("summary.txt"))));

        assertThat(ran).isEqualTo("stdout:\nsum of y: 6\nSaved:\n- summary.txt (12 bytes; read_file reads it)");
        assertThat(ok(read(client, "summary.txt"))).isEqualTo("rows=2 sum=6");
        assertThat(ok(list(client))).isEqualTo("data.csv (12 bytes)\nsummary.txt (12 bytes)\n2 of 3 files, 24 of 1500 "
                + "bytes.");
        ok(call(client, SessionFiles.DELETE_FILE, Map.of("name", "data.csv")));
        assertThat(ok(list(client))).startsWith("summary.txt (12 bytes)\n1 of 3 files");
    }

    @Test
    void twoSessionsCannotSeeEachOthersFiles() {
        McpSyncClient a = client();
        McpSyncClient b = client();
        ok(write(a, "secret.txt", "mine"));

        assertThat(ok(list(b))).startsWith("The session holds no files yet");
        assertThat(refused(read(b, "secret.txt"))).isEqualTo("Error: there is no file named 'secret.txt' in this "
                + "session. Nothing was read; list_files shows what there is.");
        assertThat(refused(call(b, CodeAct.TOOL_NAME, Map.of("code", "print(open('secret.txt').read())",
                "files", List.of("secret.txt"))))).startsWith("Error: 'secret.txt' is not in the user's file store")
                .doesNotContain("mine");
        assertThat(refused(call(b, SessionFiles.DELETE_FILE, Map.of("name", "secret.txt"))))
                .startsWith("Error: there is no file named 'secret.txt'");
        assertThat(ok(read(a, "secret.txt"))).isEqualTo("mine");
    }

    @Test
    void closingASessionDeletesItsAreaAndNoOneElses() throws InterruptedException {
        McpSyncClient closing = McpClients.http(endpoint, Optional.empty());
        McpSyncClient staying = client();
        Path closingArea = areaMadeBy(closing);
        Path stayingArea = areaMadeBy(staying);
        assertThat(closingArea.getFileName().toString()).as("a digest, never the raw session id").hasSize(64)
                .matches("[0-9a-f]+");

        closing.closeGracefully();

        awaitGone(closingArea);
        assertThat(closingArea).as("the closed session's area").doesNotExist();
        assertThat(stayingArea.resolve("first.txt")).as("another session's").hasContent("1");
        assertThat(ok(read(staying, "first.txt"))).isEqualTo("1");
    }

    @Test
    void eachCapRefusesTheWriteWholeWithItsSentence() {
        McpSyncClient client = client();

        assertThat(refused(write(client, "big.txt", "x".repeat(1001)))).isEqualTo("Error: 'big.txt' would be 1001 "
                + "bytes, over the limit of 1000 bytes per file. Nothing was written; write a smaller file.");
        ok(write(client, "a.txt", "x".repeat(1000)));
        assertThat(refused(write(client, "b.txt", "x".repeat(600)))).isEqualTo("Error: 'b.txt' (600 bytes) would "
                + "bring the session's files to 1600 bytes, over the limit of 1500. Nothing was written; delete files "
                + "with delete_file first.");
        ok(write(client, "b.txt", "x"));
        ok(write(client, "c.txt", "x"));
        assertThat(refused(write(client, "d.txt", "x"))).isEqualTo("Error: the session already holds 3 files, the "
                + "most it may hold. Nothing was written; delete a file with delete_file first.");

        assertThat(ok(list(client))).isEqualTo("a.txt (1000 bytes)\nb.txt (1 bytes)\nc.txt (1 bytes)\n3 of 3 files, "
                + "1002 of 1500 bytes.");
    }

    @Test
    void badNamesAndArgumentsAreRefusedWithTheirSentence() {
        McpSyncClient client = client();

        assertThat(refused(write(client, "../x", "x"))).startsWith("Error: that file name is not usable (the artifact "
                + "name '../x' has a '..' segment").endsWith("Nothing was written.");
        assertThat(refused(write(client, "/etc/passwd", "x"))).contains("starts with '/'");
        assertThat(refused(write(client, "a\nb", "x"))).contains("ASCII control characters (ordinals 10)")
                .doesNotContain("\n");
        assertThat(refused(write(client, "", "x"))).contains("cannot be empty");
        assertThat(refused(write(client, "sub/x", "x"))).contains("one flat folder");
        assertThat(refused(read(client, "/etc/passwd"))).contains("starts with '/'").endsWith("Nothing was read.");
        // The SDK checks arguments against the listed schema before the tool sees them.
        CallToolResult unknown = call(client, SessionFiles.WRITE_FILE, Map.of("name", "x", "content", "x", "path", "/"));
        assertThat(unknown.isError()).isTrue();
        assertThat(text(unknown)).contains("'path' is not defined in the schema");
        CallToolResult missing = call(client, SessionFiles.WRITE_FILE, Map.of("name", "x"));
        assertThat(missing.isError()).isTrue();
        assertThat(text(missing)).contains("content");
        assertThat(refused(call(client, SessionFiles.WRITE_FILE, Map.of("name", "x", "content", "!", "encoding",
                "base64")))).isEqualTo("Error: `content` is not valid base64. Nothing was written.");

        assertThat(ok(list(client))).startsWith("The session holds no files yet");
    }

    @Test
    void bytesTravelAsBase64AndAreNotReadAsText() {
        McpSyncClient client = client();
        String bytes = Base64.getEncoder().encodeToString(new byte[] {(byte) 0xff, (byte) 0xfe, 0, 65});

        ok(call(client, SessionFiles.WRITE_FILE, Map.of("name", "blob.bin", "content", bytes, "encoding", "base64")));

        assertThat(refused(read(client, "blob.bin"))).isEqualTo("Error: 'blob.bin' is not UTF-8 text (4 bytes); read "
                + "it with `encoding` \"base64\".");
        assertThat(ok(call(client, SessionFiles.READ_FILE, Map.of("name", "blob.bin", "encoding", "base64"))))
                .isEqualTo(bytes);
    }

    @Test
    void aLinkPlantedInTheAreaIsRefusedAndItsTargetUntouched() throws IOException {
        McpSyncClient client = client();
        Path area = areaMadeBy(client);
        Path target = Files.writeString(Files.createTempFile("s4jm-target", ".txt"), "untouched");
        try {
            Files.createSymbolicLink(area.resolve("evil.txt"), target);

            assertThat(refused(read(client, "evil.txt"))).isEqualTo("Error: 'evil.txt' is a link, and these tools "
                    + "never follow a link. Nothing was read; delete it with delete_file, or use another name.");
            assertThat(refused(write(client, "evil.txt", "overwritten"))).startsWith("Error: 'evil.txt' is a link");
            assertThat(refused(call(client, CodeAct.TOOL_NAME, Map.of("code", "print(open('evil.txt').read())",
                    "files", List.of("evil.txt"))))).startsWith("Error: 'evil.txt' is not in the user's file store");
            assertThat(ok(list(client))).doesNotContain("evil.txt");
            assertThat(target).hasContent("untouched");

            ok(call(client, SessionFiles.DELETE_FILE, Map.of("name", "evil.txt")));
            assertThat(Files.exists(area.resolve("evil.txt"), LinkOption.NOFOLLOW_LINKS)).isFalse();
            assertThat(target).hasContent("untouched");
        } finally {
            Files.deleteIfExists(target);
        }
    }

    @Test
    void closingTheServerDeletesEveryArea() throws IOException {
        Path root = Files.createTempDirectory("s4jm-files-close");
        try {
            SandboxMcpServer closing = withFiles(fixture, root).build();
            HttpEndpoint at = closing.serveHttp(0);
            McpSyncClient a = McpClients.http(at, Optional.empty());
            McpSyncClient b = McpClients.http(at, Optional.empty());
            ok(write(a, "a.txt", "a"));
            ok(write(b, "b.txt", "b"));
            try (Stream<Path> made = Files.list(root)) {
                assertThat(made).hasSize(2);
            }

            closing.close();

            assertThat(root).isEmptyDirectory();
            a.close();
            b.close();
        } finally {
            BubblewrapFixture.deleteTree(root);
        }
    }
}
