package org.sandbox4j.aca;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Strict RFC 8259 reading and plain writing for the ACA data plane's small JSON bodies. Core's
 * {@code hosttools.StrictJson} only writes (and is package-private), and modules never depend on
 * each other, so this module carries its own: objects become {@link Map}s, arrays {@link List}s, numbers {@link BigDecimal}s,
 * {@code null} {@link #NULL}. Duplicate keys, trailing commas, comments, control characters in
 * strings and anything after the value are refused; nesting is bounded.
 */
final class AcaJson {

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

    private AcaJson(String text) {
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
        AcaJson reader = new AcaJson(text);
        reader.skipSpace();
        Object value = reader.value(0);
        reader.skipSpace();
        if (reader.at != text.length()) {
            throw reader.malformed("text after the value");
        }
        return value;
    }

    /** The document as an object, refusing anything else. */
    static Map<String, Object> object(String text) {
        Object value = parse(text);
        Map<String, Object> object = asObject(value);
        if (object == null) {
            throw new Malformed("expected a JSON object, got " + kind(value));
        }
        return object;
    }

    /** {@code value} as an object, or null when it is not one. */
    @SuppressWarnings("unchecked")
    static Map<String, Object> asObject(Object value) {
        return value instanceof Map<?, ?> map ? (Map<String, Object>) map : null;
    }

    /** A string field, or null when missing or not a string. */
    static String text(Map<String, Object> object, String field) {
        return object.get(field) instanceof String string ? string : null;
    }

    /** Writes a value of maps, lists, strings, booleans, numbers and null (Java null or {@link #NULL}). */
    static String write(Object value) {
        StringBuilder out = new StringBuilder();
        write(value, out);
        return out.toString();
    }

    private static void write(Object value, StringBuilder out) {
        if (value == null || value == NULL) {
            out.append("null");
        } else if (value instanceof String string) {
            quote(string, out);
        } else if (value instanceof Boolean || value instanceof Integer || value instanceof Long
                || value instanceof BigDecimal) {
            out.append(value);
        } else if (value instanceof Map<?, ?> map) {
            out.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> entry : map.entrySet()) {
                if (!first) {
                    out.append(',');
                }
                first = false;
                quote((String) entry.getKey(), out);
                out.append(':');
                write(entry.getValue(), out);
            }
            out.append('}');
        } else if (value instanceof List<?> list) {
            out.append('[');
            for (int i = 0; i < list.size(); i++) {
                if (i > 0) {
                    out.append(',');
                }
                write(list.get(i), out);
            }
            out.append(']');
        } else {
            throw new IllegalArgumentException("cannot write " + value.getClass().getName() + " as JSON");
        }
    }

    private static void quote(String text, StringBuilder out) {
        out.append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
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
        out.append('"');
    }

    static String kind(Object value) {
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
