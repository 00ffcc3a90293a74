package org.sandbox4j.sbx;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A strict RFC 8259 reader for the small JSON documents {@code sbx} prints ({@code ls}, {@code mcp
 * ls}). Core's {@code hosttools.StrictJson} only writes (and is package-private), so this module
 * reads its own: objects become {@link Map}s, arrays {@link List}s, numbers {@link BigDecimal}s,
 * {@code null} {@link #NULL}. Duplicate keys, trailing commas, comments, control characters in
 * strings and anything after the value are refused; nesting is bounded.
 */
final class SbxJson {

    /** JSON {@code null}, so maps and lists never hold Java null. */
    static final Object NULL = new Object() {
        @Override
        public String toString() {
            return "null";
        }
    };

    static final int MAX_DEPTH = 32;

    private final String text;
    private int at;

    private SbxJson(String text) {
        this.text = text;
    }

    /** Thrown for anything that is not one strict JSON value. */
    static final class Malformed extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Malformed(String message) {
            super(message);
        }
    }

    static Object parse(String text) {
        SbxJson reader = new SbxJson(text);
        reader.skipSpace();
        Object value = reader.value(0);
        reader.skipSpace();
        if (reader.at != text.length()) {
            throw reader.malformed("text after the value");
        }
        return value;
    }

    /** The document as an array of objects, each with its string fields. */
    static List<Map<String, Object>> arrayOfObjects(String text) {
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

    /** A string field of {@code object}, refusing a missing or non-string one. */
    static String string(Map<String, Object> object, String field) {
        Object value = object.get(field);
        if (!(value instanceof String string)) {
            throw new Malformed("field '" + field + "' should be a string, got " + kind(value));
        }
        return string;
    }

    private static String kind(Object value) {
        if (value == null) {
            return "nothing";
        }
        if (value == NULL) {
            return "null";
        }
        if (value instanceof Map) {
            return "an object";
        }
        if (value instanceof List) {
            return "an array";
        }
        return value instanceof String ? "a string" : value.getClass().getSimpleName();
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
                return literal("null", NULL);
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
            if (map.put(key, value) != null) {
                throw malformed("duplicate key '" + key + "'");
            }
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
                return out.toString();
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
}
