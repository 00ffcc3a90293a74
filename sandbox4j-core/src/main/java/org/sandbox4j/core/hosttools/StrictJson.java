package org.sandbox4j.core.hosttools;

import java.lang.reflect.Array;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.RecordComponent;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.Collection;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Optional;

import org.sandbox4j.core.WireValue;

/**
 * Writes a host tool's result as strict JSON (RFC 8259): non-finite numbers, lone surrogates,
 * non-string map keys and unknown types are refused rather than coerced; non-ASCII text is kept as
 * is. Nesting and output length are bounded so a cyclic or oversized value cannot exhaust memory.
 *
 * <p>Records are written as objects of their components in declaration order; enums as their
 * {@link WireValue#wire() wire value} when they have one, else their name; an empty
 * {@link Optional} as {@code null}.
 */
final class StrictJson {

    /** Deepest nesting of arrays and objects written; a cycle reaches it too. */
    static final int MAX_NESTING_DEPTH = 128;

    /** Largest output a Java string can hold, whatever the caller's bound. */
    private static final long MAX_BUFFER_CHARS = Integer.MAX_VALUE - 8;

    private static final String HEX_DIGITS = "0123456789abcdef";
    private static final char FIRST_PRINTABLE = 0x20;

    private final StringBuilder out = new StringBuilder();
    private final long maxChars;

    private StrictJson(long maxChars) {
        this.maxChars = Math.min(maxChars, MAX_BUFFER_CHARS);
    }

    /**
     * @param maxChars the longest output accepted; since a UTF-8 encoding has at least one byte per
     *                 char, a byte cap is a safe char cap
     * @throws NotCarried when the value cannot be written as strict JSON, naming why
     * @throws TooLarge   when the output would exceed {@code maxChars}
     */
    static String write(Object value, long maxChars) {
        StrictJson writer = new StrictJson(maxChars);
        writer.value(value, 0);
        return writer.out.toString();
    }

