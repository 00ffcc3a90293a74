package org.sandbox4j.local;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.sandbox4j.core.ErrorDetail;

/**
 * Puts each sandbox in its own control group (v2, or v1 with a v2 {@code cgroup.kill} beside it
 * where mounted), or, where no cgroup is writable, bounds each launch with rlimits. One limiter
 * serves one backend; groups are named after the backend's state root, so two builds on one
 * machine never share (or kill) each other's groups.
 *
 * <p>Processes join the group before they run anything: a launch starts with a fixed
 * {@code sh} script that writes its own pid into each {@code cgroup.procs} file and then
 * {@code exec}s the launcher, so nothing a guest forks is ever outside the group.
 */
final class ResourceLimiter {

    private static final System.Logger LOG = System.getLogger(ResourceLimiter.class.getName());

    /** Joins each group named by the count and files that follow, then runs the rest. Fixed text. */
    static final String JOIN_GROUPS = String.join("\n",
            "n=$1; shift",
            "while [ \"$n\" -gt 0 ]; do",
            "  printf '%s\\n' \"$$\" > \"$1\" || { echo \"sandbox4j: cannot join the control group $1\" >&2; exit 125; }",
            "  shift; n=$((n-1))",
            "done",
            "exec \"$@\"");
    private static final String JOIN_NAME = "sandbox4j-limits";
    private static final String PARENT = "sandbox4j";
    private static final String PROCS = "cgroup.procs";
    private static final String KILL = "cgroup.kill";
    private static final long CPU_PERIOD_MICROS = 100_000;
    /** Killed guests can linger as zombies for a moment on some hosts, keeping the group busy. */
    private static final Duration REMOVAL_PATIENCE = Duration.ofSeconds(5);
    private static final Duration REMOVAL_RETRY = Duration.ofMillis(50);
    private static final long KIB = 1024;

    private final LimitMechanism mechanism;
    private final LocalLimits limits;
    /** Controller name → the directory our groups go in (v1), or "" → the v2 parent. */
    private final Map<String, Path> parents;
    /** The v2 parent used only for cgroup.kill beside v1 controllers; empty when absent. */
    private final Optional<Path> killParent;
    private final String prlimit;

    private ResourceLimiter(LimitMechanism mechanism, LocalLimits limits, Map<String, Path> parents,
            Optional<Path> killParent, String prlimit) {
        this.mechanism = mechanism;
        this.limits = limits;
        this.parents = Map.copyOf(parents);
        this.killParent = killParent;
        this.prlimit = prlimit;
    }

    /**
     * The strongest mechanism this host lets us use under {@code cgroupRoot}: a v2 hierarchy with
     * the memory, pids and cpu controllers, then writable v1 controllers, then rlimits.
     */
    static ResourceLimiter detect(Path cgroupRoot, LocalLimits limits, String prlimit) {
        Optional<Path> v2 = v2Parent(cgroupRoot);
        if (v2.isPresent()) {
            return new ResourceLimiter(LimitMechanism.CGROUP_V2, limits, Map.of("", v2.get()), Optional.empty(),
                    prlimit);
        }
        Map<String, Path> v1 = new LinkedHashMap<>();
        for (String controller : List.of("memory", "pids", "cpu")) {
            Path parent = cgroupRoot.resolve(controller).resolve(PARENT);
            if (!makeParent(cgroupRoot.resolve(controller), parent)) {
                v1.clear();
                break;
            }
            v1.put(controller, parent);
        }
        if (!v1.isEmpty()) {
            Path unified = cgroupRoot.resolve("unified");
            Optional<Path> kill = makeParent(unified, unified.resolve(PARENT))
                    ? Optional.of(unified.resolve(PARENT)) : Optional.empty();
            return new ResourceLimiter(LimitMechanism.CGROUP_V1, limits, v1, kill, prlimit);
        }
        return new ResourceLimiter(LimitMechanism.RLIMIT, limits, Map.of(), Optional.empty(), prlimit);
    }

    private static Optional<Path> v2Parent(Path cgroupRoot) {
        Path controllers = cgroupRoot.resolve("cgroup.controllers");
        try {
            if (!Files.isRegularFile(controllers)) {
                return Optional.empty();
            }
            List<String> available = List.of(Files.readString(controllers).trim().split("\\s+"));
            if (!available.containsAll(List.of("memory", "pids", "cpu"))) {
                return Optional.empty();
            }
            Path parent = cgroupRoot.resolve(PARENT);
            if (!makeParent(cgroupRoot, parent)) {
                return Optional.empty();
            }
            // Controllers reach a group only when every ancestor hands them down.
            write(cgroupRoot.resolve("cgroup.subtree_control"), "+memory +pids +cpu");
            write(parent.resolve("cgroup.subtree_control"), "+memory +pids +cpu");
            return Optional.of(parent);
        } catch (IOException e) {
            LOG.log(System.Logger.Level.DEBUG, () -> "no usable cgroup v2 hierarchy under " + cgroupRoot + ": "
                    + ErrorDetail.of(e));
            return Optional.empty();
        }
    }

    private static boolean makeParent(Path controller, Path parent) {
        if (!Files.isDirectory(controller) || !Files.isWritable(controller)) {
            return false;
        }
        try {
            Files.createDirectories(parent);
            return Files.isWritable(parent.resolve(PROCS));
        } catch (IOException e) {
            return false;
        }
    }

    LimitMechanism mechanism() {
        return mechanism;
    }

    LocalLimits limits() {
        return limits;
    }

    /** One line for diagnostics: the mechanism, the limits, and where the groups live. */
    String describe() {
        String where = parents.isEmpty() ? "" : " under " + parents.values();
        String kill = killParent.map(path -> "; cgroup.kill from " + path).orElse("");
        return mechanism.description() + " (memory " + limits.memoryBytes() + " bytes, " + limits.maxProcesses()
                + " processes, " + limits.cpus() + " CPUs)" + where + kill;
    }

