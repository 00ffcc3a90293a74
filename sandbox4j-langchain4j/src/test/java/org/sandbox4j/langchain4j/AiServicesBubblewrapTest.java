package org.sandbox4j.langchain4j;

import static org.assertj.core.api.Assertions.assertThat;
import static org.sandbox4j.langchain4j.Assistants.code;

import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.model.chat.request.json.JsonObjectSchema;
import dev.langchain4j.model.chat.request.json.JsonStringSchema;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.sandbox4j.langchain4j.Assistants.Assistant;

/**
 * A LangChain4j AI service with a scripted model calling execute_code through the provider, on a
 * real bubblewrap sandbox: the program runs and its output reaches the model; each memory id is
 * its own sandbox; an assistant without a memory id is refused.
 */
class AiServicesBubblewrapTest {

    private static BubblewrapFixture fixture;
    private static SandboxToolProvider provider;

    @BeforeAll
    static void start() {
        fixture = new BubblewrapFixture();
        provider = fixture.provider();
    }

    @AfterAll
    static void stop() {
        fixture.close();
    }

    @Test
    void theAssistantRunsTheModelsProgramInASandboxAndAnswersWithWhatItPrinted() {
        ScriptedChatModel model = new ScriptedChatModel("execute_code");
        Assistant assistant = Assistants.assistant(model, provider);

        String answer = assistant.chat("conversation-sum", code("print(sum(range(10)))"));

        assertThat(answer).isEqualTo(ScriptedChatModel.ECHO_PREFIX + "stdout:\n45");
        assertThat(model.results).singleElement().satisfies(result -> assertThat(result.isError()).isFalse());
        ToolSpecification offered = model.requests.get(0).toolSpecifications().get(0);
        assertThat(offered.name()).isEqualTo("execute_code");
        assertThat(offered.parameters().required()).containsExactly("code");
        assertThat(offered.parameters().additionalProperties()).isFalse();
        assertThat(offered.parameters().properties().get("code")).isInstanceOf(JsonStringSchema.class);
        assertThat(offered.parameters()).isInstanceOf(JsonObjectSchema.class);
        assertThat(fixture.sandboxesOf("conversation-sum")).as("the memory id is the key's thread").hasSize(1);
    }

    @Test
    void twoMemoryIdsGetTwoSandboxesThatCannotSeeEachOthersFiles() {
        ScriptedChatModel model = new ScriptedChatModel("execute_code");
        Assistant assistant = Assistants.assistant(model, provider);
        String write = "open('../a-secret', 'w').write('only for A')\nprint('written')";
        String read = "import os\nprint(open('../a-secret').read() if os.path.exists('../a-secret') else 'absent')";

        assertThat(assistant.chat("conversation-a", code(write))).endsWith("stdout:\nwritten");
        assertThat(assistant.chat("conversation-a", code(read)))
                .as("A's file outlives A's call: it sits beside the call directory, in A's sandbox")
                .endsWith("stdout:\nonly for A");
        assertThat(assistant.chat("conversation-b", code(read))).endsWith("stdout:\nabsent");
        assertThat(fixture.sandboxesOf("conversation-a")).hasSize(1);
        assertThat(fixture.sandboxesOf("conversation-b")).hasSize(1);
    }

    @Test
    void anAssistantWithoutAMemoryIdIsRefusedAndNothingRuns() {
        ScriptedChatModel model = new ScriptedChatModel("execute_code");

        String answer = Assistants.shared(model, provider).chat(code("open('../ran', 'w'); print('ran')"));

        assertThat(answer).isEqualTo(ScriptedChatModel.ECHO_PREFIX
                + "Error: no active thread context — execute_code must be called from within a thread");
        assertThat(model.results).singleElement().satisfies(result -> assertThat(result.isError()).isTrue());
        assertThat(fixture.sandboxesOf(MemoryIds.SHARED_DEFAULT)).as("no sandbox under the shared key").isEmpty();
    }
}
