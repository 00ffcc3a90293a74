package org.sandbox4j.aca;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.sandbox4j.core.spi.PosixShell;

/**
 * The guest-side wrapper every exec runs in, because {@code executeShellCommand} returns its
 * streams as JSON text (not bytes), takes no stdin and kills nothing on a client timeout. The
 * wrapper (a fixed script, its inputs passed as quoted positional parameters):
 * <ul>
 *   <li>enters the working directory itself (the service is asked to start it in {@code /}), so
 *       a missing one and a file are told apart and reported on its first line, before any
 *       command ran, in words no command can print first ({@link #WORKDIR});</li>
 *   <li>runs the command line in its own {@code sh -c}, under {@code timeout -s KILL}, which
 *       makes its own process group and kills the whole group when the caller's bound expires;</li>
 *   <li>records the command's exit status from a shell of its own that waits for the command, so
 *       whether the command finished or was killed is known from that record, never guessed from
 *       the code: a command that exits 137 or 124 by itself is an ordinary result;</li>
 *   <li>feeds stdin from a file the backend uploaded beforehand (removed afterwards), or from
 *       {@code /dev/null};</li>
 *   <li>marks everything the command starts with a per-call {@link #CALL_VARIABLE}, and after a
 *       timeout or cap kill also kills every process still carrying it (escaped {@code setsid}
 *       or double-forked children);</li>
 *   <li>watches the two output files and kills the group as soon as they hold more than the cap
 *       together, so a command writing without end is refused promptly;</li>
 *   <li>prints both streams base64-encoded between markers, then the exit code, so every byte
 *       survives the JSON text.</li>
 * </ul>
 * The caller's environment is exported only for the command, after the wrapper found its own
 * tools; the host's never is.
 */
final class AcaExecScript {

    static final String OUT = "@@sandbox4j-out@@";
    static final String ERR = "@@sandbox4j-err@@";
    static final String EXIT = "@@sandbox4j-exit@@";
    static final String CAPPED = "@@sandbox4j-capped@@";
    static final String MISSING = "@@sandbox4j-missing@@";
    /** Printed before the exit line when the command did not finish by itself: its group was killed. */
    static final String KILLED = "@@sandbox4j-killed@@";
    /**
     * The wrapper's first line when it could not enter the working directory, then why: nothing ran.
     * No command can print it first: the command's output is kept in files until it has ended.
     */
    static final String WORKDIR = "@@sandbox4j-workdir@@";
    static final String WORKDIR_MISSING = "missing";
    static final String WORKDIR_NOT_A_DIRECTORY = "not-a-directory";
    static final String WORKDIR_UNENTERABLE = "unenterable";
    /** What the wrapper needs in the guest besides a POSIX sh. */
    static final List<String> REQUIRED_COMMANDS = List.of("timeout", "base64", "mktemp", "wc", "sleep", "rm");

    /**
     * Carries a per-call key into everything the command starts (exported only to the command,
     * never to the wrapper itself), so a timeout or cap kill also finds what left the process
     * group ({@code setsid}, a double fork) but kept its environment: the wrapper then kills every
     * process whose {@code /proc/<pid>/environ} carries the key, as sbx does. Keys are all the
     * same length, so one can never be a prefix of another. A process that also clears its
     * environment outlives the kill; only stopping or deleting the sandbox ends it.
     */
    static final String CALL_VARIABLE = "SANDBOX4J_CALL";
    private static final int CALL_KEY_BYTES = 16;
    private static final java.security.SecureRandom RANDOM = new java.security.SecureRandom();

