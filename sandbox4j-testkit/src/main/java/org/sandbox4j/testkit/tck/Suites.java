package org.sandbox4j.testkit.tck;

import java.util.List;

/** Every suite the TCK has, by name. */
public final class Suites {

    private Suites() {
    }

    /** Every suite, in the order they should run (EXEC last: a timeout may take its sandbox down). */
    public static List<Suite> all() {
        return List.of(filesIn(), filesOut(), filesList(), filesDelete(), lifecycle(), reclaim(), isolation(),
                egressClosed(), egressDenyAll(), egressAllowlist(), interactive(), interactiveDeclared(), hostile(),
                exec());
    }

    /** FILES_IN, FILES_OUT, FILES_LIST, FILES_DELETE, in that order. */
    public static List<Suite> files() {
        return List.of(filesIn(), filesOut(), filesList(), filesDelete());
    }

    /** Writes land where they should and nowhere else: links, prefix siblings, the working directory itself. */
    public static Suite filesIn() {
        return FilesInSuite.suite();
    }

    /** The pull surface (stat, read) never follows a link or leaves the working directory. */
    public static Suite filesOut() {
        return FilesOutSuite.suite();
    }

    /** Listings name links as links and refuse linked directories and ancestors. */
    public static Suite filesList() {
        return FilesListSuite.suite();
    }

    /** Removal unlinks links, never follows them, and never removes the working directory. */
    public static Suite filesDelete() {
        return FilesDeleteSuite.suite();
    }

    /** Warm reuse, separation by key and kind, racing acquires, dispose and disposeScope from another instance. */
    public static Suite lifecycle() {
        return LifecycleSuite.suite();
    }

    /** The per-call reclaim helper's guards, quoting and refusal reporting, against a real guest. */
    public static Suite reclaim() {
        return ReclaimSuite.suite();
    }

    /**
     * INTERACTIVE_EXEC: started processes are interactive, bounded, signalled and leave nothing running
     * however they end. Before HOSTILE and EXEC: its disposal probe and kills must not meet a retired sandbox.
     */
    public static Suite interactive() {
        return InteractiveSuite.suite();
    }

    /** INTERACTIVE_EXEC_DECLARED, for every backend that runs commands: start is refused exactly when undeclared. */
    public static Suite interactiveDeclared() {
        return InteractiveSuite.declarationSuite();
    }

    /** A guest attacking the host while the host works: disposal, FIFOs, huge directories, oversize transfers. */
    public static Suite hostile() {
        return HostileSuite.suite();
    }

    /** The container rung's boundary, checked from inside the guest. */
    public static Suite isolation() {
        return IsolationSuite.suite();
    }

    /** EGRESS_CLOSED: a CLOSED sandbox reaches nothing, DNS and the host's loopback included. */
    public static Suite egressClosed() {
        return EgressClosedSuite.suite();
    }

    /** EGRESS_DENY_ALL: a DENY_ALL sandbox's filter lets nothing through, DNS and the host's loopback included. */
    public static Suite egressDenyAll() {
        return EgressDenyAllSuite.suite();
    }

    /** EGRESS_ALLOWLIST: an ALLOWLIST sandbox reaches the allowed host and nothing else. */
    public static Suite egressAllowlist() {
        return EgressAllowlistSuite.suite();
    }

    /** EXEC: argv, exit codes, byte-exact streams, caps, environment, stdin, parallelism, whole-tree timeouts. */
    public static Suite exec() {
        return ExecSuite.suite();
    }
}
