package org.sandbox4j.local;

/**
 * What one local sandbox may use at once: memory, processes and CPU. The defaults are safe for a
 * laptop. Where the host lets the backend make control groups they bound the whole sandbox;
 * otherwise the backend falls back to rlimits, which bound less: processes per exec, memory per
 * process, CPU not at all (see {@link LimitMechanism}).
 *
 * @param memoryBytes  the most memory the sandbox's processes may hold together
 * @param maxProcesses the most processes (and threads) the sandbox may run at once (under rlimits:
 *                     one exec, the launcher's few tasks included)
 * @param cpus         the CPU share, in whole CPUs (0.5 = half of one)
 */
public record LocalLimits(long memoryBytes, int maxProcesses, double cpus) {

    /** 1 GiB. */
    public static final long DEFAULT_MEMORY_BYTES = 1L << 30;
    /** Enough for a build tool and its forks; far below any host's process table. */
    public static final int DEFAULT_MAX_PROCESSES = 256;
    /** One CPU. */
    public static final double DEFAULT_CPUS = 1.0;
    /** The smallest memory bound that still starts a shell and a small interpreter. */
    public static final long MIN_MEMORY_BYTES = 16L << 20;
    /** A shell and the command it starts, at least. */
    public static final int MIN_PROCESSES = 8;
    /** The smallest share a cgroup quota expresses sensibly (1 ms of a 100 ms period). */
    public static final double MIN_CPUS = 0.01;

    public static final LocalLimits DEFAULT = new LocalLimits(DEFAULT_MEMORY_BYTES, DEFAULT_MAX_PROCESSES, DEFAULT_CPUS);

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
    }

    public LocalLimits withMemoryBytes(long bytes) {
        return new LocalLimits(bytes, maxProcesses, cpus);
    }

    public LocalLimits withMaxProcesses(int processes) {
        return new LocalLimits(memoryBytes, processes, cpus);
    }

    public LocalLimits withCpus(double share) {
        return new LocalLimits(memoryBytes, maxProcesses, share);
    }
}
