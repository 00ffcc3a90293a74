package org.sandbox4j.cli;

import org.sandbox4j.core.Isolation;

/** The messages that name the fix when policy refuses. */
final class Refusals {

    private Refusals() {
    }

    /** A backend below the floor: name the flag that lowers it, and when a host should not. */
    static String belowFloor(KnownBackend backend, Isolation declared, Isolation floor, Configuration configuration,
            String floorFlag) {
        String rung = declared.wire();
        String why = switch (declared) {
            case CONTAINER -> "the program then runs in Linux namespaces on this host's own kernel: fine for code "
                    + "you would run on this machine yourself, or on a development machine; not for untrusted code "
                    + "on a shared or deployed host, where one kernel bug reaches the host, so keep the floor there "
                    + "and use a microVM backend (--backend sbx)";
            case HARDENED_CONTAINER -> "the program then runs in a container under gVisor's user-space kernel, "
                    + "which stands between it and this host's kernel: a smaller surface than a plain container, "
                    + "still not a hypervisor boundary";
            case OS_PROCESS -> "the program then runs as an ordinary process with your user's rights, files and "
                    + "network: only for code you trust, on a host without namespaces";
            default -> "only where that boundary is enough for the code you run";
        };
        return "refused: backend '" + backend.wire() + "' isolates at '" + rung + "', below the floor '" + floor.wire()
                + "' (" + configuration.whereSet(Setting.FLOOR, floorFlag) + "; ladder: " + Isolation.ladder() + "). "
                + "To accept it, pass --floor " + rung + " (or set " + Setting.FLOOR.variable() + "=" + rung + ", or "
                + Setting.FLOOR.key() + "=" + rung + " in the config file): " + why + ". "
                + "'sandbox4j doctor' shows which backends this host has.";
    }

    /**
     * Why the process backend serves no command: it shares the host's network, and every program the
     * command runs is kept off it (closed, deny-all, or only the --allow hosts).
     */
    static final String PROCESS_SHARES_THE_NETWORK = "backend 'process' runs the program as an ordinary process on "
            + "this host's network, so it cannot keep it off the network as run, exec and mcp always do (no network, "
            + "or only the --allow hosts); use bubblewrap (--backend bubblewrap --floor container), or a microVM "
            + "backend";

    static String processSharesTheNetwork() {
        return "refused: " + PROCESS_SHARES_THE_NETWORK;
    }
}
