package org.sandbox4j.testkit.tck.reference;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

/**
 * A per-sandbox cgroup v1 {@code pids} limit, where this host lets us make one (root, the v1
 * controller mounted). It is a safety net for the machine, not a declared limit: a fork bomb run
 * against a lying instance must not take the host down. Without it the guest is unbounded.
 */
final class ProcessLimit {

    /** How many processes one sandbox may hold at once. */
    static final int MAX_PROCESSES = 512;

    private static final System.Logger LOG = System.getLogger(ProcessLimit.class.getName());
    private static final Path PIDS_CONTROLLER = Path.of("/sys/fs/cgroup/pids");
    private static final String PREFIX = "sandbox4j-namespace-shell-";
    private static final String PROCS = "cgroup.procs";
    private static final String MAX = "pids.max";
    /** Killed guests can linger as zombies for a moment on this host, keeping the group busy. */
    private static final Duration REMOVAL_PATIENCE = Duration.ofSeconds(5);
    private static final Duration REMOVAL_RETRY = Duration.ofMillis(100);

    private ProcessLimit() {
    }

    /** Whether this host gives us a writable pids controller to make groups in. */
    static boolean available() {
        return Files.isWritable(PIDS_CONTROLLER);
    }

    /**
     * The {@code cgroup.procs} file of the sandbox's group, created if needed; empty when this host
     * gives us no writable pids controller.
     */
    static Optional<Path> procsFileFor(String groupName) {
        if (!available()) {
            return Optional.empty();
        }
        Path group = PIDS_CONTROLLER.resolve(PREFIX + groupName);
        try {
            Files.createDirectories(group);
            Files.writeString(group.resolve(MAX), Integer.toString(MAX_PROCESSES), StandardCharsets.US_ASCII);
            return Optional.of(group.resolve(PROCS));
        } catch (IOException e) {
            LOG.log(System.Logger.Level.WARNING, () -> "no process limit for a namespace-shell sandbox: " + e);
            return Optional.empty();
        }
    }

    /**
     * Kills whatever still runs in the sandbox's group (as removing a container would), then
     * removes the group once the kernel has let go of it; best effort.
     */
    static void remove(String groupName) {
        Path group = PIDS_CONTROLLER.resolve(PREFIX + groupName);
        long deadline = System.nanoTime() + REMOVAL_PATIENCE.toNanos();
        while (Files.isDirectory(group)) {
            killMembers(group);
            try {
                // A cgroup directory is removed with rmdir even though it seems to hold files.
                Files.delete(group);
                return;
            } catch (IOException e) {
                if (System.nanoTime() > deadline) {
                    LOG.log(System.Logger.Level.WARNING, () -> "a namespace-shell process group is still busy and "
                            + "was left behind: " + group);
                    return;
                }
                try {
                    Thread.sleep(REMOVAL_RETRY.toMillis());
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    private static void killMembers(Path group) {
        try {
            for (String pid : Files.readAllLines(group.resolve(PROCS), StandardCharsets.US_ASCII)) {
                if (!pid.isBlank()) {
                    ProcessHandle.of(Long.parseLong(pid.strip())).ifPresent(ProcessHandle::destroyForcibly);
                }
            }
        } catch (IOException | NumberFormatException e) {
            LOG.log(System.Logger.Level.DEBUG, () -> "could not list a process group's members: " + e);
        }
    }
}
