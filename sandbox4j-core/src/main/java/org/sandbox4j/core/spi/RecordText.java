package org.sandbox4j.core.spi;

import java.util.Map;

/**
 * A backend's record as {@code java.util.Properties} text that {@link java.util.Properties#load}
 * reads back exactly, without the date {@link java.util.Properties#store} writes into the header:
 * formatting it loads the time-zone database, which costs a cold JVM (one CLI run) milliseconds
 * on its first record. Keys and values are escaped as {@code store} escapes them, and every
 * control or non-ASCII character as {@code \\uXXXX}, so a value with line breaks, separators or
 * comment marks (a caller's kind, say) stays one value.
 */
public final class RecordText {

    private static final char[] HEX = "0123456789ABCDEF".toCharArray();

    private RecordText() {
    }

    /**
     * The text of {@code entries}, in their order, after one comment line.
     *
     * @param comment one line of printable ASCII, without line breaks
     * @throws IllegalArgumentException the comment is not one such line
     */
    public static String of(String comment, Map<String, String> entries) {
        for (int i = 0; i < comment.length(); i++) {
            char c = comment.charAt(i);
            if (c < 0x20 || c > 0x7e) {
                throw new IllegalArgumentException("a record's comment is one line of printable ASCII");
            }
        }
        StringBuilder text = new StringBuilder("#").append(comment).append('\n');
        entries.forEach((key, value) -> {
            escape(key, true, text);
            text.append('=');
            escape(value, false, text);
            text.append('\n');
        });
        return text.toString();
    }

    private static void escape(String string, boolean isKey, StringBuilder into) {
        for (int i = 0; i < string.length(); i++) {
            char c = string.charAt(i);
            switch (c) {
                case ' ' -> into.append(i == 0 || isKey ? "\\ " : " ");
                case '\t' -> into.append("\\t");
                case '\n' -> into.append("\\n");
                case '\r' -> into.append("\\r");
                case '\f' -> into.append("\\f");
                case '\\', '=', ':', '#', '!' -> into.append('\\').append(c);
                default -> {
                    if (c < 0x20 || c > 0x7e) {
                        into.append("\\u").append(HEX[(c >> 12) & 0xf]).append(HEX[(c >> 8) & 0xf])
                                .append(HEX[(c >> 4) & 0xf]).append(HEX[c & 0xf]);
                    } else {
                        into.append(c);
                    }
                }
            }
        }
    }
}
