package org.sandbox4j.docker;

/** Provider text in messages: one line, bounded, so an engine cannot flood a log or a model. */
final class ErrorText {

    static final int MAX_CHARS = 300;

    private ErrorText() {
    }

    static String bounded(String text) {
        String line = String.valueOf(text).replaceAll("\\s+", " ").strip();
        return line.length() <= MAX_CHARS ? line : line.substring(0, MAX_CHARS) + "…";
    }
}
