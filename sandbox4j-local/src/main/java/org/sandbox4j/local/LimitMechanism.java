package org.sandbox4j.local;

/**
 * How a local backend enforces {@link LocalLimits} on this host, and exactly what each bound
 * covers; {@code diagnostics()} and {@code doctor} report it.
 */
public enum LimitMechanism {

    /** A cgroup v2 group per sandbox: memory.max, pids.max, cpu.max, and cgroup.kill. */
    CGROUP_V2("cgroup v2: memory.max, pids.max and cpu.max bound the whole sandbox (every exec of it together); "
            + "cgroup.kill ends it"),
    /** cgroup v1 groups per sandbox (memory, pids, cpu), with cgroup.kill from a v2 hierarchy where mounted. */
    CGROUP_V1("cgroup v1: memory.limit_in_bytes, pids.max and cpu.cfs_quota_us bound the whole sandbox (every exec "
            + "of it together)"),
    /**
     * No writable cgroup: every exec of a sandbox runs in the sandbox's own user namespace (its
     * workspace keeper's), where its rlimits are set. The kernel counts RLIMIT_NPROC per user
     * namespace, so the bound covers the whole sandbox, whatever else this user runs.
     */
    RLIMIT("rlimits in the sandbox's own user namespace: RLIMIT_NPROC bounds the processes and threads of the whole "
            + "sandbox (every exec of it together; the kernel counts that namespace alone, whatever else this user "
            + "runs), RLIMIT_DATA the data size of each process; the CPU share is not enforced because no cgroup is "
            + "writable"),
    /**
     * No writable cgroup, and execs that stand alone (an os_process backend): each launch runs in
     * a user namespace of its own, so the bound covers one exec's processes and threads.
     */
    RLIMIT_PER_EXEC("rlimits in a user namespace of each exec's own: RLIMIT_NPROC bounds the processes and threads "
            + "one exec runs at once (the kernel counts that namespace alone, whatever else this user runs; execs "
            + "running at the same time each get the bound), RLIMIT_DATA the data size of each process; the CPU "
            + "share is not enforced because no cgroup is writable"),
    /**
     * No writable cgroup and no user namespace for this user: RLIMIT_NPROC can only count every
     * task of the user, so each launch is given the bound on top of the user's count at launch.
     */
    RLIMIT_PER_USER("rlimits without a user namespace (this user cannot make one): RLIMIT_NPROC counts every task "
            + "of this user, so each exec may add the bound to the user's count at its launch (a fork bomb stops "
            + "there, but sandboxes share the count with each other and the user's other programs), RLIMIT_DATA "
            + "bounds each process; the CPU share is not enforced because no cgroup is writable"),
    /** Root with no writable cgroup: the kernel exempts root from RLIMIT_NPROC, so processes go unbounded. */
    RLIMIT_DATA_ONLY("rlimits as root with no writable cgroup: RLIMIT_DATA bounds each process, but the number of "
            + "processes is NOT bounded (the kernel exempts root from RLIMIT_NPROC) and the CPU share is not "
            + "enforced; run the JVM as another user, or where a cgroup is writable");

    private final String description;

    LimitMechanism(String description) {
        this.description = description;
    }

    /**
     * Whether a guest's processes are bounded at all: not as root without a writable cgroup, which
     * the kernel exempts from RLIMIT_NPROC, so a fork bomb there could exhaust the host.
     */
    public boolean boundsProcesses() {
        return this != RLIMIT_DATA_ONLY;
    }

    /** One line saying what bounds a sandbox under this mechanism, and what it does not. */
    public String description() {
        return description;
    }
}
