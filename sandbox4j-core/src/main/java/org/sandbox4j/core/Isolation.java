package org.sandbox4j.core;

/**
 * How strong a backend's boundary is. Declaration order is the ladder, weakest first: the rank of
 * a rung is its ordinal, defined here once. {@code "process"} (the old name of the bottom OS rung)
 * never parses; the wire value of that rung is {@code os_process}.
 */
public enum Isolation implements WireValue {
    /** No boundary: the work runs in the host process. */
    NONE,
    /** A software boundary inside the host process (a restricted interpreter, WASM). */
    RUNTIME,
    /** A separate OS process sharing the host kernel and file system, without namespaces. */
    OS_PROCESS,
    /** Linux namespaces and cgroups. */
    CONTAINER,
    /** A container whose system calls a user-space kernel intercepts (gVisor class). */
    HARDENED_CONTAINER,
    /** A hypervisor boundary with a minimal guest and no ambient identity. */
    MICROVM,
    /** A dedicated full virtual machine on remote infrastructure. */
    VM;

    /** Position on the ladder, 0 for {@link #NONE}. */
    public int rank() {
        return ordinal();
    }

    /** Whether this rung is at least as strong as {@code floor}. */
    public boolean meetsFloor(Isolation floor) {
        return rank() >= floor.rank();
    }

    /** The stronger of the two rungs. */
    public static Isolation strongest(Isolation a, Isolation b) {
        return a.rank() >= b.rank() ? a : b;
    }

    /** The whole ladder as text, weakest first, for messages. */
    public static String ladder() {
        return WireValue.wireValues(Isolation.class);
    }

    /** @throws IllegalArgumentException for anything but a wire value (including {@code "process"}) */
    public static Isolation parse(String value) {
        return WireValue.parse(Isolation.class, value);
    }
}
