package org.sandbox4j.springai;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

import org.sandbox4j.core.tool.CallApproval;
import org.sandbox4j.core.tool.FrameworkCalls;
import org.sandbox4j.core.tool.SandboxTool;
import org.springframework.ai.chat.model.ToolContext;
import org.springframework.ai.tool.ToolCallback;
import org.springframework.ai.tool.definition.ToolDefinition;

/**
 * One sandbox4j kind as a Spring AI {@link ToolCallback}: the tool's name, description and JSON
 * schema as they are, and a call that runs as the conversation named in the call's
 * {@link ToolContext}. Built by {@link SandboxToolCallbackProvider}; immutable and thread-safe.
 *
 * <p>The conversation id is read from the tool context under the provider's key (by default
 * {@link org.springframework.ai.chat.memory.ChatMemory#CONVERSATION_ID}), as its
 * {@code toString()}, the way Spring AI's memory advisors read it. A call without one, or through
 * {@link #call(String)}, is refused with {@link #NO_CONVERSATION}: it is never served from a key
 * another conversation could share.
 */
public final class SandboxToolCallback implements ToolCallback {

    /** What the model sees when the call carries no conversation id. */
    public static final String NO_CONVERSATION = "Error: this tool runs only within a conversation, and the call "
            + "carried no conversation id; the application must pass one in the tool context";

    /** What the model sees when a person declined the call (core's sentence). */
    public static final String NOT_APPROVED = FrameworkCalls.NOT_APPROVED;

    /** What the model sees when the host stopped the call (core's sentence). */
    public static final String CANCELLED = FrameworkCalls.CANCELLED;

    /** What the model sees when the tool itself threw (core's sentence). */
    public static final String FAILED = FrameworkCalls.FAILED;

    private static final Logger LOG = System.getLogger(SandboxToolCallback.class.getName());

    private final SandboxTool tool;
    private final ToolDefinition definition;
    private final String conversationIdKey;
    private final FrameworkCalls calls;
    private final Optional<? extends CallApproval> approval;

    SandboxToolCallback(SandboxTool tool, String conversationIdKey, FrameworkCalls calls,
            Optional<? extends CallApproval> approval) {
        this.tool = Objects.requireNonNull(tool, "tool");
        this.definition = ToolDefinition.builder()
                .name(tool.name())
                .description(tool.description())
                .inputSchema(tool.parametersSchema())
                .build();
        this.conversationIdKey = conversationIdKey;
        this.calls = calls;
        this.approval = approval;
    }

    @Override
    public ToolDefinition getToolDefinition() {
        return definition;
    }

    /** Whether a person must approve each call (the tool acts with the user's identity outside the sandbox). */
    public boolean requiresApproval() {
        return tool.requiresApproval();
    }

    /** Refused: without a tool context there is no conversation to key the sandbox by. */
    @Override
    public String call(String toolInput) {
        return refuseWithoutConversation("the call came without a tool context");
    }

    @Override
    public String call(String toolInput, ToolContext toolContext) {
        Optional<String> conversation = conversationId(toolContext);
        if (conversation.isEmpty()) {
            return refuseWithoutConversation("the tool context has no non-blank value under '" + conversationIdKey
                    + "'");
        }
        return calls.call(tool, conversation.get(), toolInput == null ? "" : toolInput, approval).text();
    }

    private Optional<String> conversationId(ToolContext toolContext) {
        if (toolContext == null) {
            return Optional.empty();
        }
        Map<String, Object> context = toolContext.getContext();
        Object value = context == null ? null : context.get(conversationIdKey);
        if (value == null) {
            return Optional.empty();
        }
        String id = value.toString();
        return id == null || id.isBlank() ? Optional.empty() : Optional.of(id);
    }

    private String refuseWithoutConversation(String why) {
        LOG.log(Level.WARNING, () -> tool.name() + ": refused a call with no conversation id (" + why
                + "); pass it with ChatClient's toolContext(Map.of(\"" + conversationIdKey + "\", id))");
        return NO_CONVERSATION;
    }

    @Override
    public String toString() {
        return "SandboxToolCallback[" + tool.name() + "]";
    }
}
