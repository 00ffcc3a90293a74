package org.sandbox4j.langchain4j;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;

/**
 * A model with a script in place of weights: a user's turn is answered with a request to call
 * {@code toolName} with the user's text as its arguments (JSON), and the tool's result is echoed
 * back as the model's text. No network; every request it saw is kept.
 */
final class ScriptedChatModel implements ChatModel {

    static final String ECHO_PREFIX = "The tool said: ";

    private final String toolName;
    private final AtomicInteger calls = new AtomicInteger();
    final List<ChatRequest> requests = new CopyOnWriteArrayList<>();
    final List<ToolExecutionResultMessage> results = new CopyOnWriteArrayList<>();

    ScriptedChatModel(String toolName) {
        this.toolName = toolName;
    }

    @Override
    public ChatResponse doChat(ChatRequest request) {
        requests.add(request);
        List<ChatMessage> messages = request.messages();
        ChatMessage last = messages.get(messages.size() - 1);
        if (last instanceof UserMessage user) {
            ToolExecutionRequest call = ToolExecutionRequest.builder()
                    .id("call-" + calls.incrementAndGet())
                    .name(toolName)
                    .arguments(user.singleText())
                    .build();
            return ChatResponse.builder().aiMessage(AiMessage.from(call)).build();
        }
        if (last instanceof ToolExecutionResultMessage result) {
            results.add(result);
            return ChatResponse.builder().aiMessage(AiMessage.from(ECHO_PREFIX + result.text())).build();
        }
        throw new IllegalStateException("the script has no answer to " + last);
    }
}
