package org.sandbox4j.langchain4j;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

import dev.langchain4j.model.chat.request.json.JsonAnyOfSchema;
import dev.langchain4j.model.chat.request.json.JsonArraySchema;
import dev.langchain4j.model.chat.request.json.JsonBooleanSchema;
import dev.langchain4j.model.chat.request.json.JsonEnumSchema;
import dev.langchain4j.model.chat.request.json.JsonIntegerSchema;
import dev.langchain4j.model.chat.request.json.JsonNullSchema;
import dev.langchain4j.model.chat.request.json.JsonNumberSchema;
import dev.langchain4j.model.chat.request.json.JsonObjectSchema;
import dev.langchain4j.model.chat.request.json.JsonSchemaElement;
import dev.langchain4j.model.chat.request.json.JsonStringSchema;

import org.sandbox4j.core.spi.Json;

/**
 * A kind's parameter schema (JSON Schema text) as LangChain4j's {@link JsonObjectSchema}, keyword
 * for keyword. LangChain4j's schema elements hold less than JSON Schema does, so a keyword they
 * cannot carry (a bound, a pattern, a {@code $ref}, a type list) is refused at construction rather
 * than dropped: a dropped constraint would tell the model it may send what the tool then refuses.
 */
final class JsonSchemas {

    /** Keywords that describe a schema document and constrain nothing: read past, never refused. */
    private static final Set<String> ANNOTATIONS = Set.of("$schema", "$comment");

    private static final Set<String> SCALAR_KEYWORDS = Set.of("type", "description");
    private static final Set<String> ENUM_KEYWORDS = Set.of("type", "description", "enum");
    private static final Set<String> ARRAY_KEYWORDS = Set.of("type", "description", "items");
    private static final Set<String> OBJECT_KEYWORDS = Set.of("type", "description", "properties", "required",
            "additionalProperties");
    private static final Set<String> ANY_OF_KEYWORDS = Set.of("description", "anyOf");
    private static final Set<String> NULL_KEYWORDS = Set.of("type");

    /** The scalar types, each with the element that carries it (and its description, the one other keyword). */
    private static final Map<String, Function<String, JsonSchemaElement>> SCALARS = Map.of(
            "string", description -> JsonStringSchema.builder().description(description).build(),
            "integer", description -> JsonIntegerSchema.builder().description(description).build(),
            "number", description -> JsonNumberSchema.builder().description(description).build(),
            "boolean", description -> JsonBooleanSchema.builder().description(description).build());

    private JsonSchemas() {
    }

    /**
     * The parameters of tool {@code toolName}.
     *
     * @throws IllegalArgumentException not an object schema, or a keyword LangChain4j cannot carry
     */
    static JsonObjectSchema parameters(String toolName, String schemaText) {
        Map<String, Object> schema;
        try {
            schema = Json.parseObject(schemaText);
        } catch (Json.Malformed malformed) {
            throw new IllegalArgumentException("the parameters schema of " + toolName + " is not a JSON object: "
                    + malformed.getMessage(), malformed);
        }
        if (!"object".equals(schema.get("type"))) {
            throw refused(toolName, "", "the parameters must be an object schema (\"type\": \"object\")");
        }
        return object(toolName, "", schema);
    }

