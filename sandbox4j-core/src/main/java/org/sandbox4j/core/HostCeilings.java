package org.sandbox4j.core;

/**
 * Bounds the host keeps whatever a spec, a backend's configuration or a caller asks: what one
 * call may hold in this JVM's memory. A guest chooses what is in its files, how big its
 * directories are and how much it prints; none of that may exhaust the host. Every backend
 * applies these; a call past one is refused whole with a typed error, never truncated.
 */
public final class HostCeilings {

    private static final long MIB = 1L << 20;
    /** The most any one call holds, however large this JVM's heap. */
    private static final long ABSOLUTE_MAX_BUFFERED_BYTES = 256 * MIB;
    /** Never below the defaults: a default call must always be possible. */
    private static final long MIN_BUFFERED_BYTES = 8 * MIB;

    /**
     * The most one {@code readFile} returns and the largest output cap an exec may ask for:
     * an eighth of this JVM's heap, at most 256 MiB, at least 8 MiB (the default per-file cap and
     * the default output cap).
     */
    public static final long MAX_BUFFERED_BYTES = Math.max(MIN_BUFFERED_BYTES,
            Math.min(ABSOLUTE_MAX_BUFFERED_BYTES, Runtime.getRuntime().maxMemory() / 8));

    /** The most entries one {@code listDir} returns; a larger directory is refused whole. */
    public static final int MAX_LISTED_ENTRIES = 65_536;

    /** The most characters of names one {@code listDir} returns (about 8 MiB held); more is refused whole. */
    public static final long MAX_LISTED_NAME_CHARS = 4 * MIB;

    /**
     * The most processes started with {@link Sandbox#start} that may run at once in one sandbox,
     * counted in this JVM: each holds host threads and windows of output until it ends.
     */
    public static final int MAX_PROCESSES_PER_SANDBOX = 16;

    private HostCeilings() {
    }
}
