package org.sandbox4j.local;

/**
 * What one local sandbox may use at once: memory, processes, CPU and storage. The defaults are
 * safe for a laptop. Where the host lets the backend make control groups, memory, processes and
 * CPU bound the whole sandbox; otherwise the backend falls back to rlimits, which bound less
 * (see {@link LimitMechanism}). Storage is bounded the same everywhere: the bubblewrap workspace
 * is a size-limited tmpfs (see {@link BubblewrapBackend}), and each exec's {@code /tmp} and
 * {@code /var/tmp} are too.
 *
 * @param memoryBytes    the most memory the sandbox's processes may hold together
 * @param maxProcesses   the most processes (and threads) the sandbox may run at once (the launcher's
 *                       few tasks included)
 * @param cpus           the CPU share, in whole CPUs (0.5 = half of one)
 * @param workspaceBytes the most the sandbox's workspace may hold (it lives in memory)
 * @param tmpBytes       the most each exec's {@code /tmp}, and its {@code /var/tmp}, may hold
 */
public record LocalLimits(long memoryBytes, int maxProcesses, double cpus, long workspaceBytes, long tmpBytes) {

    private static final long MIB = 1L << 20;
    /** 1 GiB. */
    public static final long DEFAULT_MEMORY_BYTES = 1L << 30;
    /** Enough for a build tool and its forks; far below any host's process table. */
    public static final int DEFAULT_MAX_PROCESSES = 256;
    /** One CPU. */
    public static final double DEFAULT_CPUS = 1.0;
    /** 512 MiB, as the Docker backend's work area. */
    public static final long DEFAULT_WORKSPACE_BYTES = 512 * MIB;
    /** 64 MiB, as the Docker backend's {@code /tmp}. */
    public static final long DEFAULT_TMP_BYTES = 64 * MIB;
    /** The smallest memory bound that still starts a shell and a small interpreter. */
    public static final long MIN_MEMORY_BYTES = 16 * MIB;
    /** A shell and the command it starts, at least. */
    public static final int MIN_PROCESSES = 8;
    /** The smallest share a cgroup quota expresses sensibly (1 ms of a 100 ms period). */
    public static final double MIN_CPUS = 0.01;
    /** The smallest storage bound worth having. */
    public static final long MIN_STORAGE_BYTES = MIB;

    public static final LocalLimits DEFAULT = new LocalLimits(DEFAULT_MEMORY_BYTES, DEFAULT_MAX_PROCESSES, DEFAULT_CPUS,
            DEFAULT_WORKSPACE_BYTES, DEFAULT_TMP_BYTES);

    public LocalLimits {
        if (memoryBytes < MIN_MEMORY_BYTES) {
            throw new IllegalArgumentException("a sandbox needs at least " + MIN_MEMORY_BYTES + " bytes of memory, not "
                    + memoryBytes);
        }
        if (maxProcesses < MIN_PROCESSES) {
            throw new IllegalArgumentException("a sandbox needs at least " + MIN_PROCESSES + " processes, not "
                    + maxProcesses);
        }
        if (!(cpus >= MIN_CPUS) || Double.isInfinite(cpus)) {
            throw new IllegalArgumentException("a sandbox needs a CPU share of at least " + MIN_CPUS + ", not " + cpus);
        }
        if (workspaceBytes < MIN_STORAGE_BYTES || tmpBytes < MIN_STORAGE_BYTES) {
            throw new IllegalArgumentException("a sandbox needs at least " + MIN_STORAGE_BYTES + " bytes of workspace "
                    + "and of /tmp, not " + workspaceBytes + " and " + tmpBytes);
        }
    }

    public LocalLimits withMemoryBytes(long bytes) {
        return new LocalLimits(bytes, maxProcesses, cpus, workspaceBytes, tmpBytes);
    }

    public LocalLimits withMaxProcesses(int processes) {
        return new LocalLimits(memoryBytes, processes, cpus, workspaceBytes, tmpBytes);
    }

    public LocalLimits withCpus(double share) {
        return new LocalLimits(memoryBytes, maxProcesses, share, workspaceBytes, tmpBytes);
    }

    public LocalLimits withWorkspaceBytes(long bytes) {
        return new LocalLimits(memoryBytes, maxProcesses, cpus, bytes, tmpBytes);
    }

    public LocalLimits withTmpBytes(long bytes) {
        return new LocalLimits(memoryBytes, maxProcesses, cpus, workspaceBytes, bytes);
    }
}
