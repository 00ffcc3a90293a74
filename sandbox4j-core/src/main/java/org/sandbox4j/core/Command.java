package org.sandbox4j.core;

import org.sandbox4j.core.spi.PosixShell;
import java.util.List;

/**
 * A command for {@link Sandbox#exec}. {@link #argv} is the default and is never interpreted by a
 * shell: the backend passes each word as one argument. {@link #shell} is explicit and meant for
 * fixed templates that need {@code ||}, redirection and the like; never build one from untrusted
 * text (quote each word with {@link PosixShell#quote} if you must).
 */
public sealed interface Command permits Command.Argv, Command.Shell {

    /** An argument vector: {@code argv("printf", "%s", userText)} is safe whatever {@code userText} holds. */
    static Argv argv(String program, String... arguments) {
        if (arguments == null) {
            throw new IllegalArgumentException("an argv command's arguments cannot be null (pass none instead)");
        }
        String[] words = new String[arguments.length + 1];
        words[0] = program;
        System.arraycopy(arguments, 0, words, 1, arguments.length);
        return new Argv(java.util.Arrays.asList(words));
    }

    static Argv argv(List<String> words) {
        return new Argv(words);
    }

    /** A shell line, run by {@code sh -c} in the guest. */
    static Shell shell(String line) {
        return new Shell(line);
    }

    /** The command as one POSIX shell line: argv words quoted, a shell line as is. */
    String toShellLine();

    /** @param words the program and its arguments; at least one word, none null, none containing NUL */
    record Argv(List<String> words) implements Command {
        public Argv {
            if (words == null) {
                throw new IllegalArgumentException("an argv command needs its words, not null");
            }
            for (String word : words) {
                if (word == null) {
                    throw new IllegalArgumentException("an argv word cannot be null");
                }
            }
            words = List.copyOf(words);
            if (words.isEmpty()) {
                throw new IllegalArgumentException("an argv command needs at least the program");
            }
            if (words.get(0).isEmpty()) {
                throw new IllegalArgumentException("an argv command's program cannot be empty");
            }
            // No process can receive a NUL in an argument; refuse it here rather than at exec time.
            for (String word : words) {
                if (word.indexOf('\0') >= 0) {
                    throw new IllegalArgumentException("an argv word cannot contain a NUL character");
                }
            }
        }

        @Override
        public String toShellLine() {
            return PosixShell.join(words);
        }
    }

    /** @param line a fixed shell template; not blank, no NUL */
    record Shell(String line) implements Command {
        public Shell {
            if (line == null || line.isBlank()) {
                throw new IllegalArgumentException("a shell command cannot be null or blank");
            }
            if (line.indexOf('\0') >= 0) {
                throw new IllegalArgumentException("a shell command cannot contain a NUL character");
            }
        }

        @Override
        public String toShellLine() {
            return line;
        }
    }
}
