package org.sandbox4j.core.tool;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;

import org.sandbox4j.core.SandboxInterrupted;
import org.sandbox4j.core.spi.ErrorDetail;

/**
 * How an adapter runs each call its framework makes: as the conversation the adapter read from
 * the framework's own context, after asking the approval when the tool requires one, and always
 * answered with a result — never thrown at the framework, whose own error handling would show the
 * model an exception's message. Not approved, cancelled and failed calls get the fixed sentences
 * below; the detail goes to the adapter's log. Immutable and thread-safe.
 */
public final class FrameworkCalls {

    /** What the model sees when the approval said no (or failed). */
    public static final String NOT_APPROVED = "Error: the call was not approved";

    /** What the model sees when the call was cancelled (its thread was interrupted). */
    public static final String CANCELLED = "Error: the call was cancelled";

    /** What the model sees when a tool threw (it should not: its failures are results). */
    public static final String FAILED = "Error: the tool failed unexpectedly; the detail is in the host's log";

    private final String framework;
    private final CurrentConversation conversations;
    private final Logger logger;

    /**
     * @param framework     the framework's name, for the log
     * @param conversations where the call's conversation is set for its tool's {@code CallerContext}
     * @param logger        the adapter's log
     */
    public FrameworkCalls(String framework, CurrentConversation conversations, Logger logger) {
        this.framework = Objects.requireNonNull(framework, "framework");
        this.conversations = Objects.requireNonNull(conversations, "conversations");
        this.logger = Objects.requireNonNull(logger, "logger");
    }

    /** What the model sees when the call came outside any conversation, in the words {@link ToolCall#key()} uses. */
    public static String noConversation(String toolName) {
        return "Error: no active thread context — " + toolName + " must be called from within a thread";
    }

    /**
     * Runs one call of {@code tool} as {@code thread}. A tool that requires approval runs only if
     * {@code approval} says yes; a missing approval, or one that throws, is a no (checked again
     * here although {@link ToolSet} refused such a tool at build: fail closed).
     *
     * @param thread        the conversation, read by the adapter from its framework (never from the arguments)
     * @param argumentsJson the model's arguments as JSON text, as the framework handed them over
     * @param approval      asked only when the tool requires approval
     */
    public ToolResult call(SandboxTool tool, String thread, String argumentsJson,
            Optional<? extends CallApproval> approval) {
        Objects.requireNonNull(thread, "thread");
        if (tool.requiresApproval() && !approved(tool.name(), argumentsJson, thread, approval)) {
            return ToolResult.error(NOT_APPROVED);
        }
        return call(tool.name(), thread, () -> tool.callJson(argumentsJson));
    }

    /**
     * Runs {@code body} as {@code thread}, for an adapter's own tool that is not a {@link SandboxTool}
     * (MCP's file tools): cancellation and failure are answered as for any tool.
     */
    public ToolResult call(String toolName, String thread, Supplier<ToolResult> body) {
        try {
            return conversations.callAs(thread, body);
        } catch (SandboxInterrupted cancelled) {
            // Answered, and the interrupt kept for the framework's thread to see.
            Thread.currentThread().interrupt();
            return ToolResult.error(CANCELLED);
        } catch (RuntimeException failure) {
            logger.log(Level.ERROR, () -> toolName + ": the " + framework + " call failed: " + ErrorDetail.of(failure));
            return ToolResult.error(FAILED);
        }
    }

    private boolean approved(String toolName, String argumentsJson, String thread,
            Optional<? extends CallApproval> approval) {
        if (approval.isEmpty()) {
            logger.log(Level.ERROR, () -> toolName + ": requires approval and the " + framework + " adapter has "
                    + "none, so the call was not approved");
            return false;
        }
        try {
            return approval.get().approve(toolName, argumentsJson, thread);
        } catch (RuntimeException failure) {
            logger.log(Level.ERROR, () -> toolName + ": the approval failed, so the call was not approved: "
                    + ErrorDetail.of(failure));
            return false;
        }
    }

    @Override
    public String toString() {
        return "FrameworkCalls[" + framework + "]";
    }
}
