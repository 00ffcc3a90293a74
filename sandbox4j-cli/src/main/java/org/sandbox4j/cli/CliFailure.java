package org.sandbox4j.cli;

/** Ends a command with a message for the user and one of the {@link ExitCodes}. */
final class CliFailure extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final int exitCode;

    private CliFailure(int exitCode, String message) {
        super(message, null, false, false);
        this.exitCode = exitCode;
    }

    int exitCode() {
        return exitCode;
    }

    static CliFailure usage(String message) {
        return new CliFailure(ExitCodes.USAGE, message);
    }

    static CliFailure refused(String message) {
        return new CliFailure(ExitCodes.REFUSED, message);
    }

    static CliFailure unavailable(String message) {
        return new CliFailure(ExitCodes.UNAVAILABLE, message);
    }

    static CliFailure failed(String message) {
        return new CliFailure(ExitCodes.FAILED, message);
    }

    static CliFailure timedOut(String message) {
        return new CliFailure(ExitCodes.TIMED_OUT, message);
    }
}
