package org.sandbox4j.docker;

/**
 * Provider text in messages: one line, bounded, every control character escaped, so an engine
 * (which echoes guest-chosen names) cannot flood a log or a model nor forge a line in either.
 */
final class ErrorText {

    static final int MAX_CHARS = 300;

    private ErrorText() {
    }

    static String bounded(String text) {
        String line = String.valueOf(text).replaceAll("\\s+", " ").strip();
        return org.sandbox4j.core.spi.GuestText.escape(line.length() <= MAX_CHARS ? line
                : line.substring(0, MAX_CHARS) + "…");
    }
}
