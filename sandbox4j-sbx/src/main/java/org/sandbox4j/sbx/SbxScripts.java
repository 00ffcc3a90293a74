package org.sandbox4j.sbx;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.sandbox4j.core.ProcessSignal;

/**
 * The fixed {@code sh} scripts the backend runs in a guest. Each is a constant: whatever varies
 * (paths, the nonce, the command) travels as positional parameters, never pasted into the text.
 */
final class SbxScripts {

    /** The commands the wrapper and the backend's own scripts need; acquire checks every one. */
    static final List<String> REQUIRED_COMMANDS = List.of("sh", "base64", "setsid", "setpriv", "unshare", "mount",
            "mkdir", "cat", "rm", "sleep");

    /** What the wrapper prints after the nonce when it could not bind the workspace in its own namespace. */
    static final String UNBOUND = "unbound";
    /** The last line of the kill script, proving it ran. */
    static final String KILL_DONE = "sandbox4j-kill-done";
    /** The last line of the signal script, proving it ran. */
    static final String SIGNAL_DONE = "sandbox4j-signal-done";
    /** The kill script's second parameter for a started process: remove the call state after the kill. */
    static final String FORGET = "forget";
    /** The signals the signal script sends, as {@code kill -s} names them; a case pattern. */
    private static final String SIGNAL_NAMES = java.util.Arrays.stream(ProcessSignal.values())
            .map(ProcessSignal::shellName).collect(java.util.stream.Collectors.joining("|"));
    /** The last line of the probe script, proving it ran. */
    static final String PROBE_DONE = "sandbox4j-probe-done";
    /** The probe's line naming a forwarded SSH agent socket. */
    static final String AGENT_SOCKET = "agent-socket";
    /** The probe's line listing missing commands. */
    static final String MISSING = "missing";
    /** The probe's line when the template's user cannot make a user and mount namespace. */
    static final String NO_NAMESPACES = "no-namespaces";
    /** Exit status of the mount-point script when the mount point already exists in the image. */
    static final int MOUNT_POINT_TAKEN = 3;
    /** Exit status of the wrapper when it ran nothing; only its marker line says why, never this code. */
    static final int CANNOT_RUN = 125;
    /** After the nonce on the wrapper's marker line: the working directory does not exist. */
    static final String WORKING_DIRECTORY_MISSING = "workdir-missing";
    /** After the nonce: the working directory is not a directory. */
    static final String WORKING_DIRECTORY_NOT_A_DIRECTORY = "workdir-not-a-directory";
    /** After the nonce: the working directory is a directory the guest user may not enter. */
    static final String WORKING_DIRECTORY_UNENTERABLE = "workdir-unenterable";
    /** After the nonce: the wrapper could not decode its words, find its tools or make its call state. */
    static final String WRAPPER_FAILED = "wrapper-failed";
    /** Marks an encoded word, so no argument sbx sees is ever empty. */
    static final String WORD_MARK = "b";
    /**
     * Carries the call's state directory into everything the command starts, so the kill also
     * finds what left the process group ({@code setsid}, a double fork) and kept its environment.
     */
    static final String CALL_VARIABLE = "SANDBOX4J_CALL";
    /** Where each call keeps its process-group id and cancel file. */
    static final String CALL_STATE_PREFIX = "/tmp/.sandbox4j-exec-";
    /** The wrapper's first stage: the one {@code sbx exec} starts. */
    static final String ENTER = "enter";