    /** Bytes {@code text} takes in UTF-8; {@code text} holds no lone surrogate. */
    static long utf8Length(CharSequence text) {
        long bytes = 0;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c < 0x80) {
                bytes += 1;
            } else if (c < 0x800) {
                bytes += 2;
            } else if (Character.isHighSurrogate(c)) {
                bytes += 4;
                i++;
            } else {
                bytes += 3;
            }
        }
        return bytes;
    }

    private void value(Object value, int depth) {
        if (value == null) {
            append("null");
        } else if (value instanceof Boolean) {
            append(value.toString());
        } else if (value instanceof Number) {
            number((Number) value);
        } else if (value instanceof String) {
            string((String) value);
        } else if (value instanceof Character) {
            string(value.toString());
        } else if (value instanceof WireValue && value instanceof Enum) {
            string(((WireValue) value).wire());
        } else if (value instanceof Enum) {
            string(((Enum<?>) value).name());
        } else if (value instanceof Optional) {
            value(((Optional<?>) value).orElse(null), depth);
        } else if (value instanceof Map) {
            object((Map<?, ?>) value, enter(depth));
        } else if (value instanceof Collection) {
            array((Collection<?>) value, enter(depth));
        } else if (value instanceof byte[]) {
            throw new NotCarried("byte[] is not JSON; encode the bytes (e.g. Base64) into a string");
        } else if (value.getClass().isArray()) {
            array(new ArrayElements(value), enter(depth));
        } else if (value instanceof Record) {
            record((Record) value, enter(depth));
        } else {
            throw new NotCarried(value.getClass().getName()
                    + " is not JSON; return null, a boolean, a number, a string, an enum, a map with string keys,"
                    + " a collection, an array, an Optional or a record");
        }
    }

    private static int enter(int depth) {
        if (depth >= MAX_NESTING_DEPTH) {
            throw new NotCarried("nesting deeper than " + MAX_NESTING_DEPTH + " (or a cycle)");
        }
        return depth + 1;
    }

    private void number(Number number) {
        if (number instanceof Double || number instanceof Float) {
            double asDouble = number.doubleValue();
            if (Double.isNaN(asDouble) || Double.isInfinite(asDouble)) {
                throw new NotCarried(number + " is not a JSON number; only finite numbers are");
            }
            append(number.toString());
        } else if (number instanceof Integer || number instanceof Long || number instanceof Short
                || number instanceof Byte || number instanceof BigInteger) {
            append(number.toString());
        } else if (number instanceof BigDecimal) {
            append(number.toString());
        } else {
            // A custom Number's toString is not known to be JSON.
            throw new NotCarried(number.getClass().getName() + " is not a supported number type;"
                    + " return an Integer, Long, Double, BigInteger or BigDecimal");
        }
    }

    private void string(String text) {
        append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
                append(c);
                append(text.charAt(++i));
            } else if (Character.isSurrogate(c)) {
                throw new NotCarried("a string holds a lone surrogate at index " + i + "; it has no UTF-8 encoding");
            } else if (c == '"') {
                append("\\\"");
            } else if (c == '\\') {
                append("\\\\");
            } else if (c == '\n') {
                append("\\n");
            } else if (c == '\r') {
                append("\\r");
            } else if (c == '\t') {
                append("\\t");
            } else if (c == '\b') {
                append("\\b");
            } else if (c == '\f') {
                append("\\f");
            } else if (c < FIRST_PRINTABLE) {
                append("\\u00");
                append(HEX_DIGITS.charAt(c >> 4));
                append(HEX_DIGITS.charAt(c & 0xF));
            } else {
                append(c);
            }
        }
        append('"');
    }

    private void object(Map<?, ?> map, int depth) {
        append('{');
        boolean first = true;
        for (Map.Entry<?, ?> entry : map.entrySet()) {
            if (!(entry.getKey() instanceof String)) {
                throw new NotCarried("a map key is " + (entry.getKey() == null ? "null" : "a "
                        + entry.getKey().getClass().getName()) + "; JSON object keys are strings");
            }
            first = separate(first);
            string((String) entry.getKey());
            append(':');
            value(entry.getValue(), depth);
        }
        append('}');
    }

    private void array(Iterable<?> elements, int depth) {
        append('[');
        boolean first = true;
        for (Object element : elements) {
            first = separate(first);
            value(element, depth);
        }
        append(']');
    }

    private void record(Record record, int depth) {
        append('{');
        boolean first = true;
        for (RecordComponent component : record.getClass().getRecordComponents()) {
            first = separate(first);
            string(component.getName());
            append(':');
            value(componentValue(record, component), depth);
        }
        append('}');
    }

    private static Object componentValue(Record record, RecordComponent component) {
        Method accessor = component.getAccessor();
        // The record is the host's own value; a non-public record type is still the host's to return.
        if (!accessor.canAccess(record) && !accessor.trySetAccessible()) {
            throw new NotCarried("record " + record.getClass().getName() + " is not accessible; make it public");
        }
        try {
            return accessor.invoke(record);
        } catch (IllegalAccessException e) {
            throw new NotCarried("record " + record.getClass().getName() + " is not accessible; make it public");
        } catch (InvocationTargetException e) {
            throw new NotCarried("reading " + record.getClass().getName() + "." + component.getName()
                    + " failed: " + e.getCause());
        }
    }

    private boolean separate(boolean first) {
        if (!first) {
            append(',');
        }
        return false;
    }

    /** Any array, object or primitive, read one element at a time (no boxed copy of the whole). */
    private static final class ArrayElements implements Iterable<Object> {

        private final Object array;

        ArrayElements(Object array) {
            this.array = array;
        }

        @Override
        public Iterator<Object> iterator() {
            return new Iterator<>() {
                private int next;

                @Override
                public boolean hasNext() {
                    return next < Array.getLength(array);
                }

                @Override
                public Object next() {
                    if (!hasNext()) {
                        throw new NoSuchElementException();
                    }
                    return Array.get(array, next++);
                }
            };
        }
    }

    private void append(char c) {
        if (out.length() + 1L > maxChars) {
            throw new TooLarge(maxChars);
        }
        out.append(c);
    }

    private void append(String text) {
        if (out.length() + (long) text.length() > maxChars) {
            throw new TooLarge(maxChars);
        }
        out.append(text);
    }

    /** The value has no strict-JSON form; the message says why (for the host's log). */
    static final class NotCarried extends RuntimeException {

        private static final long serialVersionUID = 1L;

        NotCarried(String reason) {
            super(reason);
        }
    }

    /** The JSON would be longer than the caller's bound. */
    static final class TooLarge extends RuntimeException {

        private static final long serialVersionUID = 1L;

        TooLarge(long limitChars) {
            super("JSON longer than " + limitChars + " chars");
        }
    }
}
