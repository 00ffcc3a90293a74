package org.sandbox4j.testkit.tck;

import org.sandbox4j.core.Egress;

/**
 * EGRESS_DENY_ALL: a sandbox acquired with {@link Egress#DENY_ALL} reaches nothing through the
 * filter outside it: not the host's own loopback (directly or through whatever proxy the guest is
 * given; a filter that runs on the host is exactly what would find it), and no DNS answer. Unlike
 * {@link EgressClosedSuite} it does not look at the guest's devices or routes: the mode allows a
 * NIC whose every connection ends at the filter.
 *
 * <p>Network rule: as for the closed suite, the probes send traffic only to listeners they start
 * on the host's {@code 127.0.0.1}.
 */
public final class EgressDenyAllSuite {

    /** The suite's stable name. */
    public static final String NAME = "EGRESS_DENY_ALL";

    private EgressDenyAllSuite() {
    }

    public static Suite suite() {
        return Suite.egress(NAME, Egress.DENY_ALL)
                .probes(
                        Probe.of("the-hosts-loopback-is-unreachable",
                                "the guest reached a server on the host's 127.0.0.1: the filter lets the host's own "
                                        + "loopback through",
                                EgressClosedSuite::hostsLoopbackIsUnreachable),
                        Probe.of("a-dns-query-never-leaves-the-guest",
                                "a DNS query from the guest reached a listener on the host and got an answer: names "
                                        + "resolve, and DNS can carry data out",
                                EgressClosedSuite::dnsQueryNeverLeaves))
                .build();
    }
}
