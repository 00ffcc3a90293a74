package org.sandbox4j.sbx;

import java.util.Optional;

/**
 * What one {@code sbx} invocation left: its exit status and both streams as text.
 *
 * @param exitCode the status ({@code -1} when it was killed at its timeout)
 * @param stdout   standard output, bounded
 * @param stderr   standard error, bounded
 * @param timedOut whether it ran past its bound and was killed
 */
record SbxReply(int exitCode, String stdout, String stderr, boolean timedOut) {

    /** The prefix of every error line {@code sbx} prints. */
    static final String ERROR_PREFIX = "ERROR: ";

    static SbxReply ok(String stdout) {
        return new SbxReply(0, stdout, "", false);
    }

    static SbxReply error(String message) {
        return new SbxReply(1, "", ERROR_PREFIX + message + "\n", false);
    }

    boolean succeeded() {
        return exitCode == 0 && !timedOut;
    }

    /** The text of the first {@code ERROR: } line on stderr, without the prefix. */
    Optional<String> errorLine() {
        return errorLineIn(stderr);
    }

    static Optional<String> errorLineIn(String stderr) {
        for (String line : stderr.split("\r?\n")) {
            if (line.startsWith(ERROR_PREFIX)) {
                return Optional.of(line.substring(ERROR_PREFIX.length()).strip());
            }
        }
        return Optional.empty();
    }
}
