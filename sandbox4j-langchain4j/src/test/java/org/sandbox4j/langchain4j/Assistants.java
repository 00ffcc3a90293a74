package org.sandbox4j.langchain4j;

import dev.langchain4j.memory.chat.MessageWindowChatMemory;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.service.AiServices;
import dev.langchain4j.service.MemoryId;
import dev.langchain4j.service.UserMessage;
import dev.langchain4j.service.tool.ToolProvider;

import org.sandbox4j.core.spi.Json;

/** LangChain4j AI services as an application declares them, with and without a conversation. */
final class Assistants {

    private static final int MEMORY_MESSAGES = 20;

    /** An assistant whose every call names its conversation. */
    interface Assistant {
        String chat(@MemoryId String conversation, @UserMessage String message);
    }

    /** An assistant with no {@code @MemoryId}: LangChain4j calls every conversation "default". */
    interface SharedAssistant {
        String chat(@UserMessage String message);
    }

    private Assistants() {
    }

    static Assistant assistant(ChatModel model, ToolProvider tools) {
        return AiServices.builder(Assistant.class)
                .chatModel(model)
                .chatMemoryProvider(id -> MessageWindowChatMemory.withMaxMessages(MEMORY_MESSAGES))
                .toolProvider(tools)
                .build();
    }

    static SharedAssistant shared(ChatModel model, ToolProvider tools) {
        return AiServices.builder(SharedAssistant.class)
                .chatModel(model)
                .chatMemory(MessageWindowChatMemory.withMaxMessages(MEMORY_MESSAGES))
                .toolProvider(tools)
                .build();
    }

    /** execute_code's arguments for {@code code}, as the scripted model sends them. */
    static String code(String code) {
        return "{\"code\":" + Json.quote(code) + "}";
    }
}
