package org.sandbox4j.core.spi;

import java.util.List;
import java.util.stream.Collectors;

/**
 * POSIX shell quoting, implemented once. A quoted word is always taken literally by {@code sh}:
 * it is wrapped in single quotes and each embedded single quote becomes {@code '\''}.
 */
public final class PosixShell {

    private PosixShell() {
    }

    /** One word, safe to paste into a shell line whatever it contains. */
    public static String quote(String word) {
        if (word.indexOf('\0') >= 0) {
            throw new IllegalArgumentException("a shell word cannot contain a NUL character");
        }
        return "'" + word.replace("'", "'\\''") + "'";
    }

    /** Each word quoted, joined by single spaces. */
    public static String join(List<String> words) {
        return words.stream().map(PosixShell::quote).collect(Collectors.joining(" "));
    }
}
