package org.sandbox4j.testkit.tck.reference;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.testkit.tck.reference.NamespaceShellBackend.Flaw;

/**
 * Builds the {@code unshare(1)} command line and environment for one guest command. The guest's
 * argv reaches the fixed bootstrap script only as positional parameters, never inside its text.
 */
final class NamespaceLauncher {

    /** The fixed guest PATH. */
    static final String GUEST_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
    /** The guest's locale: UTF-8 whatever the host's. */
    static final String GUEST_LANG = "C.UTF-8";
    /** The shell every bootstrap and every {@code Command.Shell} line runs in. */
    static final String SHELL = "/bin/sh";

    /**
     * What the bootstrap exits with when it fails before the command starts. The exit code alone
     * proves nothing (a command may exit 125 too): only the marker line carrying the exec's own
     * nonce, which the command never sees, says the bootstrap failed.
     */
    static final int BOOTSTRAP_FAILED_EXIT = 125;

    /** Why the bootstrap failed: the word after the nonce on its marker line. */
    enum BootstrapFailure {
        PROCESS_LIMIT, MOUNT, WORKING_DIRECTORY_MISSING, WORKING_DIRECTORY_NOT_A_DIRECTORY, WORKING_DIRECTORY_UNENTERABLE
    }

    /**
     * Joins the process limit's group ($4, when not empty), mounts the storage ($1) over the work
     * base ($2), enters the working directory ($3), then replaces itself with the rest of its
     * arguments: the guest's argv, behind {@code setpriv} and its fixed flags when the guest drops
     * to an unprivileged user (the group join and the mount need root; nothing after them does).
     * Mount propagation is private (unshare's default), so the mount never reaches the host. A
     * failure before the command prints "$5 REASON" on stderr ($5 is the exec's nonce) and exits
     * {@value #BOOTSTRAP_FAILED_EXIT}; a dangling link as the working directory is missing, as
     * {@code chdir} says.
     */
    private static final String BOOTSTRAP = "nonce=$5\n"
            + "fail() { printf '%s %s\\n' \"$nonce\" \"$1\" >&2; exit " + BOOTSTRAP_FAILED_EXIT + "; }\n"
            + "if [ -n \"$4\" ]; then echo 0 > \"$4\" || fail PROCESS_LIMIT; fi\n"
            + "mount --bind \"$1\" \"$2\" || fail MOUNT\n"
            + "if ! cd -- \"$3\" 2>/dev/null; then\n"
            + "  if [ -d \"$3\" ]; then fail WORKING_DIRECTORY_UNENTERABLE\n"
            + "  elif [ -e \"$3\" ]; then fail WORKING_DIRECTORY_NOT_A_DIRECTORY\n"
            + "  else fail WORKING_DIRECTORY_MISSING; fi\n"
            + "fi\n"
            + "shift 5\n"
            + "exec \"$@\"\n";
    private static final String BOOTSTRAP_NAME = "sandbox4j";
    /** Runs its positional parameters as an argv, never as shell text. */
    private static final List<String> EXEC_ARGUMENTS = List.of(SHELL, "-c", "exec \"$@\"", "sh");
    private static final List<String> SYSTEM_BINARIES = List.of("/usr/bin", "/bin");

    private final String backendName;
    private final String workBase;
    private final Set<Flaw> flaws;
    private final String unshare;
    private final boolean needsUserNamespace;
    /** What the guest's argv runs behind: {@code setpriv}, its flags and a shell exec'ing the argv, or nothing. */
    private final List<String> privilegeDrop;

    /**
     * @param guestUser who the guest runs as, when it must drop from root; empty when it runs as
     *                  whoever {@code unshare} leaves it (the invoking user mapped in a user
     *                  namespace, or, with {@link Flaw#RUNS_AS_HOST_ROOT}, root itself)
     */
    NamespaceLauncher(String backendName, String workBase, Set<Flaw> flaws, Optional<GuestUser> guestUser) {
        this.backendName = Objects.requireNonNull(backendName, "backendName");
        this.workBase = Objects.requireNonNull(workBase, "workBase");
        this.flaws = Set.copyOf(flaws);
        this.unshare = Tools.UNSHARE.orElseThrow(() -> missing("unshare"));
        this.needsUserNamespace = !GuestUser.JVM_IS_ROOT;
        List<String> drop = new ArrayList<>();
        if (guestUser.isPresent()) {
            drop.add(Tools.SETPRIV.orElseThrow(() -> missing("setpriv")));
            drop.addAll(guestUser.get().setprivArguments());
            // setpriv reports a program it cannot execute in its own words; a guest shell exec'ing the
            // argv reports it as a shell does (127 not found, 126 not executable).
            drop.addAll(EXEC_ARGUMENTS);
        }
        this.privilegeDrop = List.copyOf(drop);
    }

