package org.sandbox4j.cli;

import java.io.PrintStream;

/**
 * What the command says on standard error: errors always, warnings unless {@code --quiet},
 * progress and notes when a person watches (standard error is a terminal) or {@code --verbose}.
 * Standard output carries only the program's output or the command's answer.
 */
final class Console {

    static final String PREFIX = "sandbox4j: ";

    private final PrintStream err;
    private final boolean quiet;
    private final boolean verbose;
    private final boolean watched;

    Console(PrintStream err, boolean quiet, boolean verbose, boolean watched) {
        this.err = err;
        this.quiet = quiet;
        this.verbose = verbose;
        this.watched = watched;
    }

    static Console system(boolean quiet, boolean verbose) {
        return new Console(System.err, quiet, verbose, Terminal.isTerminal(Terminal.STDERR));
    }

    boolean verbose() {
        return verbose;
    }

    /** Something slow is starting. */
    void progress(String message) {
        if (!quiet && (watched || verbose)) {
            err.println(PREFIX + message);
            err.flush();
        }
    }

    /** Detail only {@code --verbose} asks for. */
    void detail(String message) {
        if (verbose && !quiet) {
            err.println(PREFIX + message);
            err.flush();
        }
    }

    void warn(String message) {
        if (!quiet) {
            err.println(PREFIX + message);
            err.flush();
        }
    }

    void error(String message) {
        err.println(PREFIX + message);
        err.flush();
    }
}
