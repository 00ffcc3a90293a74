package org.sandbox4j.springai;

import java.util.Optional;

import org.sandbox4j.core.CallerContext;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxRouter;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.tool.SandboxTool;
import org.sandbox4j.core.tool.SandboxedTool;
import org.sandbox4j.core.tool.ToolResult;

/** A kind that is not execute_code: it acquires its sandbox and answers with the key it ran under. */
final class Whoami {

    static final String NAME = "whoami";
    static final String SCHEMA = "{\"type\":\"object\",\"properties\":{\"threadId\":{\"type\":\"string\"}}}";
    static final String DESCRIPTION = "Says which conversation key the call ran under.";

    private Whoami() {
    }

    static Optional<SandboxTool> tool(SandboxRouter router, CallerContext context, String agentDir) {
        return tool(NAME, router, context, agentDir, false);
    }

    static Optional<SandboxTool> tool(String name, SandboxRouter router, CallerContext context, String agentDir,
            boolean requiresApproval) {
        return SandboxedTool.builder(name, SandboxSpec.builder(NAME).build())
                .router(router)
                .context(context)
                .agentDir(agentDir)
                .description(DESCRIPTION)
                .parametersSchema(SCHEMA)
                .requiresApproval(requiresApproval)
                .body((call, arguments) -> {
                    SandboxKey key = call.key();
                    call.acquire(key);
                    return ToolResult.ok(key.scope() + "|" + key.threadId() + "|" + key.agentDir());
                })
                .build();
    }
}
