package org.sandbox4j.core;

import java.util.Collections;
import java.util.EnumSet;
import java.util.Set;

/** Something a workload needs from a sandbox and a backend may declare it provides. */
public enum Capability implements WireValue {
    /** {@link Sandbox#exec}. Every sandbox obligates it. */
    EXEC,
    /** Dispatch of host tools from guest code. */
    HOST_TOOLS,
    /** {@link Sandbox#writeFile}. Every sandbox obligates it. */
    FILES_IN,
    /** The pull surface: {@link Sandbox#stat} and {@link Sandbox#readFile}. */
    FILES_OUT,
    /** {@link Sandbox#listDir}. */
    FILES_LIST,
    /** {@link Sandbox#remove}. */
    FILES_DELETE,
    /**
     * {@link Sandbox#start}: a running command with a live stdin, bounded output streams, signals
     * to its process group and a kill of its whole tree.
     */
    INTERACTIVE_EXEC,
    /** Snapshot and restore. */
    SNAPSHOT,
    /** An identity attached to the guest by the provider. */
    ATTACHED_IDENTITY;

    /** What every {@link Sandbox} obligates, and what a silent backend is read as providing. */
    public static final Set<Capability> DEFAULT_CAPABILITIES =
            Collections.unmodifiableSet(EnumSet.of(EXEC, FILES_IN));

    public static Capability parse(String value) {
        return WireValue.parse(Capability.class, value);
    }
}
