package org.sandbox4j.aca.emulator;

import java.math.BigDecimal;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * JSON for the emulator and its tests. Reading is core's strict reader ({@link org.sandbox4j.core.spi.Json}): objects are
 * unmodifiable {@code Map<String, Object>}s, arrays {@code List<Object>}s, numbers {@link BigDecimal}s, plus String,
 * Boolean and null. Writing (the service's answers) is here, with string literals quoted by core.
 */
public final class Json {

    private Json() {
    }

    /** Parses one JSON value; throws IllegalArgumentException on malformed input or trailing garbage. */
    public static Object parse(String text) {
        return org.sandbox4j.core.spi.Json.parse(text);
    }

    /** Parses one JSON object; throws IllegalArgumentException on anything else. */
    public static Map<String, Object> parseObject(String text) {
        return org.sandbox4j.core.spi.Json.parseObject(text);
    }

    /** Serialises maps, iterables, strings, numbers, booleans and null. */
    public static String write(Object v) {
        StringBuilder b = new StringBuilder();
        write(b, v);
        return b.toString();
    }

    private static void write(StringBuilder b, Object v) {
        if (v == null) {
            b.append("null");
        } else if (v instanceof String) {
            quote(b, (String) v);
        } else if (v instanceof Boolean || v instanceof Long || v instanceof Integer || v instanceof Short) {
            b.append(v);
        } else if (v instanceof BigDecimal) {
            b.append(v);
        } else if (v instanceof Number) {
            double d = ((Number) v).doubleValue();
            if (d == Math.rint(d) && !Double.isInfinite(d) && Math.abs(d) < 1e15) {
                b.append((long) d);
            } else {
                b.append(d);
            }
        } else if (v instanceof Map) {
            b.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
                if (!first) {
                    b.append(',');
                }
                first = false;
                quote(b, String.valueOf(e.getKey()));
                b.append(':');
                write(b, e.getValue());
            }
            b.append('}');
        } else if (v instanceof Iterable) {
            b.append('[');
            boolean first = true;
            for (Object o : (Iterable<?>) v) {
                if (!first) {
                    b.append(',');
                }
                first = false;
                write(b, o);
            }
            b.append(']');
        } else {
            quote(b, v.toString());
        }
    }

    private static void quote(StringBuilder b, String s) {
        b.append(org.sandbox4j.core.spi.Json.quote(s));
    }

    /** Builds an insertion-ordered map from alternating keys and values (for tests and responses). */
    public static Map<String, Object> obj(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int k = 0; k + 1 < kv.length; k += 2) {
            m.put((String) kv[k], kv[k + 1]);
        }
        return m;
    }
}
