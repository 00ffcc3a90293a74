package org.sandbox4j.mcp;

import java.nio.file.Path;

/**
 * Test-only: what {@code sandbox4j mcp} runs, reduced to the library call. Serves execute_code
 * on a bubblewrap backend whose state root is the first argument, over stdin and stdout.
 */
public final class StdioServerMain {

    static final String SCOPE = "mcp-stdio-test";

    private StdioServerMain() {
    }

    public static void main(String[] args) {
        BubblewrapFixture fixture = new BubblewrapFixture(Path.of(args[0]));
        try (SandboxMcpServer server = fixture.server(SCOPE).build()) {
            server.serveStdio();
        } finally {
            fixture.backend.close();
        }
    }
}
