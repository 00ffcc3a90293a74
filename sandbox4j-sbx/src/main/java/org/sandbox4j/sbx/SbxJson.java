package org.sandbox4j.sbx;

import java.util.List;
import java.util.Map;
import org.sandbox4j.core.spi.Json;

/** Reading sbx's JSON answers in the shapes the sources show: anything else is {@link Unreadable}, never guessed. */
final class SbxJson {

    private SbxJson() {
    }

    /** JSON that parsed, but not in the shape the sources show. */
    static final class Unreadable extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;

        Unreadable(String message) {
            super(message);
        }
    }

    /** The list in {@code field}; an absent field is an empty list only when {@code optional}. */
    static List<?> list(Map<String, Object> object, String field, boolean optional) {
        Object value = object.get(field);
        if (value == null && optional) {
            return List.of();
        }
        if (!(value instanceof List<?> items)) {
            throw new Unreadable("field '" + field + "' should be a list, got " + Json.kind(value));
        }
        return items;
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> object(Object value, String what) {
        if (!(value instanceof Map<?, ?>)) {
            throw new Unreadable(what + " should be an object, got " + Json.kind(value));
        }
        return (Map<String, Object>) value;
    }

    static String text(Object value, String what) {
        if (!(value instanceof String string)) {
            throw new Unreadable(what + " should be a string, got " + Json.kind(value));
        }
        return string;
    }
}
