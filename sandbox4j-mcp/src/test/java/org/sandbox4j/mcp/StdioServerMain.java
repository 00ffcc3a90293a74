package org.sandbox4j.mcp;

import java.nio.file.Path;

/**
 * Test-only: what {@code sandbox4j mcp} runs, reduced to the library call. Serves execute_code
 * on a bubblewrap backend whose state root is the first argument, over stdin and stdout; with a
 * second argument, also the session file tools, their areas under it.
 */
public final class StdioServerMain {

    static final String SCOPE = "mcp-stdio-test";

    private StdioServerMain() {
    }

    public static void main(String[] args) {
        BubblewrapFixture fixture = new BubblewrapFixture(Path.of(args[0]));
        SandboxMcpServer.Builder builder = args.length > 1 ? McpSessionFilesTest.withFiles(fixture, Path.of(args[1]))
                : fixture.server(SCOPE);
        try (SandboxMcpServer server = builder.build()) {
            server.serveStdio();
        } finally {
            fixture.backend.close();
        }
    }
}
