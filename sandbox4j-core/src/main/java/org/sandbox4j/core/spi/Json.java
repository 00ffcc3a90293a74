package org.sandbox4j.core.spi;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A strict RFC 8259 reader for the small JSON documents sandbox4j reads: tool arguments from a
 * framework, host-tool requests a guest wrote, a provider's replies. Objects become unmodifiable
 * {@link Map}s (insertion order kept), arrays unmodifiable {@link List}s, numbers
 * {@link BigDecimal}s, {@code null} Java {@code null}. Duplicate keys, trailing commas, comments,
 * control characters in strings, lone surrogates and anything after the value are refused;
 * nesting is bounded so a hostile document cannot exhaust the stack. Also writes a JSON string
 * literal ({@link #quote}); host-tool values are written by the host-tool ledger.
 */
public final class Json {

    /** Deepest nesting of arrays and objects read. */
    public static final int MAX_DEPTH = 64;

    private final String text;
    private int at;

    private Json(String text) {
        this.text = text;
    }

    /** Thrown for anything that is not one strict JSON value; the message says what and where. */
    public static final class Malformed extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;

        Malformed(String message) {
            super(message);
        }
    }

    /**
     * Reads one JSON value.
     *
     * @throws Malformed anything that is not exactly one strict JSON value
     */
    public static Object parse(String text) {
        Json reader = new Json(text);
        reader.skipSpace();
        Object value = reader.value(0);
        reader.skipSpace();
        if (reader.at != text.length()) {
            throw reader.malformed("text after the value");
        }
        return value;
    }

    /**
     * Reads a JSON object.
     *
     * @throws Malformed not one strict JSON value, or not an object
     */
    public static Map<String, Object> parseObject(String text) {
        Object value = parse(text);
        if (!(value instanceof Map<?, ?> map)) {
            throw new Malformed("expected a JSON object, got " + kind(value));
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> object = (Map<String, Object>) map;
        return object;
    }

    /**
     * Reads a JSON array of objects.
     *
     * @throws Malformed not one strict JSON value, or not an array of objects
     */
    public static List<Map<String, Object>> parseArrayOfObjects(String text) {
        Object value = parse(text);
        if (!(value instanceof List<?> list)) {
            throw new Malformed("expected a JSON array, got " + kind(value));
        }
        List<Map<String, Object>> objects = new ArrayList<>();
        for (Object element : list) {
            if (!(element instanceof Map<?, ?> map)) {
                throw new Malformed("expected an array of objects, found " + kind(element));
            }
            @SuppressWarnings("unchecked")
            Map<String, Object> object = (Map<String, Object>) map;
            objects.add(object);
        }
        return objects;
    }

    /**
     * A string field of {@code object}.
     *
     * @throws Malformed the field is missing or not a string
     */
    public static String string(Map<String, Object> object, String field) {
        Object value = object.get(field);
        if (!(value instanceof String string)) {
            throw new Malformed("field '" + field + "' should be a string, got " + kind(value));
        }
        return string;
    }

    /** How a decoded value reads in an error: "null", "an object", "a string", … */
    public static String kind(Object value) {
        if (value == null) {
            return "null";
        }
        if (value instanceof Map) {
            return "an object";
        }
        if (value instanceof List) {
            return "an array";
        }
        if (value instanceof Boolean) {
            return "a boolean";
        }
        return value instanceof String ? "a string" : "a number";
    }

    private Object value(int depth) {
        if (depth > MAX_DEPTH) {
            throw malformed("nesting deeper than " + MAX_DEPTH);
        }
        if (at >= text.length()) {
            throw malformed("unexpected end");
        }
        char c = text.charAt(at);
        switch (c) {
            case '{':
                return object(depth);
            case '[':
                return array(depth);
            case '"':
                return string();
            case 't':
                return literal("true", Boolean.TRUE);
            case 'f':
                return literal("false", Boolean.FALSE);
            case 'n':
                return literal("null", null);
            default:
                if (c == '-' || (c >= '0' && c <= '9')) {
                    return number();
                }
                throw malformed("unexpected '" + c + "'");
        }
    }

    private Map<String, Object> object(int depth) {
        at++;
        Map<String, Object> map = new LinkedHashMap<>();
        skipSpace();
        if (peek('}')) {
            at++;
            return Collections.unmodifiableMap(map);
        }
        while (true) {
            skipSpace();
            if (!peek('"')) {
                throw malformed("expected a string key");
            }
            String key = string();
            skipSpace();
            expect(':');
            skipSpace();
            Object value = value(depth + 1);
            if (map.containsKey(key)) {
                throw malformed("duplicate key '" + key + "'");
            }
            map.put(key, value);
            skipSpace();
            if (peek(',')) {
                at++;
                continue;
            }
            expect('}');
            return Collections.unmodifiableMap(map);
        }
    }

    private List<Object> array(int depth) {
        at++;
        List<Object> list = new ArrayList<>();
        skipSpace();
        if (peek(']')) {
            at++;
            return Collections.unmodifiableList(list);
        }
        while (true) {
            skipSpace();
            list.add(value(depth + 1));
            skipSpace();
            if (peek(',')) {
                at++;
                continue;
            }
            expect(']');
            return Collections.unmodifiableList(list);
        }
    }

    private String string() {
        at++;
        StringBuilder out = new StringBuilder();
        while (true) {
            if (at >= text.length()) {
                throw malformed("unterminated string");
            }
            char c = text.charAt(at++);
            if (c == '"') {
                return wellFormed(out);
            }
            if (c < 0x20) {
                throw malformed("a control character in a string");
            }
            if (c != '\\') {
                out.append(c);
                continue;
            }
            if (at >= text.length()) {
                throw malformed("unterminated escape");
            }
            char e = text.charAt(at++);
            switch (e) {
                case '"', '\\', '/' -> out.append(e);
                case 'b' -> out.append('\b');
                case 'f' -> out.append('\f');
                case 'n' -> out.append('\n');
                case 'r' -> out.append('\r');
                case 't' -> out.append('\t');
                case 'u' -> {
                    if (at + 4 > text.length()) {
                        throw malformed("short \\u escape");
                    }
                    try {
                        out.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
                    } catch (NumberFormatException bad) {
                        throw malformed("bad \\u escape");
                    }
                    at += 4;
                }
                default -> throw malformed("bad escape \\" + e);
            }
        }
    }

    private String wellFormed(StringBuilder out) {
        for (int i = 0; i < out.length(); i++) {
            char c = out.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < out.length() && Character.isLowSurrogate(out.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                throw malformed("a lone surrogate in a string");
            }
        }
        return out.toString();
    }

    private BigDecimal number() {
        int start = at;
        if (peek('-')) {
            at++;
        }
        if (peek('0')) {
            at++;
        } else if (!digits()) {
            throw malformed("a number needs digits");
        }
        if (peek('.')) {
            at++;
            if (!digits()) {
                throw malformed("a fraction needs digits");
            }
        }
        if (peek('e') || peek('E')) {
            at++;
            if (peek('+') || peek('-')) {
                at++;
            }
            if (!digits()) {
                throw malformed("an exponent needs digits");
            }
        }
        return new BigDecimal(text.substring(start, at));
    }

    private boolean digits() {
        int start = at;
        while (at < text.length() && text.charAt(at) >= '0' && text.charAt(at) <= '9') {
            at++;
        }
        return at > start;
    }

    private Object literal(String word, Object value) {
        if (!text.startsWith(word, at)) {
            throw malformed("unexpected word");
        }
        at += word.length();
        return value;
    }

    private boolean peek(char c) {
        return at < text.length() && text.charAt(at) == c;
    }

    private void expect(char c) {
        if (!peek(c)) {
            throw malformed("expected '" + c + "'");
        }
        at++;
    }

    private void skipSpace() {
        while (at < text.length()) {
            char c = text.charAt(at);
            if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
                return;
            }
            at++;
        }
    }

    private Malformed malformed(String why) {
        return new Malformed(why + " at offset " + at);
    }

    /**
     * {@code text} as a JSON string literal, quotes included: {@code "}, {@code \\} and control
     * characters escaped, everything else (non-ASCII included) kept.
     *
     * @throws IllegalArgumentException {@code text} holds a lone surrogate, which no JSON reader should accept
     */
    public static String quote(String text) {
        StringBuilder out = new StringBuilder(text.length() + 2).append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
                out.append(c).append(text.charAt(++i));
                continue;
            }
            if (Character.isSurrogate(c)) {
                throw new IllegalArgumentException("a lone surrogate at index " + i + " cannot be written as JSON");
            }
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        return out.append('"').toString();
    }
}
