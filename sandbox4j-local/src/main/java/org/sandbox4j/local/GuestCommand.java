package org.sandbox4j.local;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.sandbox4j.core.Command;

/**
 * A guest command as the words a launcher starts, so that it ends as in any shell: a missing
 * program exits 127 and one that cannot be executed 126, for an argv command as for a shell line,
 * never with a launcher's own code and message (bwrap and setsid exit 1 saying "execvp"). An argv
 * runs behind {@code /bin/sh}'s {@code exec}: its words are the shell's arguments, never part of
 * the shell's text.
 */
final class GuestCommand {

    private static final String SHELL = "/bin/sh";
    /** Runs $0 with the rest as its arguments, as a shell runs a command. Fixed text. */
    private static final String EXEC = "exec \"$0\" \"$@\"";
    /**
     * Writes "started" to the file $1 (host-side), then runs $0 with the rest: a launch whose file
     * stays empty failed before the command started. Fixed text.
     */
    private static final String REPORT_THEN_EXEC = "printf started > \"$1\" || exit 125; shift; " + EXEC;
    /** What {@link #reportingStart} writes once the command is about to start. */
    static final String STARTED = "started";

    /**
     * The line {@link #announcingStart} writes on stdout just before the command runs. A launcher
     * that failed first (a working directory it could not enter) never wrote it, and nothing the
     * guest wrote can come before it.
     */
    static final String ANNOUNCED = "sandbox4j-started\n";
    /** Writes {@link #ANNOUNCED}, then runs $0 with the rest. Fixed text. */
    private static final String ANNOUNCE_THEN_EXEC = "printf 'sandbox4j-started\\n' || exit 125; " + EXEC;

    private GuestCommand() {
    }

    /**
     * {@code command} as an argv that first writes {@link #ANNOUNCED} on stdout: for a started
     * process, whose launch is confirmed by that line before its handle is returned.
     */
    static Command announcingStart(Command command) {
        List<String> program = command instanceof Command.Shell shell ? List.of(SHELL, "-c", shell.line())
                : ((Command.Argv) command).words();
        return Command.argv(behind(ANNOUNCE_THEN_EXEC, program, List.of()));
    }

    /** The command's words: a shell line under {@code sh -c}, an argv behind {@code sh}'s exec. */
    static List<String> words(Command command) {
        if (command instanceof Command.Shell shell) {
            return List.of(SHELL, "-c", shell.line());
        }
        return behind(EXEC, ((Command.Argv) command).words(), List.of());
    }

    /**
     * As {@link #words}, but the shell first writes {@value #STARTED} to {@code report}: for a
     * launcher that says nothing of its own failures (what ran before the command, exiting with
     * some code, is told apart from the command by the file).
     */
    static List<String> reportingStart(Command command, Path report) {
        List<String> program = command instanceof Command.Shell shell ? List.of(SHELL, "-c", shell.line())
                : ((Command.Argv) command).words();
        return behind(REPORT_THEN_EXEC, program, List.of(report.toString()));
    }

    /** {@code sh -c script program [before...] arguments...}: $0 is the program, its arguments last. */
    private static List<String> behind(String script, List<String> program, List<String> before) {
        List<String> words = new ArrayList<>(program.size() + before.size() + 3);
        words.addAll(List.of(SHELL, "-c", script, program.get(0)));
        words.addAll(before);
        words.addAll(program.subList(1, program.size()));
        return words;
    }
}
