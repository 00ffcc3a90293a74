package org.sandbox4j.docker;

/**
 * What one container may use. Every value is enforced by the engine (cgroups, or gVisor's own
 * accounting under runsc), never by the guest.
 *
 * @param memoryBytes   memory, swap included (no swap beyond it)
 * @param cpus          CPUs, fractional (0.5 is half a core)
 * @param processes     processes and threads at once; a fork bomb stops here
 * @param workAreaBytes the work area (a tmpfs volume at the parent of the spec's work dir)
 * @param tmpBytes      the private {@code /tmp} (a tmpfs)
 */
public record DockerLimits(long memoryBytes, double cpus, long processes, long workAreaBytes, long tmpBytes) {

    private static final long MIB = 1024L * 1024;

    /** 1 GiB of memory, one CPU, 256 processes, a 512 MiB work area and a 64 MiB {@code /tmp}. */
    public static final DockerLimits DEFAULT = new DockerLimits(1024 * MIB, 1.0, 256, 512 * MIB, 64 * MIB);

    public DockerLimits {
        if (memoryBytes < 6 * MIB) {
            throw new IllegalArgumentException("engines refuse less than 6 MiB of memory, not " + memoryBytes);
        }
        if (!(cpus > 0) || Double.isInfinite(cpus)) {
            throw new IllegalArgumentException("cpus must be positive, not " + cpus);
        }
        if (processes < 1) {
            throw new IllegalArgumentException("a container needs at least one process, not " + processes);
        }
        if (workAreaBytes < MIB || tmpBytes < MIB) {
            throw new IllegalArgumentException("the work area and /tmp need at least 1 MiB each");
        }
    }

    public DockerLimits withMemoryBytes(long value) {
        return new DockerLimits(value, cpus, processes, workAreaBytes, tmpBytes);
    }

    public DockerLimits withCpus(double value) {
        return new DockerLimits(memoryBytes, value, processes, workAreaBytes, tmpBytes);
    }

    public DockerLimits withProcesses(long value) {
        return new DockerLimits(memoryBytes, cpus, value, workAreaBytes, tmpBytes);
    }

    public DockerLimits withWorkAreaBytes(long value) {
        return new DockerLimits(memoryBytes, cpus, processes, value, tmpBytes);
    }

    public DockerLimits withTmpBytes(long value) {
        return new DockerLimits(memoryBytes, cpus, processes, workAreaBytes, value);
    }
}
