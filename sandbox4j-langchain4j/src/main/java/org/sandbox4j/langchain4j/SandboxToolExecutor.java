package org.sandbox4j.langchain4j;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.Optional;

import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.invocation.InvocationContext;
import dev.langchain4j.service.tool.ToolExecutionResult;
import dev.langchain4j.service.tool.ToolExecutor;

import org.sandbox4j.core.spi.ErrorDetail;
import org.sandbox4j.core.SandboxInterrupted;
import org.sandbox4j.core.tool.SandboxTool;
import org.sandbox4j.core.tool.ToolResult;

/**
 * Runs one {@link SandboxTool} as a LangChain4j {@link ToolExecutor}: the call's thread is the
 * invocation's memory id, set for the duration of the call where the tool's
 * {@link org.sandbox4j.core.CallerContext} reads it; the model's arguments are handed over as they
 * came. Every outcome is a result the model reads; nothing is thrown at LangChain4j, whose default
 * error handler would show the model an exception's message.
 */
final class SandboxToolExecutor implements ToolExecutor {

    private static final Logger LOG = System.getLogger(SandboxToolExecutor.class.getName());

    /** What the model sees when the tool itself threw (it should not: its failures are results). */
    static final String FAILED = "Error: the tool failed unexpectedly; the detail is in the host's log";

    /** What the model sees when the call was cancelled (the calling thread was interrupted). */
    static final String CANCELLED = "Error: the call was cancelled";

    /** What the model sees when the host's approval said no. */
    static final String NOT_APPROVED = "Error: the call was not approved";

    private final SandboxTool tool;
    private final MemoryIds memoryIds;
    private final Optional<ToolApproval> approval;

    SandboxToolExecutor(SandboxTool tool, MemoryIds memoryIds, Optional<ToolApproval> approval) {
        this.tool = tool;
        this.memoryIds = memoryIds;
        this.approval = approval;
    }

    /** The sentence for a call outside any conversation, in core's words for it. */
    static String noConversation(String toolName) {
        return "Error: no active thread context — " + toolName + " must be called from within a thread";
    }

    @Override
    public String execute(ToolExecutionRequest request, Object memoryId) {
        return run(request, memoryId).text();
    }

    @Override
    public ToolExecutionResult executeWithContext(ToolExecutionRequest request, InvocationContext context) {
        ToolResult result = run(request, context == null ? null : context.chatMemoryId());
        return ToolExecutionResult.builder().resultText(result.text()).isError(result.error()).build();
    }

    ToolResult run(ToolExecutionRequest request, Object memoryId) {
        Optional<String> thread = MemoryIds.thread(memoryId);
        if (thread.isEmpty()) {
            // Refused before the arguments are read: a shared key would let one conversation reach
            // another's sandbox, and LangChain4j passes "default" when the AI service has no @MemoryId.
            LOG.log(Level.WARNING, () -> tool.name() + ": refused a call without a conversation (memory id "
                    + (memoryId == null ? "absent" : "'" + memoryId + "'") + "); give the AI service method a "
                    + "@MemoryId parameter and a ChatMemoryProvider");
            return ToolResult.error(noConversation(tool.name()));
        }
        if (tool.requiresApproval() && !approved(thread.get(), request)) {
            return ToolResult.error(NOT_APPROVED);
        }
        try {
            return memoryIds.callAs(thread.get(), () -> tool.callJson(request.arguments()));
        } catch (SandboxInterrupted cancelled) {
            Thread.currentThread().interrupt();
            return ToolResult.error(CANCELLED);
        } catch (RuntimeException failure) {
            LOG.log(Level.ERROR, () -> tool.name() + ": the LangChain4j call failed: " + ErrorDetail.of(failure));
            return ToolResult.error(FAILED);
        }
    }

    private boolean approved(String thread, ToolExecutionRequest request) {
        try {
            return approval.orElseThrow().approve(thread, request);
        } catch (RuntimeException failure) {
            LOG.log(Level.ERROR, () -> tool.name() + ": the approval failed, so the call was not approved: "
                    + ErrorDetail.of(failure));
            return false;
        }
    }

    @Override
    public String toString() {
        return "SandboxToolExecutor[" + tool.name() + "]";
    }
}
