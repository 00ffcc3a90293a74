package org.sandbox4j.langchain4j;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import dev.langchain4j.model.chat.request.json.JsonAnyOfSchema;
import dev.langchain4j.model.chat.request.json.JsonArraySchema;
import dev.langchain4j.model.chat.request.json.JsonBooleanSchema;
import dev.langchain4j.model.chat.request.json.JsonEnumSchema;
import dev.langchain4j.model.chat.request.json.JsonIntegerSchema;
import dev.langchain4j.model.chat.request.json.JsonNullSchema;
import dev.langchain4j.model.chat.request.json.JsonNumberSchema;
import dev.langchain4j.model.chat.request.json.JsonObjectSchema;
import dev.langchain4j.model.chat.request.json.JsonStringSchema;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.sandbox4j.codeact.CodeAct;
import org.sandbox4j.codeact.Language;
import org.sandbox4j.codeact.OutputMode;
import org.sandbox4j.core.CallerContext;
import org.sandbox4j.core.Capability;
import org.sandbox4j.core.FileListing;
import org.sandbox4j.core.Isolation;
import org.sandbox4j.core.SandboxRouter;
import org.sandbox4j.core.outputs.FileSystemSink;
import org.sandbox4j.core.tool.SandboxTool;
import org.sandbox4j.testkit.InMemoryBackend;
import org.sandbox4j.testkit.InMemoryFileStore;

/** A kind's JSON schema becomes LangChain4j's schema keyword for keyword, or construction fails. */
class JsonSchemasTest {

    @Test
    void everyKeywordLangChain4jCanCarryIsCarried() {
        JsonObjectSchema converted = JsonSchemas.parameters("t", "{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\","
                + "\"type\":\"object\",\"description\":\"root\",\"properties\":{"
                + "\"s\":{\"type\":\"string\",\"description\":\"a string\"},"
                + "\"i\":{\"type\":\"integer\"},\"n\":{\"type\":\"number\",\"description\":\"a number\"},"
                + "\"b\":{\"type\":\"boolean\"},\"z\":{\"type\":\"null\"},"
                + "\"e\":{\"type\":\"string\",\"enum\":[\"x\",\"y\"],\"description\":\"pick\"},"
                + "\"untyped\":{\"enum\":[\"only\"]},"
                + "\"names\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"description\":\"names\"},"
                + "\"nested\":{\"type\":\"object\",\"properties\":{\"k\":{\"type\":\"string\"}},\"required\":[\"k\"],"
                + "\"additionalProperties\":true},"
                + "\"either\":{\"anyOf\":[{\"type\":\"string\"},{\"type\":\"integer\"}],\"description\":\"one of\"}},"
                + "\"required\":[\"s\",\"e\"],\"additionalProperties\":false}");

        JsonObjectSchema expected = JsonObjectSchema.builder()
                .description("root")
                .addProperty("s", JsonStringSchema.builder().description("a string").build())
                .addProperty("i", JsonIntegerSchema.builder().build())
                .addProperty("n", JsonNumberSchema.builder().description("a number").build())
                .addProperty("b", JsonBooleanSchema.builder().build())
                .addProperty("z", new JsonNullSchema())
                .addProperty("e", JsonEnumSchema.builder().enumValues("x", "y").description("pick").build())
                .addProperty("untyped", JsonEnumSchema.builder().enumValues("only").build())
                .addProperty("names", JsonArraySchema.builder().items(JsonStringSchema.builder().build())
                        .description("names").build())
                .addProperty("nested", JsonObjectSchema.builder().addStringProperty("k").required("k")
                        .additionalProperties(true).build())
                .addProperty("either", JsonAnyOfSchema.builder().anyOf(JsonStringSchema.builder().build(),
                        JsonIntegerSchema.builder().build()).description("one of").build())
                .required("s", "e")
                .additionalProperties(false)
                .build();
        assertThat(converted).isEqualTo(expected);
        assertThat(List.copyOf(converted.properties().keySet())).as("in the schema's order")
                .containsExactly("s", "i", "n", "b", "z", "e", "untyped", "names", "nested", "either");
    }

    @Test
    void anUnsetAdditionalPropertiesStaysUnset() {
        assertThat(JsonSchemas.parameters("t", "{\"type\":\"object\",\"properties\":{}}").additionalProperties())
                .isNull();
    }

    @Test
    void executeCodeWithEveryParameterIsCarriedWhole(@TempDir Path landing) {
        InMemoryBackend backend = InMemoryBackend.builder().isolation(Isolation.CONTAINER)
                .capabilities(Capability.EXEC, Capability.FILES_IN, Capability.FILES_OUT).build();
        SandboxRouter router = SandboxRouter.builder().backend(backend).minIsolation(Isolation.CONTAINER).build();
        SandboxTool tool = CodeAct.builder(router, "agent", CallerContext.of(() -> "s", () -> "t", FileListing.ALL))
                .languages(Language.PYTHON, Language.JAVASCRIPT)
                .fileStore(InMemoryFileStore.of(Map.of()))
                .outputs(OutputMode.DECLARED).outputSink(FileSystemSink.at(landing))
                .build().orElseThrow();

        JsonObjectSchema schema = SandboxToolProvider.specification(tool).parameters();

        assertThat(schema.properties()).containsOnlyKeys("code", "language", "files", "outputs");
        assertThat(schema.properties().get("language")).isInstanceOfSatisfying(JsonEnumSchema.class,
                language -> assertThat(language.enumValues()).containsExactly("python", "javascript"));
        assertThat(schema.properties().get("files")).isInstanceOfSatisfying(JsonArraySchema.class,
                files -> assertThat(files.items()).isInstanceOf(JsonStringSchema.class));
        assertThat(schema.required()).containsExactly("code");
        assertThat(schema.additionalProperties()).isFalse();
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\",\"minimum\":1}}}",
            "{\"type\":\"object\",\"properties\":{\"s\":{\"type\":\"string\",\"pattern\":\"^a\"}}}",
            "{\"type\":\"object\",\"properties\":{\"s\":{\"type\":[\"string\",\"null\"]}}}",
            "{\"type\":\"object\",\"properties\":{\"r\":{\"$ref\":\"#/$defs/x\"}}}",
            "{\"type\":\"object\",\"properties\":{\"e\":{\"type\":\"integer\",\"enum\":[1,2]}}}",
            "{\"type\":\"object\",\"properties\":{\"e\":{\"enum\":[1,2]}}}",
            "{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\"}}",
            "{\"type\":\"object\",\"properties\":{\"x\":{\"type\":\"date\"}}}",
            "{\"type\":\"object\",\"properties\":{\"x\":{\"description\":\"no type\"}}}",
            "{\"type\":\"array\",\"items\":{\"type\":\"string\"}}",
            "[1]"})
    void aKeywordLangChain4jCannotCarryFailsConstructionRatherThanBeingDropped(String schema) {
        assertThatThrownBy(() -> JsonSchemas.parameters("t", schema)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("parameters schema of t");
    }

    @Test
    void theRefusalNamesTheKeywordAndWhereItIs() {
        assertThatThrownBy(() -> JsonSchemas.parameters("t",
                "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"array\",\"items\":{\"type\":\"string\",\"maxLength\":3}}}}"))
                .hasMessageContaining("\"maxLength\"").hasMessageContaining("/properties/a/items");
    }
}
