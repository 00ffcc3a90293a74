package org.sandbox4j.local;

/** How a local backend enforces {@link LocalLimits} on this host; {@code doctor} reports it. */
public enum LimitMechanism {

    /** A cgroup v2 group per sandbox: memory.max, pids.max, cpu.max, and cgroup.kill. */
    CGROUP_V2("cgroup v2: memory.max, pids.max and cpu.max bound the whole sandbox; cgroup.kill ends it"),
    /** cgroup v1 groups per sandbox (memory, pids, cpu), with cgroup.kill from a v2 hierarchy where mounted. */
    CGROUP_V1("cgroup v1: memory.limit_in_bytes, pids.max and cpu.cfs_quota_us bound the whole sandbox"),
    /** No writable cgroup: rlimits on each launch (processes and data size per user; no CPU share). */
    RLIMIT("rlimits: RLIMIT_NPROC and RLIMIT_DATA bound each launch (processes are counted per user, memory per "
            + "process); the CPU share is not enforced because no cgroup is writable");

    private final String description;

    LimitMechanism(String description) {
        this.description = description;
    }

    /** One line saying what bounds a sandbox under this mechanism. */
    public String description() {
        return description;
    }
}
