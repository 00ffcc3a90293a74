package org.sandbox4j.core.spi;

/**
 * Guest- or model-supplied text quoted into a message: single-quoted, cut to
 * {@value #MAX_QUOTED_CHARS} characters, and with every control character, line or paragraph
 * separator, bidirectional override and lone surrogate written as an escape ({@code \n},
 * {@code \u001b}), so a hostile guest can neither size a host's error nor forge log lines or
 * terminal sequences with the names it chooses.
 */
public final class GuestText {

    /** Longest guest text quoted in a message; the rest is cut. */
    public static final int MAX_QUOTED_CHARS = 120;

    private GuestText() {
    }

    public static String quote(String text) {
        if (text == null) {
            return "(none)";
        }
        boolean cut = text.length() > MAX_QUOTED_CHARS;
        String shown = cut ? text.substring(0, MAX_QUOTED_CHARS) : text;
        return "'" + escape(shown) + "'" + (cut ? " (truncated)" : "");
    }

    /** {@code text} with every character a terminal or a log reader could misread written as an escape. */
    public static String escape(String text) {
        StringBuilder out = null;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            String replacement = replacement(text, i, c);
            if (replacement == null) {
                if (out != null) {
                    out.append(c);
                }
                continue;
            }
            if (out == null) {
                out = new StringBuilder(text.length() + 16).append(text, 0, i);
            }
            out.append(replacement);
        }
        return out == null ? text : out.toString();
    }

    private static String replacement(String text, int index, char c) {
        switch (c) {
            case '\n':
                return "\\n";
            case '\r':
                return "\\r";
            case '\t':
                return "\\t";
            default:
                break;
        }
        boolean unsafe = c < 0x20 || (c >= 0x7f && c <= 0x9f) // C0, DEL, C1
                || c == 0x2028 || c == 0x2029 // line and paragraph separators
                || (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069) // bidirectional overrides
                || (Character.isHighSurrogate(c) && (index + 1 >= text.length()
                        || !Character.isLowSurrogate(text.charAt(index + 1))))
                || (Character.isLowSurrogate(c) && (index == 0 || !Character.isHighSurrogate(text.charAt(index - 1))));
        return unsafe ? String.format("\\u%04x", (int) c) : null;
    }
}
