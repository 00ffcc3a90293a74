package org.sandbox4j.core;

/**
 * Guest- or model-supplied text quoted into a message: single-quoted and cut to
 * {@value #MAX_QUOTED_CHARS} characters, so a hostile guest cannot size a host's error.
 */
public final class GuestText {

    /** Longest guest text quoted in a message; the rest is cut. */
    public static final int MAX_QUOTED_CHARS = 120;

    private GuestText() {
    }

    public static String quote(String text) {
        if (text.length() <= MAX_QUOTED_CHARS) {
            return "'" + text + "'";
        }
        return "'" + text.substring(0, MAX_QUOTED_CHARS) + "' (truncated)";
    }
}
