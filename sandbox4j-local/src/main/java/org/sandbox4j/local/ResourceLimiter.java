package org.sandbox4j.local;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.sandbox4j.core.spi.ErrorDetail;
import org.sandbox4j.core.spi.PassedHostChecks;

/**
 * Puts each sandbox in its own control group (v2, or v1 with a v2 {@code cgroup.kill} beside it
 * where mounted), or, where no cgroup is writable, bounds each launch with rlimits. One limiter
 * serves one backend; groups are named after the backend's state root, so two builds on one
 * machine never share (or kill) each other's groups.
 *
 * <p>Processes join the group before they run anything: a launch starts with a fixed
 * {@code sh} script that writes its own pid into each {@code cgroup.procs} file and then
 * {@code exec}s the launcher, so nothing a guest forks is ever outside the group.
 *
 * <p>Rlimits are set inside a user namespace of the launch's own ({@code unshare --user}, then
 * {@code prlimit}): the kernel counts RLIMIT_NPROC per user namespace and checks each level
 * against the limit its creator had, so the bound covers that launch alone while the user's
 * other tasks (this JVM's threads, other sandboxes, exited tasks not yet reaped) count only
 * against the user's own limit. Set outside, on the launcher, RLIMIT_NPROC counted all of those.
 *
 * <p>A backend whose launcher exits before what it started ({@code bwrap} returns as soon as its
 * command does, leaving the sandbox's own pid 1 to be reaped by the host's init) asks for a PID
 * namespace per launch as well ({@code --pid --fork --kill-child}): the launcher is then that
 * namespace's init, and when it exits the kernel ends and reaps everything below it, so nothing is
 * left for a slow host init (or a JVM running as PID 1) to reap, and nothing stays charged to the
 * user's count or the sandbox's group meanwhile.
 */
final class ResourceLimiter {

    private static final System.Logger LOG = System.getLogger(ResourceLimiter.class.getName());

