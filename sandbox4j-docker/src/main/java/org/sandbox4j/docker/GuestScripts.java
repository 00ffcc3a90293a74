package org.sandbox4j.docker;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The fixed {@code sh} scripts the backend runs in a container. Every variable part reaches them
 * as a positional parameter, never as shell text.
 *
 * <p>Each exec is wrapped: the wrapper takes its stdin from a file the backend uploaded (the
 * hijacked attach stream cannot be half-closed, so a command would never see end of input) or from
 * {@code /dev/null}, changes to the working directory, prints one preamble line on stdout (its
 * own pid, which names the exec's process group, since the engine starts every exec as a session
 * and process-group leader, and whether it set the command up: a {@link Setup} word), and only when
 * it did {@code exec}s the command. The preamble comes before the command runs, so nothing the
 * command prints or exits with can pass for it: a missing working directory is told from a command
 * that itself exits 125, and no preamble at all means the engine never started the wrapper. Every
 * process the command starts inherits {@value #EXEC_MARKER}, so a second exec can find and kill
 * the whole tree, even children that left the group with {@code setsid}.
 */
final class GuestScripts {

    /** The variable that marks every process of one exec. */
    static final String EXEC_MARKER = "SANDBOX4J_EXEC";
    /** The first line of an exec's stdout: this, the wrapper's pid, a space, a {@link Setup} word, a newline. */
    static final String PREAMBLE = "sandbox4j-exec ";
    /** How many bytes of stdout may hold the preamble; beyond it, there is none. */
    static final int MAX_PREAMBLE_BYTES = 64;
    /** Where the wrapper finds an exec's stdin: a file of this name, then the token, in the work area. */
    static final String STDIN_PREFIX = ".sandbox4j-stdin-";
    /** The wrapper's exit code when it did not set the command up; the preamble, not this, says why. */
    static final int EXIT_SETUP_FAILED = 125;
    /** Rounds the kill script repeats before it reports survivors (a process may fork mid-scan). */
    static final int KILL_ROUNDS = 50;

    /** What the wrapper says on its preamble line: it started the command, or why it did not. */
    enum Setup {
        /** The command was {@code exec}ed: what follows is its own output and exit. */
        READY("ready"),
        /** The working directory does not exist (nor does one of its parents, or it is a dangling link). */
        NO_DIRECTORY("no-directory"),
        /** The working directory is a file, or anything but a directory. */
        NOT_A_DIRECTORY("not-a-directory"),
        /** The working directory is a directory the guest may not enter. */
        CANNOT_ENTER("cannot-enter"),
        /** The stdin file the backend uploaded was not there. */
        NO_STDIN("no-stdin"),
        /** A started process's stdin pipe could not be made in the work area (it is full, or something is in the way). */
        NO_PIPE("no-pipe"),
        /** The image lacks a tool a started process needs ({@value #PROCESS_TOOLS}). */
        NO_TOOLS("no-tools");

        final String word;

        Setup(String word) {
            this.word = word;
        }

        static Optional<Setup> of(String word) {
            for (Setup setup : values()) {
                if (setup.word.equals(word)) {
                    return Optional.of(setup);
                }
            }
            return Optional.empty();
        }
    }

    static final String WRAPPER = String.join("\n",
            "area=$1; token=$2; wd=$3; input=$4; shift 4",
            "say() { printf '" + PREAMBLE + "%s %s\\n' \"$$\" \"$1\"; }",
            "if [ \"$input\" = 1 ]; then",
            // A failed redirection of exec ends sh at once, before it could say why: look first.
            "  [ -f \"$area/" + STDIN_PREFIX + "$token\" ] || { say " + Setup.NO_STDIN.word + "; exit "
                    + EXIT_SETUP_FAILED + "; }",
            "  exec 0<\"$area/" + STDIN_PREFIX + "$token\"",
            "  rm -f -- \"$area/" + STDIN_PREFIX + "$token\"",
            "else",
            "  exec 0</dev/null",
            "fi",
            "if ! cd -- \"$wd\" 2>/dev/null; then",
            "  if [ -d \"$wd\" ]; then say " + Setup.CANNOT_ENTER.word,
            "  elif [ -e \"$wd\" ]; then say " + Setup.NOT_A_DIRECTORY.word,
            "  else say " + Setup.NO_DIRECTORY.word + "; fi",
            "  exit " + EXIT_SETUP_FAILED,
            "fi",
            "say " + Setup.READY.word,
            "exec \"$@\"");

    /** Where a started process's stdin pipe is made: a FIFO of this name, then the token, in the work area. */
    static final String FIFO_PREFIX = ".sandbox4j-in-";
    /** What the process wrapper needs besides {@code sh}: the FIFO, the feeder and the lifetime backstop. */
    static final String PROCESS_TOOLS = "mkfifo cat sleep";

    /**
     * The wrapper of a started process ({@code Sandbox.start}). The hijacked attach stream cannot be
     * half-closed, so stdin comes through a FIFO in the work area that a second exec, the feeder
     * ({@link #FEEDER}), writes: its end is the command's end of input. After the working-directory
     * checks it makes the FIFO, starts the lifetime backstop, prints the preamble, opens the FIFO as
     * stdin (which waits for the feeder), removes its name and {@code exec}s the command. The
     * backstop kills the group once the lifetime and a grace have passed, should the JVM holding the
     * handle be gone; it ignores the signals a caller may send the group, and holds no pipe.
     */
    static final String PROCESS_WRAPPER = String.join("\n",
            "area=$1; token=$2; wd=$3; bound=$4; shift 4",
            "say() { printf '" + PREAMBLE + "%s %s\\n' \"$$\" \"$1\"; }",
            "for tool in " + PROCESS_TOOLS + "; do",
            "  command -v \"$tool\" >/dev/null 2>&1 || { say " + Setup.NO_TOOLS.word + "; exit " + EXIT_SETUP_FAILED
                    + "; }",
            "done",
            "if ! cd -- \"$wd\" 2>/dev/null; then",
            "  if [ -d \"$wd\" ]; then say " + Setup.CANNOT_ENTER.word,
            "  elif [ -e \"$wd\" ]; then say " + Setup.NOT_A_DIRECTORY.word,
            "  else say " + Setup.NO_DIRECTORY.word + "; fi",
            "  exit " + EXIT_SETUP_FAILED,
            "fi",
            "fifo=\"$area/" + FIFO_PREFIX + "$token\"",
            "mkfifo -m 600 -- \"$fifo\" 2>/dev/null || { say " + Setup.NO_PIPE.word + "; exit " + EXIT_SETUP_FAILED + "; }",
            "group=$$",
            "( trap '' HUP INT QUIT TERM USR1 USR2; sleep \"$bound\"; kill -s KILL -- \"-$group\" ) </dev/null >/dev/null 2>&1 &",
            "say " + Setup.READY.word,
            "exec 0<\"$fifo\"",
            "rm -f -- \"$fifo\"",
            "exec \"$@\"");

    /**
     * The feeder of a started process: copies its attached stdin into the process's FIFO, then ends;
     * nothing but the FIFO is written (a name that is not one is left alone).
     */
    static final String FEEDER = "fifo=\"$1/" + FIFO_PREFIX + "$2\"; [ -p \"$fifo\" ] || exit 1; exec cat > \"$fifo\"";

    /** Sends a signal (a name {@code kill -s} takes) to a process group. */
    static final String SIGNAL = "kill -s \"$1\" -- \"-$2\"";

    /**
     * Kills every process of one exec: its process group and session (recorded from the
     * preamble, empty when unknown) and every process carrying the exec's marker. Zombies are
     * skipped (only the container's init can reap them). Repeats until a scan finds nothing;
     * exits 1 naming survivors after {@value #KILL_ROUNDS} rounds.
     */
    static final String KILL = String.join("\n",
            "token=$1; group=$2; self=$$; round=0",
            // One grep over every environment (NUL-ended records) where grep has -z, not two forks per process:
            // on gVisor under load those made a kill of a few dozen processes outlast its bound.
            "fast=''",
            "if printf 'x\\000' | grep -qzx x 2>/dev/null; then fast=1; fi",
            "while :; do",
            "  found=''",
            "  for d in /proc/[0-9]*; do",
            "    p=${d#/proc/}",
            "    [ \"$p\" = \"$self\" ] && continue",
            "    s=''",
            "    read -r s 2>/dev/null <\"$d/stat\" || continue",
            "    s=${s##*) }",
            "    set -- $s",
            "    case $1 in Z|X) continue ;; esac",
            "    if [ -n \"$group\" ] && { [ \"$3\" = \"$group\" ] || [ \"$4\" = \"$group\" ]; }; then",
            "      found=\"$found $p\"",
            "    elif [ -z \"$fast\" ] && tr '\\000' '\\n' 2>/dev/null <\"$d/environ\" | grep -qx \"" + EXEC_MARKER
                    + "=$token\"; then",
            "      found=\"$found $p\"",
            "    fi",
            "  done",
            "  if [ -n \"$fast\" ]; then",
            "    for f in $(grep -l -s -z -x \"" + EXEC_MARKER + "=$token\" /proc/[0-9]*/environ); do",
            "      p=${f#/proc/}; p=${p%/environ}",
            "      [ \"$p\" = \"$self\" ] || found=\"$found $p\"",
            "    done",
            "  fi",
            "  [ -z \"$found\" ] && exit 0",
            "  kill -KILL $found 2>/dev/null",
            "  round=$((round + 1))",
            "  if [ \"$round\" -ge " + KILL_ROUNDS + " ]; then echo \"sandbox4j-kill: still running:$found\" >&2; exit 1; fi",
            "done");

    /**
     * The container's main process under the engine's init: sleeps until stopped. The init
     * (docker-init or catatonit) reaps what execs orphan.
     */
    static final String KEEP_ALIVE = "trap 'exit 0' TERM INT; while :; do sleep 3600 & wait $!; done";

    private GuestScripts() {
    }

    /** The argv that runs {@code command} under the wrapper. */
    static List<String> wrapped(String workArea, String token, String workingDirectory, boolean stdin,
            List<String> command) {
        List<String> argv = new ArrayList<>(List.of("sh", "-c", WRAPPER, "sandbox4j-exec", workArea, token,
                workingDirectory, stdin ? "1" : "0"));
        argv.addAll(command);
        return argv;
    }

    /**
     * The argv that runs {@code command} as a started process under {@link #PROCESS_WRAPPER}, killed
     * by the backstop after {@code boundSeconds} should nobody else end it.
     */
    static List<String> process(String workArea, String token, String workingDirectory, long boundSeconds,
            List<String> command) {
        List<String> argv = new ArrayList<>(List.of("sh", "-c", PROCESS_WRAPPER, "sandbox4j-process", workArea, token,
                workingDirectory, Long.toString(boundSeconds)));
        argv.addAll(command);
        return argv;
    }

    /** The argv of the feeder of the process {@code token}. */
    static List<String> feeder(String workArea, String token) {
        return List.of("sh", "-c", FEEDER, "sandbox4j-feed", workArea, token);
    }

    /** The argv that sends {@code signalName} to the process group {@code group}. */
    static List<String> signal(String signalName, long group) {
        return List.of("sh", "-c", SIGNAL, "sandbox4j-signal", signalName, Long.toString(group));
    }

    /** {@link #listing}'s exit code when the directory could not be entered (gone, or no longer a directory). */
    static final int LISTING_NOT_ENTERED = 3;
    /** {@link #listing}'s exit code when the directory entered is not the one named: a link was on the way. */
    static final int LISTING_THROUGH_A_LINK = 4;

    /**
     * Lists one directory's children in one process, with a no-follow stat each (GNU find's
     * {@code -printf}; find never follows a link it meets below its start): for every child a line
     * of its type letter, size, modification time and permission bits (octal), then its name ended by a NUL, so any name a
     * guest can make is one entry. {@code cd -P} then {@code pwd -P} refuse a directory reached
     * through a link; find lists the directory entered (the shell's working directory), so a swap
     * after that changes nothing it reports. The path travels as an argument, never in the script.
     */
    private static final String LISTING = "cd -P -- \"$1\" 2>/dev/null || exit " + LISTING_NOT_ENTERED + "\n"
            + "[ \"$(pwd -P)\" = \"$1\" ] || exit " + LISTING_THROUGH_A_LINK + "\n"
            + "exec find . -mindepth 1 -maxdepth 1 -printf '%y %s %T@ %m\\n%f\\0'\n";

    /** The argv of {@link #LISTING} for the directory {@code absolute} (normalised, as the kit confined it). */
    static List<String> listing(String absolute) {
        return List.of("sh", "-c", LISTING, "sandbox4j-list", absolute);
    }

    /** The argv that exits 0 when anything, a dangling link too, is at {@code path}. */
    static List<String> anythingAt(String path) {
        return List.of("sh", "-c", "[ -e \"$1\" ] || [ -L \"$1\" ]", "sandbox4j-look", path);
    }

    /** The argv of the kill script for one exec. */
    static List<String> kill(String token, String group) {
        return List.of("sh", "-c", KILL, "sandbox4j-kill", token, group);
    }
}
