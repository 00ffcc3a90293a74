package org.sandbox4j.agent;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Where the tests run a resident agent, as the backends will: a PID namespace of its own, a bubblewrap sandbox. */
final class ResidentLaunchers {

    /** A container's agent: no cgroup, so a kill also ends every process carrying the exec's marker. */
    static final List<String> MARKER_KILL_OPTIONS = List.of("--marker-kill");
    /** What a bubblewrap backend will pass: each exec its own namespaces, empty temporary directories, nobody. */
    static final List<String> EXEC_NAMESPACES_OPTIONS = List.of("--exec-namespaces", "--exec-tmpfs",
            "/tmp,/var/tmp,/dev/shm", "--exec-user", "65534:65534");
    /** The capabilities the agent keeps in bubblewrap's user namespace: what it needs to make the execs' namespaces. */
    static final String BWRAP_CAPABILITIES = "CAP_SYS_ADMIN,CAP_SETPCAP,CAP_SETUID,CAP_SETGID,CAP_SETFCAP";

    private ResidentLaunchers() {
    }

    /** A fresh PID namespace with its own /proc: the agent is its PID 1 (as with {@code docker run --init}, minus the init). */
    static List<String> pidNamespace() {
        requireTool("unshare");
        return List.of("unshare", "--pid", "--fork", "--mount-proc");
    }

    /**
     * A bubblewrap sandbox as a backend would make one: every namespace new, uid 0 with the
     * capabilities the agent needs inside bubblewrap's user namespace, the host's tree read-only but
     * {@code writable}, fresh /proc, /dev, /tmp and /var/tmp.
     */
    static List<String> bubblewrap(Path writable) {
        requireTool("bwrap");
        List<String> argv = new ArrayList<>(List.of("bwrap", "--unshare-all", "--uid", "0", "--gid", "0",
                "--cap-add", BWRAP_CAPABILITIES, "--die-with-parent", "--ro-bind", "/", "/", "--proc", "/proc",
                "--dev", "/dev", "--tmpfs", "/tmp", "--tmpfs", "/var/tmp"));
        argv.addAll(List.of("--bind", writable.toString(), writable.toString()));
        return argv;
    }

    /** A directory outside /tmp and /var/tmp (each exec gets empty ones of those), under the build's own. */
    static Path workRoot(String prefix) throws java.io.IOException {
        Path target = Path.of("target").toAbsolutePath();
        Files.createDirectories(target);
        return Files.createTempDirectory(target, prefix);
    }

    private static void requireTool(String name) {
        boolean found = false;
        for (String directory : List.of("/usr/bin", "/bin", "/usr/sbin", "/sbin", "/usr/local/bin")) {
            found |= Files.isExecutable(Path.of(directory, name));
        }
        assumeTrue(found, name + " is not installed: these tests run the agent under it");
    }
}
