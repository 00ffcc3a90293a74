package org.sandbox4j.testkit.tck.reference;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
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

    /** What the bootstrap exits with when the working directory is missing. */
    static final int MISSING_WORKING_DIRECTORY_EXIT = 126;
    /** What the bootstrap exits with when the storage cannot be mounted. */
    static final int MOUNT_FAILED_EXIT = 125;

    /**
     * Mounts the storage ($1) over the work base ($2), enters the working directory ($3), then
     * replaces itself with the guest's argv. Mount propagation is private (unshare's default), so
     * the mount never reaches the host.
     */
    private static final String BOOTSTRAP = "mount --bind \"$1\" \"$2\" || exit " + MOUNT_FAILED_EXIT + "\n"
            + "cd -- \"$3\" 2>/dev/null || {\n"
            + "  printf 'sandbox4j: the working directory %s does not exist in the guest or is not a directory\\n' \"$3\" >&2\n"
            + "  exit " + MISSING_WORKING_DIRECTORY_EXIT + "\n"
            + "}\n"
            + "shift 3\n"
            + "exec \"$@\"\n";
    private static final String BOOTSTRAP_NAME = "sandbox4j";
    private static final List<String> UNSHARE_LOCATIONS = List.of("/usr/bin/unshare", "/bin/unshare");
    private static final int ROOT_UID = 0;

    private final String backendName;
    private final String workBase;
    private final Set<Flaw> flaws;
    private final String unshare;
    private final boolean needsUserNamespace;

    NamespaceLauncher(String backendName, String workBase, Set<Flaw> flaws) {
        this.backendName = Objects.requireNonNull(backendName, "backendName");
        this.workBase = Objects.requireNonNull(workBase, "workBase");
        this.flaws = Set.copyOf(flaws);
        this.unshare = Tools.UNSHARE.orElseThrow(() -> new SandboxException("backend '" + backendName + "' needs "
                + "unshare(1) from util-linux, which is not installed on this host: install util-linux"));
        this.needsUserNamespace = !Tools.RUNNING_AS_ROOT;
    }

    /** The host command that runs {@code guestArgv} in {@code workingDirectory} over {@code storage}. */
    List<String> command(Path storage, String workingDirectory, List<String> guestArgv) {
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

    String backendName() {
        return backendName;
    }

    /** What this host offers, looked up once. */
    private static final class Tools {
        static final Optional<String> UNSHARE = findUnshare();
        static final boolean RUNNING_AS_ROOT = runningAsRoot();

        private static Optional<String> findUnshare() {
            List<String> candidates = new ArrayList<>(UNSHARE_LOCATIONS);
            String path = System.getenv("PATH");
            if (path != null) {
                for (String directory : path.split(File.pathSeparator)) {
                    if (!directory.isEmpty()) {
                        candidates.add(Path.of(directory, "unshare").toString());
                    }
                }
            }
            return candidates.stream().filter(candidate -> Files.isExecutable(Path.of(candidate))).findFirst();
        }

        private static boolean runningAsRoot() {
            try {
                // /proc/self belongs to this process's effective uid.
                return ((Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid")) == ROOT_UID;
            } catch (IOException | UnsupportedOperationException e) {
                return false;
            }
        }
    }
}