    private static JsonSchemaElement element(String tool, String at, Object node) {
        if (!(node instanceof Map<?, ?>)) {
            throw refused(tool, at, "a schema must be a JSON object, not " + Json.kind(node));
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> schema = (Map<String, Object>) node;
        if (schema.containsKey("anyOf")) {
            return anyOf(tool, at, schema);
        }
        if (schema.containsKey("enum")) {
            return enumeration(tool, at, schema);
        }
        Object type = schema.get("type");
        if (!(type instanceof String name)) {
            throw refused(tool, at, type == null ? "a schema without \"type\" cannot be represented"
                    : "\"type\" must be one type name; LangChain4j has no type lists (use anyOf)");
        }
        Function<String, JsonSchemaElement> scalar = SCALARS.get(name);
        if (scalar != null) {
            allowOnly(tool, at, schema, SCALAR_KEYWORDS);
            return scalar.apply(description(tool, at, schema));
        }
        switch (name) {
            case "null":
                allowOnly(tool, at, schema, NULL_KEYWORDS);
                return new JsonNullSchema();
            case "array":
                return array(tool, at, schema);
            case "object":
                return object(tool, at, schema);
            default:
                throw refused(tool, at, "unknown type \"" + name + "\"");
        }
    }

    private static JsonObjectSchema object(String tool, String at, Map<String, Object> schema) {
        allowOnly(tool, at, schema, OBJECT_KEYWORDS);
        JsonObjectSchema.Builder builder = JsonObjectSchema.builder().description(description(tool, at, schema));
        Object properties = schema.get("properties");
        if (properties != null) {
            if (!(properties instanceof Map<?, ?> named)) {
                throw refused(tool, at, "\"properties\" must be an object");
            }
            Map<String, JsonSchemaElement> converted = new LinkedHashMap<>();
            for (Map.Entry<?, ?> property : named.entrySet()) {
                String name = (String) property.getKey();
                converted.put(name, element(tool, at + "/properties/" + name, property.getValue()));
            }
            builder.addProperties(converted);
        }
        Object required = schema.get("required");
        if (required != null) {
            builder.required(strings(tool, at, "required", required));
        }
        Object additional = schema.get("additionalProperties");
        if (additional != null) {
            if (!(additional instanceof Boolean allowed)) {
                throw refused(tool, at, "\"additionalProperties\" must be true or false; LangChain4j cannot carry "
                        + "a schema there");
            }
            builder.additionalProperties(allowed);
        }
        return builder.build();
    }

    private static JsonArraySchema array(String tool, String at, Map<String, Object> schema) {
        allowOnly(tool, at, schema, ARRAY_KEYWORDS);
        JsonArraySchema.Builder builder = JsonArraySchema.builder().description(description(tool, at, schema));
        Object items = schema.get("items");
        if (items != null) {
            builder.items(element(tool, at + "/items", items));
        }
        return builder.build();
    }

    private static JsonEnumSchema enumeration(String tool, String at, Map<String, Object> schema) {
        allowOnly(tool, at, schema, ENUM_KEYWORDS);
        Object type = schema.get("type");
        if (type != null && !"string".equals(type)) {
            throw refused(tool, at, "LangChain4j's enums are of strings only, not of type " + type);
        }
        List<String> values = strings(tool, at, "enum", schema.get("enum"));
        return JsonEnumSchema.builder().enumValues(values).description(description(tool, at, schema)).build();
    }

    private static JsonAnyOfSchema anyOf(String tool, String at, Map<String, Object> schema) {
        allowOnly(tool, at, schema, ANY_OF_KEYWORDS);
        if (!(schema.get("anyOf") instanceof List<?> alternatives) || alternatives.isEmpty()) {
            throw refused(tool, at, "\"anyOf\" must be a non-empty array of schemas");
        }
        List<JsonSchemaElement> converted = new ArrayList<>();
        for (int i = 0; i < alternatives.size(); i++) {
            converted.add(element(tool, at + "/anyOf/" + i, alternatives.get(i)));
        }
        return JsonAnyOfSchema.builder().anyOf(converted).description(description(tool, at, schema)).build();
    }

    private static String description(String tool, String at, Map<String, Object> schema) {
        Object description = schema.get("description");
        if (description != null && !(description instanceof String)) {
            throw refused(tool, at, "\"description\" must be a string");
        }
        return (String) description;
    }

    private static List<String> strings(String tool, String at, String keyword, Object value) {
        if (!(value instanceof List<?> list) || list.stream().anyMatch(item -> !(item instanceof String))) {
            throw refused(tool, at, "\"" + keyword + "\" must be an array of strings"
                    + (value instanceof List<?> l && l.stream().anyMatch(BigDecimal.class::isInstance)
                            ? " (LangChain4j's enums are of strings only)" : ""));
        }
        return list.stream().map(String.class::cast).toList();
    }

    private static void allowOnly(String tool, String at, Map<String, Object> schema, Set<String> allowed) {
        for (String keyword : schema.keySet()) {
            if (!allowed.contains(keyword) && !ANNOTATIONS.contains(keyword)) {
                throw refused(tool, at, "the keyword \"" + keyword + "\" has no counterpart in LangChain4j's "
                        + "JsonSchemaElement, and dropping it would offer the model what the tool refuses");
            }
        }
    }

    private static IllegalArgumentException refused(String tool, String at, String why) {
        return new IllegalArgumentException("the parameters schema of " + tool + " cannot be given to LangChain4j "
                + "faithfully at " + (at.isEmpty() ? "its root" : at) + ": " + why);
    }
}
