package org.sandbox4j.core.spi;

/**
 * One line describing an exception for the log: {@code "<Type>: <message>"}, then each cause.
 * Never shown to a model: provider detail stays host-side. A message may echo what a guest chose
 * (a provider quoting a file name), so its control characters are escapes ({@link GuestText}):
 * the line stays one line and forges none.
 */
public final class ErrorDetail {

    private static final int MAX_CAUSES = 4;

    private ErrorDetail() {
    }

    public static String of(Throwable error) {
        StringBuilder line = new StringBuilder(describe(error));
        Throwable cause = error.getCause();
        for (int depth = 0; cause != null && cause != error && depth < MAX_CAUSES; depth++) {
            line.append(" | caused by ").append(describe(cause));
            cause = cause.getCause();
        }
        return line.toString();
    }

    private static String describe(Throwable error) {
        String message = error.getMessage();
        return error.getClass().getSimpleName() + (message == null ? "" : ": " + GuestText.escape(message));
    }
}