    /** Joins each group named by the count and files that follow, then runs the rest. Fixed text. */
    static final String JOIN_GROUPS = String.join("\n",
            "n=$1; shift",
            "while [ \"$n\" -gt 0 ]; do",
            "  printf '%s\\n' \"$$\" > \"$1\" || { echo \"sandbox4j: cannot join the sandbox's control group\" >&2; exit 125; }",
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

    private static final List<String> USER_NAMESPACE = List.of("--user", "--map-current-user");
    private static final List<String> PID_NAMESPACE = List.of("--pid", "--fork", "--kill-child");
    private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(30);

    private final LimitMechanism mechanism;
    private final LocalLimits limits;
    /** Controller name → the directory our groups go in (v1), or "" → the v2 parent. */
    private final Map<String, Path> parents;
    /** The v2 parent used only for cgroup.kill beside v1 controllers; empty when absent. */
    private final Optional<Path> killParent;
    private final String prlimit;
    /**
     * {@code unshare}, its flags and {@code --}: the namespaces a launch gets when it does not
     * enter a keeper (an os_process exec, the backend's own checks); empty for none.
     */
    private final List<String> namespaces;
    /**
     * The same for a launch inside its sandbox's keeper, which is root of the keeper's user
     * namespace there (or root itself) and so needs no user namespace of its own for a PID one.
     */
    private final List<String> insideKeeper;
    /** Why a namespace the mechanism wanted could not be had; empty when none was missed. */
    private final Optional<String> namespaceProblem;
    private final HostUser user;

    private ResourceLimiter(LimitMechanism mechanism, LocalLimits limits, Map<String, Path> parents,
            Optional<Path> killParent, Programs programs, Namespaces namespaces, HostUser user) {
        this.mechanism = mechanism;
        this.limits = limits;
        this.parents = Map.copyOf(parents);
        this.killParent = killParent;
        this.prlimit = programs.prlimit();
        this.namespaces = namespaces.words();
        this.namespaceProblem = namespaces.problem();
        this.insideKeeper = namespaces.words().contains(PID_NAMESPACE.get(0))
                ? concat(List.of(programs.unshare()), concat(PID_NAMESPACE, List.of("--"))) : List.of();
        this.user = user;
    }

    /** The host programs a launch prefix names. */
    record Programs(String prlimit, String unshare, String nsenter) {

        /** prlimit, unshare and nsenter (util-linux) from PATH, or their bare names (a launch then says what is missing). */
        static Programs fromPath() {
            return new Programs(find("prlimit"), find("unshare"), find("nsenter"));
        }

        private static String find(String name) {
            return HostPrograms.find(name).map(Path::toString).orElse(name);
        }
    }

    /** How a backend's launches are laid out, which decides what the process bound can count. */
    enum Launches {
        /** Each launch on its own (os_process): a process bound counts one exec. */
        ALONE,
        /**
         * Each launch enters its sandbox's keeper ({@link WorkspaceKeeper}: a user namespace shared
         * by every exec of the sandbox and nothing else) and gets a PID namespace of its own that
         * reaps what it leaves: a process bound counts the whole sandbox.
         */
        IN_A_KEEPER
    }

    /**
     * The strongest mechanism this host lets us use under {@code cgroupRoot}: a v2 hierarchy with
     * the memory, pids and cpu controllers, then writable v1 controllers, then rlimits (counted in
     * a user namespace of each launch's own where this user can make one).
     *
     * @param launches how the backend lays its launches out: alone, or inside a sandbox's keeper with
     *                 a PID namespace of their own that ends and reaps everything they started (for a
     *                 launcher that exits before its children)
     * @param checks   where passes of the namespace check are remembered
     */
    static ResourceLimiter detect(Path cgroupRoot, LocalLimits limits, Programs programs, Launches launches,
            PassedHostChecks checks) {
        boolean reapInPidNamespace = launches == Launches.IN_A_KEEPER;
        HostUser user = HostUser.current();
        Optional<Path> v2 = v2Parent(cgroupRoot);
        if (v2.isPresent()) {
            return new ResourceLimiter(LimitMechanism.CGROUP_V2, limits, Map.of("", v2.get()), Optional.empty(),
                    programs, Namespaces.probe(programs, user, false, reapInPidNamespace, checks), user);
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
            return new ResourceLimiter(LimitMechanism.CGROUP_V1, limits, v1, kill, programs,
                    Namespaces.probe(programs, user, false, reapInPidNamespace, checks), user);
        }
        Namespaces namespaces = Namespaces.probe(programs, user, !user.isRoot(), reapInPidNamespace, checks);
        LimitMechanism mechanism = user.isRoot() ? LimitMechanism.RLIMIT_DATA_ONLY
                : !namespaces.words().contains(USER_NAMESPACE.get(0)) ? LimitMechanism.RLIMIT_PER_USER
                : launches == Launches.IN_A_KEEPER ? LimitMechanism.RLIMIT : LimitMechanism.RLIMIT_PER_EXEC;
        return new ResourceLimiter(mechanism, limits, Map.of(), Optional.empty(), programs, namespaces, user);
    }

    /**
     * The namespaces a launch gets from {@code unshare}: a user namespace where its rlimits are
     * counted apart (not for root, whom RLIMIT_NPROC does not bind), a PID namespace that reaps
     * what it leaves. Probed once by running {@code true} under them; what the host refuses is
     * dropped and said.
     */
    private record Namespaces(List<String> words, Optional<String> problem) {

        static Namespaces probe(Programs programs, HostUser user, boolean countApart, boolean reap,
                PassedHostChecks checks) {
            List<String> flags = new ArrayList<>();
            if (!user.isRoot() && (countApart || reap)) {
                // A PID namespace needs CAP_SYS_ADMIN, which a user has only in a user namespace of its own.
                flags.addAll(USER_NAMESPACE);
            }
            if (reap) {
                flags.addAll(PID_NAMESPACE);
            }
            if (flags.isEmpty()) {
                return new Namespaces(List.of(), Optional.empty());
            }
            List<String> words = new ArrayList<>();
            words.add(programs.unshare());
            words.addAll(flags);
            words.add("--");
            List<String> probe = new ArrayList<>(words);
            probe.add("true");
            Optional<String> refused = checks.passed(probe) ? Optional.empty() : refusal(probe);
            if (refused.isEmpty()) {
                checks.remember(probe);
                return new Namespaces(List.copyOf(words), Optional.empty());
            }
            LOG.log(System.Logger.Level.INFO, () -> "no namespaces per launch (" + String.join(" ", flags) + "): "
                    + refused.get());
            return new Namespaces(List.of(), Optional.of("unshare " + String.join(" ", flags) + " failed here ("
                    + refused.get() + ")"));
        }

        /** Empty when {@code argv} ran and exited 0; else what went wrong, in one line. */
        private static Optional<String> refusal(List<String> argv) {
            try {
                Process process = new ProcessBuilder(argv).redirectErrorStream(true)
                        .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
                byte[] said = process.getInputStream().readNBytes(4096);
                if (!process.waitFor(PROBE_TIMEOUT.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS)) {
                    process.destroyForcibly();
                    return Optional.of("no answer within " + PROBE_TIMEOUT.toSeconds() + " s");
                }
                String text = new String(said, StandardCharsets.UTF_8).strip().replace('\n', ' ');
                return process.exitValue() == 0 ? Optional.empty()
                        : Optional.of("exit " + process.exitValue() + (text.isEmpty() ? "" : ": " + text));
            } catch (IOException e) {
                return Optional.of(ErrorDetail.of(e));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return Optional.of("interrupted");
            }
        }
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

    /** One line for diagnostics: the mechanism, the limits, where the groups live, and each launch's namespaces. */
    String describe() {
        String where = parents.isEmpty() ? "" : " under " + parents.values();
        String kill = killParent.map(path -> "; cgroup.kill from " + path).orElse("");
        String launch = !insideKeeper.isEmpty() ? "; each exec enters its sandbox's keeper (the namespaces holding "
                + "its workspace's tmpfs) and gets a PID namespace of its own that reaps what it leaves"
                : namespaces.isEmpty() ? "" : "; each exec starts in " + namespaceNames();
        String problem = namespaceProblem.map(why -> "; " + why).orElse("");
        return mechanism.description() + " (memory " + limits.memoryBytes() + " bytes, " + limits.maxProcesses()
                + " processes, " + limits.cpus() + " CPUs)" + where + kill + launch + problem;
    }

    private String namespaceNames() {
        boolean userNamespace = namespaces.contains(USER_NAMESPACE.get(0));
        boolean pidNamespace = namespaces.contains(PID_NAMESPACE.get(0));
        return (userNamespace ? "a user namespace" : "") + (userNamespace && pidNamespace ? " and " : "")
                + (pidNamespace ? "a PID namespace that reaps what it leaves" : "") + " of its own";
    }

    /**
     * Just the namespaces of a launch, without its limits: for the backend's own short checks,
     * which should leave nothing behind either.
     */
    List<String> containmentPrefix() {
        return namespaces;
    }

    /**
     * Makes (or finds) the group for {@code group} and returns the words that launch a command
     * inside it: put them in front of the launcher's own argv.
     *
     * @param enterKeeper the words that enter the sandbox's keeper ({@link WorkspaceKeeper#enterWords});
     *                    empty for a backend whose launches stand alone
     */
    List<String> launchPrefix(String group, List<String> enterKeeper) {
        // RLIMIT_DATA, not RLIMIT_AS: a JVM reserves far more address space than it ever touches.
        String data = "--data=" + limits.memoryBytes() + ":" + limits.memoryBytes();
        switch (mechanism) {
            case RLIMIT -> {
                // Set inside the keeper's user namespace, before the launch's own: the kernel then holds the
                // keeper's namespace (every exec of this sandbox, nothing else) to the bound.
                return concat(concat(enterKeeper, List.of(prlimit, nproc(limits.maxProcesses()), data, "--")),
                        insideKeeper);
            }
            case RLIMIT_PER_EXEC -> {
                return concat(namespaces, List.of(prlimit, nproc(limits.maxProcesses()), data, "--"));
            }
            case RLIMIT_PER_USER -> {
                // The kernel can only count the whole user: allow this launch the bound on top of what runs now.
                long bound = Math.addExact(user.tasks(), limits.maxProcesses());
                long allowed = Math.min(bound, HostUser.processHardLimit().orElse(bound));
                return concat(namespaces, List.of(prlimit, nproc(allowed), data, "--"));
            }
            case RLIMIT_DATA_ONLY -> {
                return concat(concat(enterKeeper, List.of(prlimit, data, "--")),
                        enterKeeper.isEmpty() ? namespaces : insideKeeper);
            }
            default -> {
                return concat(concat(joinGroups(group), enterKeeper), enterKeeper.isEmpty() ? namespaces : insideKeeper);
            }
        }
    }

    private static String nproc(long processes) {
        return "--nproc=" + processes + ":" + processes;
    }

    private static List<String> concat(List<String> first, List<String> second) {
        List<String> all = new ArrayList<>(first);
        all.addAll(second);
        return List.copyOf(all);
    }

    /** The join script and the procs files of the sandbox's groups, made first if missing. */
    private List<String> joinGroups(String group) {
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
        return List.copyOf(prefix);
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
     * Kills everything still running in {@code groups} and removes them; best effort, never throws.
     * {@code cgroup.kill} takes double-forked children too; without it, members are killed by pid
     * until the group is empty. Every group is killed first and then all are waited for together
     * (killed members stay in their group until reaped, and a killed owner's orphans are reaped by
     * the host's init in its own time), so the wait is one, however many groups.
     */
    void release(Collection<String> groups) {
        List<Path> remaining = new ArrayList<>();
        for (String group : groups) {
            for (Path parent : allParents()) {
                Path dir = parent.resolve(group);
                if (Files.isDirectory(dir)) {
                    killMembers(dir);
                    remaining.add(dir);
                }
            }
        }
        long deadline = System.nanoTime() + REMOVAL_PATIENCE.toNanos();
        while (!remaining.isEmpty()) {
            for (java.util.Iterator<Path> each = remaining.iterator(); each.hasNext(); ) {
                Path dir = each.next();
                try {
                    // A cgroup directory is removed with rmdir even though it seems to hold files.
                    Files.delete(dir);
                    each.remove();
                } catch (java.nio.file.NoSuchFileException gone) {
                    each.remove();
                } catch (IOException busy) {
                    killMembers(dir);
                }
            }
            if (remaining.isEmpty()) {
                return;
            }
            if (System.nanoTime() > deadline) {
                LOG.log(System.Logger.Level.WARNING, () -> "sandbox control groups still busy were left behind (the "
                        + "reaper tries again): " + remaining);
                return;
            }
            sleep(REMOVAL_RETRY);
        }
    }

    /** {@link #release(Collection)} of one group. */
    void release(String group) {
        release(List.of(group));
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
