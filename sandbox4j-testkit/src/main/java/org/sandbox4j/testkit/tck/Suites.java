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
        // Suites are added here as they land.
        all.add(egressClosed());
        all.add(egressAllowlist());
        return List.copyOf(all);
    }
}