    /**
     * Runs one command in three stages, each the same script started again with the stage's
     * name: {@code $1} this script, {@code $2} the stage, {@code $3} nonce, {@code $4} call state
     * directory, {@code $5} the workspace as the guest mounts it, {@code $6} the mount point where
     * the command sees it, {@code $7} working directory, {@code $8} a started process's lifetime
     * backstop in seconds ({@code 0} for an exec), {@code $9} how many environment words follow,
     * then those ({@code NAME=value}) and the argv, each {@link #encode encoded}.
     *
     * <p>sbx gives the mount capability only to Docker's own templates (the reference backend's
     * finding), so no command binds as root: {@code enter} makes a user and mount namespace of the
     * command's own where its user is root, {@code bind} binds the workspace at the mount point
     * there and maps the user back to its own uid and gid (read from the new namespace's maps) in
     * a second user namespace, and {@code run} starts the command. The bind lives and dies with
     * the command, so an idle stop has nothing to drop. A failure before {@code run} prints no
     * nonce, or the nonce followed by {@value #UNBOUND} when the bind itself failed.
     *
     * <p>{@code run} enters the working directory, decodes the words and makes the call state; a
     * failure there prints the nonce and a reason ({@value #WORKING_DIRECTORY_MISSING},
     * {@value #WORKING_DIRECTORY_NOT_A_DIRECTORY}, {@value #WORKING_DIRECTORY_UNENTERABLE},
     * {@value #WRAPPER_FAILED}) and runs nothing. Then the command runs in a session of its own
     * ({@code setsid}), which first records its process-group id, then checks the cancel file, so
     * a kill that came first stops it before it starts and a kill that comes later finds its
     * group, and last prints the nonce line alone: it marks where the command's own stderr starts,
     * and anything before it (or no nonce at all) is {@code sbx} or the wrapper speaking. No
     * command can print a marker first, since none has started before it. The command itself starts
     * through {@code setpriv --no-new-privs} (nothing it runs can gain privileges, so the
     * {@code shell} template's passwordless {@code sudo}, a setuid binary, does not work for the
     * workload) and a shell that execs the argv, so a missing or non-executable program is reported
     * as a shell does (127, 126), never in setpriv's words.
     *
     * <p>A started process (a backstop above 0) differs in two ways: where a {@code timeout} that
     * takes {@code --foreground -s KILL} is there, it runs the command's leader and kills it once the
     * backstop passes (the host's own lifetime comes first; this covers a host that went away), and
     * once the leader ended the wrapper kills what stayed in its group, so a process ends with its
     * tree even when nothing on the host asks.
     */
    static final String WRAPPER = String.join("\n",
            "self=$1; stage=$2; nonce=$3; state=$4; ws=$5; mp=$6; shift 6",
            "case $stage in",
            "  " + ENTER + ") exec unshare --user --mount --map-root-user -- sh -c \"$self\" sandbox4j-exec \"$self\" bind "
                    + "\"$nonce\" \"$state\" \"$ws\" \"$mp\" \"$@\" ;;",
            "  bind)",
            "    if ! said=$(mount --bind \"$ws\" \"$mp\" 2>&1); then",
            "      printf '%s\\n%s " + UNBOUND + "\\n' \"$said\" \"$nonce\" >&2; exit " + CANNOT_RUN,
            "    fi",
            "    { read -r _ u _ < /proc/self/uid_map && read -r _ g _ < /proc/self/gid_map; } || exit " + CANNOT_RUN,
            "    exec unshare --user --map-user=\"$u\" --map-group=\"$g\" -- sh -c \"$self\" sandbox4j-exec \"$self\" run "
                    + "\"$nonce\" \"$state\" \"$ws\" \"$mp\" \"$@\" ;;",
            "  run) ;;",
            "  *) exit " + CANNOT_RUN + " ;;",
            "esac",
            "wd=$1; life=$2; envs=$3; shift 3",
            "fail() { printf '%s %s\\n' \"$nonce\" \"$1\" >&2; exit " + CANNOT_RUN + "; }",
            "if ! cd -- \"$wd\" 2>/dev/null; then",
            "  if [ -d \"$wd\" ]; then fail " + WORKING_DIRECTORY_UNENTERABLE + "; elif [ -e \"$wd\" ]; then fail "
                    + WORKING_DIRECTORY_NOT_A_DIRECTORY + "; else fail " + WORKING_DIRECTORY_MISSING + "; fi",
            "fi",
            // Found, and every word decoded, before the caller's environment is exported: its PATH is the command's.
            "run_setsid=$(command -v setsid) && run_setpriv=$(command -v setpriv) && run_sh=$(command -v sh) "
                    + "&& run_rm=$(command -v rm) || fail " + WRAPPER_FAILED,
            // A started process's backstop: a timeout outside its group (--foreground: it kills only the leader,
            // then the wrapper kills the group), where one that takes these flags is there.
            "backstop=",
            "if [ \"$life\" -gt 0 ] && run_timeout=$(command -v timeout) "
                    + "&& \"$run_timeout\" --foreground -s KILL 1 \"$run_sh\" -c : 2>/dev/null; then",
            "  backstop=1",
            "fi",
            "decode() { v=$(printf '%s' \"${1#" + WORD_MARK + "}\" | base64 -d && printf x) || fail " + WRAPPER_FAILED
                    + "; v=${v%x}; }",
            "i=0",
            "while [ \"$i\" -lt \"$envs\" ]; do i=$((i + 1)); decode \"$1\"; eval \"e_$i=\\$v\"; shift; done",
            "n=0; refs=",
            "for word in \"$@\"; do n=$((n + 1)); decode \"$word\"; eval \"a_$n=\\$v\"; refs=\"$refs \\\"\\$a_$n\\\"\"; "
                    + "done",
            "eval \"set -- $refs\"",
            "(umask 077; mkdir -p \"$state\") || fail " + WRAPPER_FAILED,
            "i=0",
            "while [ \"$i\" -lt \"$envs\" ]; do i=$((i + 1)); eval \"export \\\"\\$e_$i\\\"\" || fail " + WRAPPER_FAILED
                    + "; done",
            "export " + CALL_VARIABLE + "=\"$state\"",
            // The nonce line is the run's last word before the command's own: everything earlier is the wrapper's.
            // A shell exec's the argv, so a missing or non-executable program is reported as a shell does (127, 126).
            "set -- \"$run_setsid\" \"$run_sh\" -c 'echo $$ > \"$1/pgid\" || exit " + CANNOT_RUN + "; "
                    + "if [ -e \"$1/cancel\" ]; then exit 137; fi; printf \"%s\\n\" \"$2\" >&2; p=$3; h=$4; shift 4; "
                    + "exec \"$p\" --no-new-privs -- \"$h\" -c \"exec \\\"\\$@\\\"\" sandbox4j-argv \"$@\"' "
                    + "sandbox4j-run \"$state\" \"$nonce\" \"$run_setpriv\" \"$run_sh\" \"$@\"",
            "if [ -n \"$backstop\" ]; then set -- \"$run_timeout\" --foreground -s KILL \"$life\" \"$@\"; fi",
            "\"$@\"",
            "status=$?",
            // A started process ends with its tree: what stayed in the leader's group goes with it.
            "if [ \"$life\" -gt 0 ]; then",
            "  pgid=; { read -r pgid < \"$state/pgid\"; } 2>/dev/null",
            "  case \"$pgid\" in ''|*[!0-9]*) ;; *) kill -s KILL -- \"-$pgid\" 2>/dev/null ;; esac",
            "fi",
            "\"$run_rm\" -rf \"$state\"",
            "exit $status");

