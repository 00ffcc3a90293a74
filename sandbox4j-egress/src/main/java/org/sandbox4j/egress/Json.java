package org.sandbox4j.egress;

/** JSON string literals written by hand: the audit line is the only JSON this module writes. */
final class Json {

    private static final char FIRST_PRINTABLE = 0x20;
    private static final String HEX = "0123456789abcdef";

    private Json() {
    }

    /** {@code text} as a quoted JSON string; control characters, quotes and backslashes escaped. */
    static String string(String text) {
        StringBuilder out = new StringBuilder(text.length() + 2).append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                case '\b' -> out.append("\\b");
                case '\f' -> out.append("\\f");
                default -> {
                    // U+2028/2029 are legal JSON but end a line in JavaScript and some log viewers;
                    // DEL and lone surrogates are escaped so a line stays one printable line.
                    if (c < FIRST_PRINTABLE || c == 0x7f || c == '\u2028' || c == '\u2029'
                            || Character.isSurrogate(c)) {
                        out.append("\\u").append(HEX.charAt(c >> 12 & 0xF)).append(HEX.charAt(c >> 8 & 0xF))
                                .append(HEX.charAt(c >> 4 & 0xF)).append(HEX.charAt(c & 0xF));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        return out.append('"').toString();
    }
}
