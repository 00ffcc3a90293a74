package org.sandbox4j.core;

import java.util.Collections;
import java.util.EnumSet;
import java.util.Set;

/** Something a workload needs from a sandbox and a backend may declare it provides. */
public enum Capability implements WireValue {
    /** {@link Sandbox#exec}. Every sandbox obligates it. */
    EXEC("exec"),
    /** {@link Sandbox#runCode}: evaluation in the guest runtime, no shell. */
    RUN_CODE("run_code"),
    /** Dispatch of host tools from guest code. */
    HOST_TOOLS("host_tools"),
    /** {@link Sandbox#writeFile}. Every sandbox obligates it. */
    FILES_IN("files_in"),
    /** The pull surface: {@link Sandbox#stat} and {@link Sandbox#readFile}. */
    FILES_OUT("files_out"),
    /** {@link Sandbox#listDir}. */
    FILES_LIST("files_list"),
    /** {@link Sandbox#remove}. */
    FILES_DELETE("files_delete"),
    /** Snapshot and restore. */
    SNAPSHOT("snapshot"),
    /** An identity attached to the guest by the provider. */
    ATTACHED_IDENTITY("attached_identity");

    /** What every {@link Sandbox} obligates, and what a silent backend is read as providing. */
    public static final Set<Capability> DEFAULT_CAPABILITIES =
            Collections.unmodifiableSet(EnumSet.of(EXEC, FILES_IN));

    private final String wire;

    Capability(String wire) {
        this.wire = wire;
    }

    @Override
    public String wire() {
        return wire;
    }

    public static Capability parse(String value) {
        return WireValue.parse(Capability.class, value);
    }
}