    /**
     * Kills one call's process group: {@code $1} the call state directory, {@code $2}
     * {@value #FORGET} to remove that directory afterwards (a started process). It leaves the cancel
     * file first, then reads the group id, so it and the wrapper cannot both miss each other.
     * Then it kills every process of its user whose environment carries the call's
     * {@link #CALL_VARIABLE} (a process that left the group but kept its environment), stopping each
     * as it is found and killing them all once none is left unstopped; a process that also clears its
     * environment outlives it, and only disposal ends it.
     */
    static final String KILL = String.join("\n",
            "state=$1",
            "(umask 077; mkdir -p \"$state\") && : > \"$state/cancel\" || exit 1",
            "pgid=$(cat \"$state/pgid\" 2>/dev/null)",
            "case \"$pgid\" in ''|*[!0-9]*) ;; *) kill -s KILL -- \"-$pgid\" 2>/dev/null ;; esac",
            // Stopped first, killed once all are found: a parent killed before its child cannot act on the
            // child's death (a touch after its sleep), whatever order the pids come in.
            "found=",
            "for pass in 1 2 3; do",
            "  for p in /proc/[0-9]*; do",
            "    pid=${p#/proc/}",
            "    [ \"$pid\" = \"$$\" ] && continue",
            "    case \"$(cat \"$p/environ\" 2>/dev/null)\" in",
            "      *\"" + CALL_VARIABLE + "=$state\"*) kill -s STOP \"$pid\" 2>/dev/null && found=\"$found $pid\" ;;",
            "    esac",
            "  done",
            "done",
            "for pid in $found; do kill -s KILL \"$pid\" 2>/dev/null; done",
            // A started process's kill comes after its start: its state is no longer needed as a cancel.
            "if [ \"${2:-}\" = " + FORGET + " ]; then rm -rf \"$state\"; fi",
            "echo " + KILL_DONE);

