package org.sandbox4j.springai;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.sandbox4j.codeact.CodeAct;
import org.sandbox4j.core.SandboxPurger;
import org.sandbox4j.core.SandboxRouter;
import org.sandbox4j.local.BubblewrapBackend;
import org.sandbox4j.local.SandboxFilesOnTheHost;
import org.sandbox4j.testkit.TemporaryBackend;
import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.chat.memory.ChatMemory;
import org.springframework.ai.chat.memory.MessageWindowChatMemory;

/**
 * execute_code through Spring AI's ChatClient, end to end: a scripted chat model asks for the
 * tool, ChatClient's tool-calling advisor calls the callback with the request's tool context,
 * and the program runs in a real bubblewrap sandbox per conversation.
 */
class ChatClientBubblewrapTest {

    private static final String SCOPE = "spring-ai-test";

    private static TemporaryBackend<BubblewrapBackend> bubblewrap;
    private static SandboxRouter router;
    private static ScriptedChatModel model;
    private static ChatClient chat;

    @BeforeAll
    static void start() {
        bubblewrap = TemporaryBackend.create("s4js", root -> BubblewrapBackend.builder().stateRoot(root).build());
        router = bubblewrap.router();
        SandboxToolCallbackProvider tools = SandboxToolCallbackProvider.builder()
                .scope(SCOPE)
                .tools(context -> List.of(CodeAct.builder(router, "agent", context).build()))
                .build();
        model = new ScriptedChatModel(CodeAct.TOOL_NAME);
        chat = ChatClient.builder(model).defaultTools(tools).build();
    }

    @AfterAll
    static void stop() {
        bubblewrap.close();
    }

    /** One user turn of {@code conversation} whose message the scripted model runs as Python. */
    private static String ask(String conversation, String code) {
        return chat.prompt()
                .user(code)
                .toolContext(Map.of(ChatMemory.CONVERSATION_ID, conversation))
                .call()
                .content();
    }

    private static String conversation() {
        return "conversation-" + UUID.randomUUID();
    }

    @Test
    void theModelsToolCallRunsInABubblewrapSandboxAndItsAnswerCarriesThePrintedValue() {
        String answer = ask(conversation(), "print(sum(range(10)))");

        assertThat(answer).isEqualTo(ScriptedChatModel.ANSWER_PREFIX + "stdout:\n45");
    }

    @Test
    void twoConversationsGetTwoSandboxesThatCannotSeeEachOthersFiles() {
        String a = conversation();
        String b = conversation();
        // Outside the call directory, so the file outlives the call in A's sandbox.
        assertThat(ask(a, "open('../a-secret', 'w').write('mine')\nprint('written')")).endsWith("stdout:\nwritten");
        assertThat(ask(a, "print(open('../a-secret').read())")).as("the same conversation, the same sandbox")
                .endsWith("stdout:\nmine");

        String fromB = ask(b, String.join("\n",
                "import os",
                "print(os.path.exists('../a-secret'))",
                "print(open('../a-secret').read())"));

        assertThat(fromB).contains("stdout:\nFalse\n").contains("FileNotFoundError").doesNotContain("mine");
    }

    @Test
    void aRequestWithoutAConversationIdIsRefusedWithAFixedSentence() {
        String answer = chat.prompt().user("print('should not run')").call().content();

        assertThat(answer).isEqualTo(ScriptedChatModel.ANSWER_PREFIX + SandboxToolCallback.NO_CONVERSATION);
    }

    @Test
    void clearingAConversationsMemoryDisposesOfItsSandboxAndNoOneElses() {
        ChatMemory memory = PurgingChatMemory.wrap(MessageWindowChatMemory.builder().build(), new SandboxPurger(router),
                SCOPE);
        String clearing = conversation();
        String staying = conversation();
        String marker = "marker-" + UUID.randomUUID();
        ask(clearing, "open('../" + marker + "', 'w').write('x')");
        ask(staying, "open('../" + marker + "-staying', 'w').write('x')");
        assertThat(filesNamed(marker)).as("the sandbox's work dir, on the host").hasSize(1);

        memory.clear(clearing);

        assertThat(filesNamed(marker)).as("the cleared conversation's sandbox is gone").isEmpty();
        assertThat(filesNamed(marker + "-staying")).as("another conversation's is not").hasSize(1);
        assertThat(ask(staying, "print(open('../" + marker + "-staying').read())")).endsWith("stdout:\nx");
    }

    /** Every regular file named {@code name} the backend holds under the state root, workspaces included. */
    static List<Path> filesNamed(String name) {
        return SandboxFilesOnTheHost.named(bubblewrap.stateRoot(), name);
    }
}
