package org.sandbox4j.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Whether a standard stream is a terminal: progress, colour and tables are for people, not pipes. */
final class Terminal {

    static final int STDIN = 0;
    static final int STDOUT = 1;
    static final int STDERR = 2;

    private Terminal() {
    }

    /** On Linux, whether file descriptor {@code fd} of this process is a terminal device. */
    static boolean isTerminal(int fd) {
        Path link = Path.of("/proc/self/fd/" + fd);
        try {
            String target = Files.readSymbolicLink(link).toString();
            return target.startsWith("/dev/pts/") || target.startsWith("/dev/tty") || target.equals("/dev/console");
        } catch (IOException | UnsupportedOperationException e) {
            // No /proc (not Linux): a console means both standard streams are a terminal.
            return System.console() != null;
        }
    }
}