    /**
     * Sends one signal to one call's process group: {@code $1} the call state directory,
     * {@code $2} the signal's name, one of {@link ProcessSignal}'s (anything else sends nothing).
     * Nothing once the group's leader ended and the wrapper removed the state.
     */
    static final String SIGNAL = String.join("\n",
            "state=$1; sig=$2",
            "case \"$sig\" in " + SIGNAL_NAMES + ") ;; *) exit 2 ;; esac",
            "pgid=$(cat \"$state/pgid\" 2>/dev/null)",
            "case \"$pgid\" in ''|*[!0-9]*) ;; *) kill -s \"$sig\" -- \"-$pgid\" 2>/dev/null ;; esac",
            "echo " + SIGNAL_DONE);

    /**
     * Makes the mount point ({@code $1}) as root, once, at create: the one root step. It must not
     * exist in the image, so the workspace bound over it hides nothing of the image's. The guest's
     * disk keeps it across idle stops.
     */
    static final String MOUNT_POINT = String.join("\n",
            "mp=$1",
            "if [ -e \"$mp\" ] || [ -L \"$mp\" ]; then echo \"$mp already exists in the image\" >&2; exit "
                    + MOUNT_POINT_TAKEN + "; fi",
            "mkdir -p \"$mp\"");

    /** Reports missing commands and a forwarded SSH agent, in the template's own {@code sh}. */
    static final String PROBE = String.join("\n",
            "missing=",
            "for c in " + String.join(" ", REQUIRED_COMMANDS) + "; do command -v \"$c\" >/dev/null 2>&1 || "
                    + "missing=\"$missing $c\"; done",
            "if [ -n \"${SSH_AUTH_SOCK:-}\" ]; then echo \"" + AGENT_SOCKET + " $SSH_AUTH_SOCK\"; fi",
            "if [ -z \"$missing\" ] && ! unshare --user --mount --map-root-user true >/dev/null 2>&1; then echo "
                    + NO_NAMESPACES + "; fi",
            "echo \"" + MISSING + "$missing\"",
            "echo " + PROBE_DONE);

    private static final Pattern ENVIRONMENT_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

    private SbxScripts() {
    }

    /** One word for the wrapper: never empty, whatever it holds. */
    static String encode(String word) {
        return WORD_MARK + Base64.getEncoder().encodeToString(word.getBytes(StandardCharsets.UTF_8));
    }

    /** The wrapper's parameters after {@code sh -c WRAPPER $0}, from its first stage on, for an exec. */
    static List<String> wrapperParameters(String nonce, String callState, String workspace, String mountPoint,
            String workingDirectory, Map<String, String> environment, List<String> argv) {
        return wrapperParameters(nonce, callState, workspace, mountPoint, workingDirectory, 0, environment, argv);
    }

    /**
     * The wrapper's parameters; {@code backstopSeconds} above 0 makes the run a started process's
     * (its guest-side lifetime backstop, and its tree killed when its leader ends).
     */
    static List<String> wrapperParameters(String nonce, String callState, String workspace, String mountPoint,
            String workingDirectory, long backstopSeconds, Map<String, String> environment, List<String> argv) {
        if (backstopSeconds < 0) {
            throw new IllegalArgumentException("a backstop is 0 (none) or positive, not " + backstopSeconds);
        }
        List<String> parameters = new ArrayList<>(List.of(WRAPPER, ENTER, nonce, callState, workspace, mountPoint,
                workingDirectory, Long.toString(backstopSeconds), Integer.toString(environment.size())));
        environment.forEach((variable, value) -> {
            if (!ENVIRONMENT_NAME.matcher(variable).matches()) {
                throw new IllegalArgumentException("the environment variable name '" + variable + "' cannot be set "
                        + "by a POSIX shell; use letters, digits and underscores, not starting with a digit");
            }
            parameters.add(encode(variable + "=" + value));
        });
        argv.forEach(word -> parameters.add(encode(word)));
        return parameters;
    }

    /** {@code sh -c SCRIPT NAME PARAMETERS...}: the command sbx exec runs. */
    static List<String> shell(String script, String name, List<String> parameters) {
        List<String> command = new ArrayList<>(List.of("sh", "-c", script, name));
        command.addAll(parameters);
        return command;
    }
}