    /*
     * Variables: t timeout, cap output cap, i stdin file, l command line, k call key, wd working directory, ev the
     * caller's environment as export statements, s the sh the command runs in; o, e the output files; r the
     * status record; p the group (timeout's pid); x 1 when the cap was hit; w timeout's own exit; c the command's
     * recorded status; d 1 when there is none (the group was killed before the command finished).
     */
    private static final String SCRIPT = String.join("\n",
            "t=$1; cap=$2; i=$3; l=$4; k=$5; wd=$6; ev=$7",
            "for c in " + String.join(" ", REQUIRED_COMMANDS) + "; do",
            "  command -v \"$c\" >/dev/null 2>&1 || { printf '" + MISSING + " %s\\n' \"$c\"; exit 127; }",
            "done",
            "if ! cd -- \"$wd\" 2>/dev/null; then",
            "  if [ -d \"$wd\" ]; then wd=" + WORKDIR_UNENTERABLE + "; elif [ -e \"$wd\" ]; then wd=" + WORKDIR_NOT_A_DIRECTORY
                    + "; else wd=" + WORKDIR_MISSING + "; fi",
            "  [ \"$i\" = '' ] || rm -f -- \"$i\"",
            "  printf '" + WORKDIR + " %s\\n' \"$wd\"; exit 125",
            "fi",
            // The caller's environment ($7, export statements) is set only where the command runs, after the wrapper
            // found its tools: the caller's PATH is the command's, never the wrapper's.
            "s=$(command -v sh) || exit 125",
            "o=$(mktemp) || exit 125",
            "e=$(mktemp) || { rm -f -- \"$o\"; exit 125; }",
            "r=$(mktemp) || { rm -f -- \"$o\" \"$e\"; exit 125; }",
            "[ -n \"$i\" ] || i=/dev/null",
            CALL_VARIABLE + "=\"$k\" timeout -s KILL \"$t\" \"$s\" -c 'eval \"$3\" && \"$4\" -c \"$1\"; printf %s \"$?\" >\"$2\"' "
                    + "sandbox4j-run \"$l\" \"$r\" \"$ev\" \"$s\" <\"$i\" >\"$o\" 2>\"$e\" &",
            "p=$!",
            "x=0",
            "while kill -0 \"$p\" 2>/dev/null; do",
            "  n=$(( $(wc -c <\"$o\") + $(wc -c <\"$e\") ))",
            "  if [ \"$n\" -gt \"$cap\" ]; then x=1; kill -KILL -\"$p\" 2>/dev/null; kill -KILL \"$p\" 2>/dev/null; break; fi",
            "  sleep 0.05",
            "done",
            "wait \"$p\"; w=$?",
            "c=$(cat -- \"$r\" 2>/dev/null); d=0",
            "case \"$c\" in ''|*[!0-9]*) d=1; c=$w ;; esac",
            "if [ \"$x\" = 1 ] || [ \"$d\" = 1 ]; then",
            "  for pass in 1 2 3; do",
            "    for q in /proc/[0-9]*; do",
            "      [ \"${q#/proc/}\" = \"$$\" ] && continue",
            "      case \"$(cat \"$q/environ\" 2>/dev/null)\" in",
            "        *\"" + CALL_VARIABLE + "=$k\"*) kill -KILL \"${q#/proc/}\" 2>/dev/null ;;",
            "      esac",
            "    done",
            "  done",
            "fi",
            "rm -f -- \"$r\"",
            "[ \"$i\" = /dev/null ] || rm -f -- \"$i\"",
            "if [ \"$x\" = 1 ]; then printf '%s\\n' '" + CAPPED + "'; rm -f -- \"$o\" \"$e\"; exit 0; fi",
            "n=$(( $(wc -c <\"$o\") + $(wc -c <\"$e\") ))",
            "if [ \"$n\" -gt \"$cap\" ]; then printf '%s\\n' '" + CAPPED + "'; rm -f -- \"$o\" \"$e\"; exit 0; fi",
            "printf '%s\\n' '" + OUT + "'; base64 <\"$o\"",
            "printf '%s\\n' '" + ERR + "'; base64 <\"$e\"",
            "[ \"$d\" = 0 ] || printf '%s\\n' '" + KILLED + "'",
            "printf '" + EXIT + " %s\\n' \"$c\"",
            "rm -f -- \"$o\" \"$e\"");

    private AcaExecScript() {
    }

    /** The one shell line sent to {@code executeShellCommand}. */
    static String line(String commandLine, String workingDirectory, Map<String, String> environment, Duration timeout,
            long outputCap, Optional<String> stdinPath) {
        byte[] key = new byte[CALL_KEY_BYTES];
        RANDOM.nextBytes(key);
        return line(commandLine, workingDirectory, environment, timeout, outputCap, stdinPath, "k"
                + java.util.HexFormat.of().formatHex(key));
    }

