package org.sandbox4j.aca;

import java.math.BigDecimal;
import java.util.List;
import java.util.Map;
import org.sandbox4j.core.spi.Json;

/**
 * What this module needs of JSON beyond core's strict reader ({@link Json}): writing the small
 * request bodies of the data plane, and two lenient accessors for the service's answers (a field
 * that is missing or of another type reads as absent, never as an error). Reading is core's
 * alone, so the data plane's answers are held to one set of rules: objects are {@link Map}s,
 * arrays {@link List}s, numbers {@link BigDecimal}s, JSON {@code null} Java {@code null}.
 */
final class AcaJson {

    private AcaJson() {
    }

    /** {@code value} as an object, or null when it is not one. */
    @SuppressWarnings("unchecked")
    static Map<String, Object> asObject(Object value) {
        return value instanceof Map<?, ?> map ? (Map<String, Object>) map : null;
    }

    /** A string field, or null when missing, JSON null or not a string. */
    static String text(Map<String, Object> object, String field) {
        return object.get(field) instanceof String string ? string : null;
    }

    /** Writes a value of maps (string keys), lists, strings, booleans, whole numbers and null. */
    static String write(Object value) {
        StringBuilder out = new StringBuilder();
        write(value, out);
        return out.toString();
    }

    private static void write(Object value, StringBuilder out) {
        if (value == null) {
            out.append("null");
        } else if (value instanceof String string) {
            out.append(Json.quote(string));
        } else if (value instanceof Boolean || value instanceof Integer || value instanceof Long) {
            out.append(value);
        } else if (value instanceof BigDecimal number) {
            out.append(number.toString());
        } else if (value instanceof Map<?, ?> map) {
            out.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> entry : map.entrySet()) {
                if (!(entry.getKey() instanceof String key)) {
                    throw new IllegalArgumentException("a JSON object's keys are strings, not " + entry.getKey());
                }
                if (!first) {
                    out.append(',');
                }
                first = false;
                out.append(Json.quote(key)).append(':');
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
}
