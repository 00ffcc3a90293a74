package org.sandbox4j.cli;

/**
 * What {@code sandbox4j} exits with when the program's own exit code does not apply. A failure of
 * sandbox4j itself always prints a line starting {@code sandbox4j:} on standard error, which
 * tells it apart from a program that happens to exit with the same number.
 */
final class ExitCodes {

    /** The program ran and exited 0, or a management command succeeded. */
    static final int OK = 0;
    /** sandbox4j could not run the program (a refused request, outputs not saved, output over the cap). */
    static final int FAILED = 1;
    /** The command line or the configuration is wrong. */
    static final int USAGE = 2;
    /** Refused by policy: the backend is below the floor, or cannot enforce what was asked (egress, capabilities). */
    static final int REFUSED = 3;
    /** The backend is unavailable here: not installed, not permitted by the host, or failing. */
    static final int UNAVAILABLE = 4;
    /** The program ran past its timeout and was stopped with everything it started (as timeout(1)). */
    static final int TIMED_OUT = 124;

    /** SIGINT ended the command (128 + 2, as a shell reports it); its own sandbox was disposed of. */
    static final int INTERRUPTED = 130;

    private ExitCodes() {
    }
}
