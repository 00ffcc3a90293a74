package org.sandbox4j.testkit.tck;

import java.util.ArrayList;
import java.util.List;

/** Every suite the TCK has, by name. */
public final class Suites {

    private Suites() {
    }

    /** EGRESS_CLOSED: a CLOSED sandbox reaches nothing, DNS and the host's loopback included. */
    public static Suite egressClosed() {
        return EgressClosedSuite.suite();
    }

    /** EGRESS_ALLOWLIST: an ALLOWLIST sandbox reaches the allowed host and nothing else. */
    public static Suite egressAllowlist() {
        return EgressAllowlistSuite.suite();
    }

    /** Every suite, in the order they should run (EXEC last: a timeout may take its sandbox down). */
    public static List<Suite> all() {
        List<Suite> all = new ArrayList<>();
        all.addAll(files());
        // Suites are added here as they land.
        all.add(egressClosed());
        all.add(egressAllowlist());
        return List.copyOf(all);
    }

    /** FILES_IN, FILES_OUT, FILES_LIST, FILES_DELETE, in that order. */
    public static List<Suite> files() {
        return List.of(filesIn(), filesOut(), filesList(), filesDelete());
    }

    public static Suite filesIn() {
        return FilesInSuite.suite();
    }

    public static Suite filesOut() {
        return FilesOutSuite.suite();
    }

    public static Suite filesList() {
        return FilesListSuite.suite();
    }

    public static Suite filesDelete() {
        return FilesDeleteSuite.suite();
    }
}
