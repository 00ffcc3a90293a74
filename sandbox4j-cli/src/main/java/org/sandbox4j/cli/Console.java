package org.sandbox4j.cli;

import java.io.PrintStream;

/**
 * What the command says on standard error: errors always, warnings unless {@code --quiet},
 * progress and notes when a person watches (standard error is a terminal) or {@code --verbose}.
 * Standard output carries only the program's output or the command's answer.
 *
 * @param watched whether a person watches standard error (it is a terminal)
 */
record Console(PrintStream err, boolean quiet, boolean verbose, boolean watched) {

    static final String PREFIX = "sandbox4j: ";

    static Console system(boolean quiet, boolean verbose) {
        return new Console(System.err, quiet, verbose, Terminal.isTerminal(Terminal.STDERR));
    }

    /** Something slow is starting. */
    void progress(String message) {
        if (!quiet && (watched || verbose)) {
            say(message);
        }
    }

    /** Detail only {@code --verbose} asks for. */
    void detail(String message) {
        if (verbose && !quiet) {
            say(message);
        }
    }

    void warn(String message) {
        if (!quiet) {
            say(message);
        }
    }

    void error(String message) {
        say(message);
    }

    private void say(String message) {
        err.println(PREFIX + message);
        err.flush();
    }
}
