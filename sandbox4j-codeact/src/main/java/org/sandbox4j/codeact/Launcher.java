package org.sandbox4j.codeact;

import java.util.List;
import java.util.Objects;

import org.sandbox4j.core.spi.PosixShell;

/**
 * The POSIX sh script that starts a host-tool run's program in the guest. Every word that comes
 * from the layout or the interpreter is single-quoted ({@link PosixShell#quote}), so a run
 * directory or interpreter word holding {@code '} or {@code $(…)} stays inert.
 *
 * <p>What it does, in order: makes and enters {@code work} (the program's working directory; the
 * program file itself stays in {@code T}); starts, detached from the launcher ({@code setsid nohup
 * sh -c …} where {@code setsid} exists, else {@code nohup sh -c …}, all background output to
 * {@code /dev/null}), a shell that records its session id (setsid only), rebuilds
 * {@code PYTHONPATH} and {@code NODE_PATH} as {@code T} plus the inherited entries that are
 * absolute, canonical and neither the run directory nor under it (globbing off while splitting),
 * sets {@code PYTHONUNBUFFERED=1 PYTHONNOUSERSITE=1}, runs the program with stdout and stderr merged
 * into the output file, records its pid, waits, and records its exit status. Each record is written
 * to a {@code .part} file and renamed, so the host never reads half of one. With setsid the
 * launcher prints {@value #SESSION_MARKER} on its own stdout: the session file alone, being
 * guest-writable, is never trusted to say a session exists.
 *
 * <p>Beyond the reference: the launcher then waits for the detached shell before it exits. A
 * backend that keeps the guest between commands (a container, a VM) does not need that, but a
 * backend that gives each command its own process namespace (bubblewrap) ends every process a
 * command started when the command returns, so a launcher that returned at once would take the
 * program with it. The supervisor runs the launcher on a thread of its own and never waits on it.
 */
final class Launcher {

    /** The line the launcher prints when it started the program in a session of its own. */
    static final String SESSION_MARKER = "sandbox4j-host-tools: session";

    private Launcher() {
    }

    /**
     * The launcher for {@code layout}.
     *
     * @param interpreterArgv the interpreter and its options, e.g. {@code ["python3"]} or
     *                        {@code ["node"]}; the program's absolute path is appended
     * @throws IllegalArgumentException an empty argv, an empty program word, or a NUL anywhere
     */
    static String script(GuestRunLayout layout, List<String> interpreterArgv) {
        Objects.requireNonNull(layout, "layout");
        Objects.requireNonNull(interpreterArgv, "interpreterArgv");
        if (interpreterArgv.isEmpty() || interpreterArgv.get(0).isEmpty()) {
            throw new IllegalArgumentException("the interpreter argv needs at least the interpreter, e.g. [python3]");
        }
        String directory = PosixShell.quote(layout.directory());
        String transport = PosixShell.quote(layout.transport());
        String program = PosixShell.join(interpreterArgv) + " " + PosixShell.quote(layout.program());

        String run = String.join("\n",
                "keep_outside_run() {",
                "  kept=",
                "  set -f",
                "  saved_ifs=$IFS",
                "  IFS=:",
                "  for entry in $1; do",
                "    case $entry in /*) ;; *) continue ;; esac",
                "    case $entry in */./*|*/../*|*//*|*/.|*/..) continue ;; esac",
                "    case $entry in " + directory + "|" + directory + "/*) continue ;; esac",
                "    kept=$kept:$entry",
                "  done",
                "  IFS=$saved_ifs",
                "  set +f",
                "}",
                "keep_outside_run \"${PYTHONPATH-}\"",
                "PYTHONPATH=" + transport + "$kept",
                "keep_outside_run \"${NODE_PATH-}\"",
                "NODE_PATH=" + transport + "$kept",
                "PYTHONUNBUFFERED=1",
                "PYTHONNOUSERSITE=1",
                "export PYTHONPATH NODE_PATH PYTHONUNBUFFERED PYTHONNOUSERSITE",
                program + " > " + PosixShell.quote(layout.output()) + " 2>&1 < /dev/null &",
                "program=$!",
                staged("\"$program\"", layout.pid()),
                "wait \"$program\"",
                "status=$?",
                staged("\"$status\"", layout.exitCode()));
        String session = staged("\"$$\"", layout.session()) + " || exit 1\n" + run;

        return String.join("\n",
                "# sandbox4j host-tool launcher, generated for one run; every path is single-quoted.",
                "cd " + directory + " || exit 1",
                "mkdir -p " + PosixShell.quote(layout.work()) + " && cd " + PosixShell.quote(layout.work())
                        + " || exit 1",
                "if command -v setsid > /dev/null 2>&1; then",
                "  setsid nohup sh -c " + PosixShell.quote(session) + " sandbox4j-program > /dev/null 2>&1 < /dev/null &",
                "  printf '%s\\n' " + PosixShell.quote(SESSION_MARKER),
                "else",
                "  nohup sh -c " + PosixShell.quote(run) + " sandbox4j-program > /dev/null 2>&1 < /dev/null &",
                "fi",
                "# Hold this command open while the program runs (see Launcher's Javadoc).",
                "wait",
                "exit 0",
                "");
    }

    /** Writes {@code value} and a newline to {@code path}.part, then renames it to {@code path}. */
    private static String staged(String value, String path) {
        String part = PosixShell.quote(path + GuestRunLayout.STAGED_SUFFIX);
        return "printf '%s\\n' " + value + " > " + part + " && mv -f " + part + " " + PosixShell.quote(path);
    }
}
