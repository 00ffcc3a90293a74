package org.sandbox4j.springai;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.messages.Message;
import org.springframework.ai.chat.messages.ToolResponseMessage;
import org.springframework.ai.chat.messages.UserMessage;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.ai.chat.model.ChatResponse;
import org.springframework.ai.chat.model.Generation;
import org.springframework.ai.chat.prompt.ChatOptions;
import org.springframework.ai.chat.prompt.Prompt;
import org.springframework.ai.model.tool.ToolCallingChatOptions;

/**
 * A chat model with a fixed script, standing in for an LLM (no network): asked anything, it
 * answers with a call of {@code tool} whose {@code code} argument is the user's message; given
 * the tool's response, it answers with {@link #ANSWER_PREFIX} and the tool's text. Spring AI's
 * ChatClient runs the tool in between (its tool-calling advisor), as it would for a real model.
 */
final class ScriptedChatModel implements ChatModel {

    static final String ANSWER_PREFIX = "The sandbox said: ";

    private final String tool;
    private final List<String> toolResponses = new CopyOnWriteArrayList<>();

    ScriptedChatModel(String tool) {
        this.tool = tool;
    }

    /** Every tool response the model was shown, in order. */
    List<String> toolResponses() {
        return List.copyOf(toolResponses);
    }

    @Override
    public ChatOptions getOptions() {
        // Tool-calling options, so ChatClient hands over the callbacks and the tool context.
        return ToolCallingChatOptions.builder().build();
    }

    @Override
    public ChatResponse call(Prompt prompt) {
        List<Message> messages = prompt.getInstructions();
        Message last = messages.get(messages.size() - 1);
        if (last instanceof ToolResponseMessage response) {
            String text = response.getResponses().get(0).responseData();
            toolResponses.add(text);
            return answer(AssistantMessage.builder().content(ANSWER_PREFIX + text).build());
        }
        String code = ((UserMessage) last).getText();
        AssistantMessage.ToolCall call = new AssistantMessage.ToolCall("call-" + toolResponses.size(), "function", tool,
                "{\"code\":" + jsonString(code) + "}");
        return answer(AssistantMessage.builder().content("").toolCalls(List.of(call)).build());
    }

    private static ChatResponse answer(AssistantMessage message) {
        return new ChatResponse(List.of(new Generation(message)));
    }

    private static String jsonString(String text) {
        StringBuilder json = new StringBuilder("\"");
        for (char c : text.toCharArray()) {
            switch (c) {
                case '"' -> json.append("\\\"");
                case '\\' -> json.append("\\\\");
                case '\n' -> json.append("\\n");
                case '\t' -> json.append("\\t");
                default -> {
                    if (c < 0x20) {
                        json.append(String.format("\\u%04x", (int) c));
                    } else {
                        json.append(c);
                    }
                }
            }
        }
        return json.append('"').toString();
    }
}