    /** The one shell line, with the call's {@link #CALL_VARIABLE} key given. */
    static String line(String commandLine, String workingDirectory, Map<String, String> environment, Duration timeout,
            long outputCap, Optional<String> stdinPath, String callKey) {
        if (!callKey.matches("[A-Za-z0-9]+")) {
            throw new IllegalArgumentException("a call key is letters and digits");
        }
        StringBuilder exports = new StringBuilder();
        for (Map.Entry<String, String> variable : environment.entrySet()) {
            if (!variable.getKey().matches("[A-Za-z_][A-Za-z0-9_]*")) {
                throw new IllegalArgumentException("the environment variable name '" + variable.getKey() + "' cannot "
                        + "be exported by a POSIX shell; use letters, digits and '_'");
            }
            exports.append("export ").append(variable.getKey()).append('=').append(PosixShell.quote(variable.getValue()))
                    .append("; ");
        }
        List<String> words = new ArrayList<>(List.of("sh", "-c", SCRIPT, "sandbox4j-exec", seconds(timeout),
                Long.toString(outputCap), stdinPath.orElse(""), commandLine, callKey, workingDirectory,
                exports.toString()));
        return "exec " + PosixShell.join(words);
    }

    /** {@code timeout}'s duration: seconds with millisecond precision. */
    static String seconds(Duration timeout) {
        long millis = Math.max(1, timeout.toMillis());
        return String.format(Locale.ROOT, "%d.%03d", millis / 1000, millis % 1000);
    }

    /** What the wrapper printed. */
    sealed interface Outcome permits Finished, Capped, Missing, WorkingDirectory, Unreadable {
    }

    /** The wrapper could not enter the working directory ({@code why}: one of the {@code WORKDIR_} words); nothing ran. */
    record WorkingDirectory(String why) implements Outcome {
    }

    /**
     * The command's streams and exit code; {@code killed} when it did not finish by itself (its
     * process group was killed: by the wrapper's timeout, or by something else), in which case the
     * code is {@code timeout}'s.
     */
    record Finished(byte[] stdout, byte[] stderr, int exitCode, boolean killed) implements Outcome {
    }

    record Capped() implements Outcome {
    }

    record Missing(String command) implements Outcome {
    }

    record Unreadable(String why) implements Outcome {
    }

    static Outcome parse(String printed) {
        String[] lines = printed.split("\n", -1);
        if (lines.length > 0 && lines[0].startsWith(MISSING + " ")) {
            return new Missing(lines[0].substring(MISSING.length() + 1).strip());
        }
        if (lines.length > 0 && lines[0].startsWith(WORKDIR + " ")) {
            return new WorkingDirectory(lines[0].substring(WORKDIR.length() + 1).strip());
        }
        if (lines.length > 0 && lines[0].equals(CAPPED)) {
            return new Capped();
        }
        int out = indexOf(lines, OUT);
        int err = indexOf(lines, ERR);
        int exit = -1;
        for (int i = 0; i < lines.length; i++) {
            if (lines[i].startsWith(EXIT + " ")) {
                exit = i;
            }
        }
        if (out != 0 || err < out || exit < err) {
            return new Unreadable("markers missing or out of order");
        }
        boolean killed = exit > err + 1 && lines[exit - 1].equals(KILLED);
        try {
            int code = Integer.parseInt(lines[exit].substring(EXIT.length() + 1).strip());
            return new Finished(decode(lines, out + 1, err), decode(lines, err + 1, killed ? exit - 1 : exit), code,
                    killed);
        } catch (IllegalArgumentException e) {
            return new Unreadable(e.getMessage());
        }
    }

    private static int indexOf(String[] lines, String marker) {
        for (int i = 0; i < lines.length; i++) {
            if (lines[i].equals(marker)) {
                return i;
            }
        }
        return -1;
    }

    private static byte[] decode(String[] lines, int from, int to) {
        StringBuilder text = new StringBuilder();
        for (int i = from; i < to; i++) {
            text.append(lines[i].strip());
        }
        return Base64.getDecoder().decode(text.toString().getBytes(StandardCharsets.US_ASCII));
    }
}