    /**
     * Makes (or finds) the group for {@code group} and returns the words that launch a command
     * inside it: put them in front of the launcher's own argv.
     */
    List<String> launchPrefix(String group) {
        if (mechanism == LimitMechanism.RLIMIT) {
            // RLIMIT_DATA, not RLIMIT_AS: a JVM reserves far more address space than it ever touches.
            return List.of(prlimit, "--nproc=" + limits.maxProcesses() + ":" + limits.maxProcesses(),
                    "--data=" + limits.memoryBytes() + ":" + limits.memoryBytes(), "--");
        }
        List<Path> procs = new ArrayList<>();
        for (Map.Entry<String, Path> controller : parents.entrySet()) {
            Path dir = controller.getValue().resolve(group);
            ensureGroup(controller.getKey(), dir);
            procs.add(dir.resolve(PROCS));
        }
        killParent.ifPresent(parent -> {
            Path dir = parent.resolve(group);
            ensureGroup("unified", dir);
            procs.add(dir.resolve(PROCS));
        });
        List<String> prefix = new ArrayList<>(List.of("/bin/sh", "-c", JOIN_GROUPS, JOIN_NAME,
                Integer.toString(procs.size())));
        procs.forEach(path -> prefix.add(path.toString()));
        return prefix;
    }

    private void ensureGroup(String controller, Path dir) {
        if (Files.isDirectory(dir)) {
            return;
        }
        try {
            Files.createDirectories(dir);
            switch (controller) {
                case "" -> {
                    write(dir.resolve("memory.max"), Long.toString(limits.memoryBytes()));
                    write(dir.resolve("pids.max"), Integer.toString(limits.maxProcesses()));
                    write(dir.resolve("cpu.max"), quotaMicros() + " " + CPU_PERIOD_MICROS);
                }
                case "memory" -> write(dir.resolve("memory.limit_in_bytes"), Long.toString(limits.memoryBytes()));
                case "pids" -> write(dir.resolve("pids.max"), Integer.toString(limits.maxProcesses()));
                case "cpu" -> {
                    write(dir.resolve("cpu.cfs_period_us"), Long.toString(CPU_PERIOD_MICROS));
                    write(dir.resolve("cpu.cfs_quota_us"), Long.toString(quotaMicros()));
                }
                default -> {
                    // The v2 group beside v1 controllers exists only for cgroup.kill.
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException("could not make the control group " + dir + " for a sandbox (" + mechanism
                    + "): " + ErrorDetail.of(e) + "; check that " + dir.getParent() + " is writable", e);
        }
    }

    private long quotaMicros() {
        return Math.max(1000, Math.round(limits.cpus() * CPU_PERIOD_MICROS));
    }

    /**
     * Kills everything still running in {@code group} and removes it; best effort, never throws.
     * {@code cgroup.kill} takes double-forked children too; without it, members are killed by pid
     * until the group is empty.
     */
    void release(String group) {
        for (Path parent : allParents()) {
            Path dir = parent.resolve(group);
            long deadline = System.nanoTime() + REMOVAL_PATIENCE.toNanos();
            while (Files.isDirectory(dir)) {
                killMembers(dir);
                try {
                    // A cgroup directory is removed with rmdir even though it seems to hold files.
                    Files.delete(dir);
                } catch (IOException busy) {
                    if (System.nanoTime() > deadline) {
                        LOG.log(System.Logger.Level.WARNING, () -> "a sandbox's control group is still busy and was "
                                + "left behind: " + dir);
                        break;
                    }
                    sleep(REMOVAL_RETRY);
                }
            }
        }
    }

    /** Every group of this limiter that exists on the host, by name (for the reaper). */
    List<String> existingGroups() {
        List<String> names = new ArrayList<>();
        for (Path parent : allParents()) {
            try (var children = Files.list(parent)) {
                children.filter(Files::isDirectory).map(path -> path.getFileName().toString())
                        .filter(name -> !names.contains(name)).forEach(names::add);
            } catch (IOException e) {
                LOG.log(System.Logger.Level.DEBUG, () -> "could not list " + parent + ": " + ErrorDetail.of(e));
            }
        }
        return names;
    }

    private List<Path> allParents() {
        // The v2 group first: its cgroup.kill ends every member at once, double-forked ones included.
        List<Path> all = new ArrayList<>();
        killParent.ifPresent(all::add);
        all.addAll(parents.values());
        return all;
    }

    private static void killMembers(Path dir) {
        Path kill = dir.resolve(KILL);
        if (Files.exists(kill)) {
            try {
                write(kill, "1");
                return;
            } catch (IOException e) {
                LOG.log(System.Logger.Level.DEBUG, () -> "cgroup.kill failed in " + dir + ": " + ErrorDetail.of(e));
            }
        }
        try {
            for (String pid : Files.readAllLines(dir.resolve(PROCS), StandardCharsets.US_ASCII)) {
                if (!pid.isBlank()) {
                    ProcessHandle.of(Long.parseLong(pid.strip())).ifPresent(ProcessHandle::destroyForcibly);
                }
            }
        } catch (IOException | NumberFormatException e) {
            LOG.log(System.Logger.Level.DEBUG, () -> "could not list the members of " + dir + ": " + e);
        }
    }

    private static void write(Path file, String value) throws IOException {
        Files.writeString(file, value, StandardCharsets.US_ASCII);
    }

    private static void sleep(Duration pause) {
        try {
            Thread.sleep(pause.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String toString() {
        return mechanism.name().toLowerCase(Locale.ROOT);
    }
}