    private SandboxException missing(String tool) {
        return new SandboxException("backend '" + backendName + "' needs " + tool + "(1) from util-linux, which is "
                + "not installed on this host: install util-linux");
    }

    /**
     * The host command that runs {@code guestArgv} in {@code workingDirectory} over {@code storage},
     * inside the process limit whose {@code cgroup.procs} is {@code processLimit} (when there is one);
     * {@code nonce} marks the bootstrap's own failure ({@link #bootstrapFailure}).
     */
    List<String> command(Path storage, Optional<Path> processLimit, String workingDirectory, String nonce,
            List<String> guestArgv) {
        List<String> command = new ArrayList<>();
        command.add(unshare);
        if (needsUserNamespace) {
            command.add("--user");
            command.add("--map-root-user");
        }
        command.add("--mount");
        if (!flaws.contains(Flaw.KILLS_ONLY_DIRECT_CHILD)) {
            // The guest's init dies with unshare, and the kernel then kills every process in the namespace.
            command.add("--pid");
            command.add("--fork");
            command.add("--kill-child");
            command.add("--mount-proc");
        }
        if (!flaws.contains(Flaw.SHARES_HOST_NETWORK)) {
            command.add("--net");
        }
        command.add("--");
        command.add(SHELL);
        command.add("-c");
        command.add(BOOTSTRAP);
        command.add(BOOTSTRAP_NAME);
        command.add(storage.toString());
        command.add(workBase);
        command.add(workingDirectory);
        command.add(processLimit.map(Path::toString).orElse(""));
        command.add(nonce);
        command.addAll(privilegeDrop);
        command.addAll(guestArgv);
        return command;
    }

    /** The guest's environment: cleared, then fixed, then the call's own (or the JVM's, with the flaw). */
    void environment(Map<String, String> processEnvironment, Map<String, String> callEnvironment) {
        if (!flaws.contains(Flaw.LEAKS_HOST_ENVIRONMENT)) {
            processEnvironment.clear();
        }
        Map<String, String> fixed = new LinkedHashMap<>();
        fixed.put("PATH", GUEST_PATH);
        fixed.put("HOME", workBase);
        fixed.put("LANG", GUEST_LANG);
        processEnvironment.putAll(fixed);
        processEnvironment.putAll(callEnvironment);
    }

    /** A fresh nonce for one exec: unguessable, so no command can print the bootstrap's marker. */
    static String nonce() {
        return "sandbox4j-bootstrap-" + UUID.randomUUID();
    }

    /**
     * Why the bootstrap failed before the command started, or empty when the command ran: only a
     * line that is exactly the nonce and a reason counts, and only with the bootstrap's exit code.
     */
    static Optional<BootstrapFailure> bootstrapFailure(ExecResult result, String nonce) {
        return bootstrapFailure(result.exitCode(), result.stderrText(), nonce);
    }

    /** {@link #bootstrapFailure(ExecResult, String)} from a launch's exit code and stderr. */
    static Optional<BootstrapFailure> bootstrapFailure(int exitCode, String stderr, String nonce) {
        if (exitCode != BOOTSTRAP_FAILED_EXIT) {
            return Optional.empty();
        }
        for (String line : stderr.split("\n", -1)) {
            if (line.startsWith(nonce + " ")) {
                String reason = line.substring(nonce.length() + 1);
                for (BootstrapFailure failure : BootstrapFailure.values()) {
                    if (failure.name().equals(reason)) {
                        return Optional.of(failure);
                    }
                }
            }
        }
        return Optional.empty();
    }

    String backendName() {
        return backendName;
    }

    /** What this host offers, looked up once. */
    private static final class Tools {
        static final Optional<String> UNSHARE = find("unshare");
        static final Optional<String> SETPRIV = find("setpriv");

        /** The first executable {@code name} in the system directories, then on the PATH. */
        private static Optional<String> find(String name) {
            List<String> directories = new ArrayList<>(SYSTEM_BINARIES);
            String path = System.getenv("PATH");
            if (path != null) {
                for (String directory : path.split(File.pathSeparator)) {
                    if (!directory.isEmpty()) {
                        directories.add(directory);
                    }
                }
            }
            return directories.stream().map(directory -> Path.of(directory, name))
                    .filter(Files::isExecutable).map(Path::toString).findFirst();
        }
    }
}
