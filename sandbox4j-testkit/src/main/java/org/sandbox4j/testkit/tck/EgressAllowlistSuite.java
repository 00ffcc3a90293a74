package org.sandbox4j.testkit.tck;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.OptionalLong;
import org.junit.jupiter.api.Assumptions;
import org.sandbox4j.core.Egress;

/**
 * EGRESS_ALLOWLIST: a sandbox acquired with {@link Egress#ALLOWLIST} and the fixture's allowlist
 * reaches the allowed host and nothing else, whatever the guest tries: another host, an IP
 * literal, a name that resolves to an internal address, a smuggled Host header, a {@code CONNECT}
 * tunnel, or simply ignoring the proxy settings. Every probe first reaches the allowed host (so a
 * refusal is not just a broken network), and where the fixture's servers count requests, a
 * refusal must also leave the refused server without a single request.
 *
 * <p>The reference's two probes ({@code an-allowed-host-is-reachable},
 * {@code a-denied-host-is-refused}) are the first two here.
 */
public final class EgressAllowlistSuite {

    /** The suite's stable name. */
    public static final String NAME = "EGRESS_ALLOWLIST";

    private EgressAllowlistSuite() {
    }

    public static Suite suite() {
        return Suite.egress(NAME, Egress.ALLOWLIST)
                .needsEgressFixture()
                .shape((spec, target) -> target.egressFixture().map(fixture -> spec.egressAllow(fixture.allowlist()))
                        .orElse(spec))
                .probes(
                        Probe.of("an-allowed-host-is-reachable",
                                "the allowlist over-confines: a host it names cannot be reached",
                                EgressAllowlistSuite::allowedHostIsReachable),
                        Probe.of("an-unlisted-host-is-refused",
                                "the guest reaches a host the allowlist does not name",
                                context -> refused(context, fixture(context).unlistedUrl(), "the unlisted host")),
                        Probe.of("an-unlisted-ip-literal-is-refused",
                                "the guest reaches an address by IP literal, going around the names the allowlist "
                                        + "checks",
                                EgressAllowlistSuite::ipLiteralIsRefused),
                        Probe.of("internal-addresses-are-refused-even-by-name",
                                "the guest reaches a loopback, private, link-local or metadata address through a name "
                                        + "that resolves to it (DNS rebinding, the cloud metadata service)",
                                EgressAllowlistSuite::internalAddressesAreRefused),
                        Probe.of("a-smuggled-host-header-is-refused",
                                "a request to the allowed host with an unlisted Host header reaches the unlisted "
                                        + "host: the proxy routes by the header, not by what it checked",
                                EgressAllowlistSuite::smuggledHostHeaderIsRefused),
                        Probe.of("a-connect-tunnel-to-an-unlisted-host-is-refused",
                                "a CONNECT tunnel (how HTTPS leaves) reaches a host the allowlist does not name",
                                EgressAllowlistSuite::connectTunnelIsRefused),
                        Probe.of("ignoring-the-proxy-reaches-nothing-unlisted",
                                "the allowlist is only advice: a guest that drops its proxy settings connects directly",
                                EgressAllowlistSuite::ignoringTheProxyReachesNothing))
                .build();
    }

    private static void allowedHostIsReachable(ProbeContext context) {
        EgressFixture fixture = fixture(context);
        GuestHttp http = http(context);
        OptionalLong before = seen(fixture, fixture.allowedUrl());
        http.assertReached(HttpAttempt.get(fixture.allowedUrl()), "the allowed host");
        OptionalLong after = seen(fixture, fixture.allowedUrl());
        if (before.isPresent() && after.isPresent()) {
            Check.that(after.getAsLong() > before.getAsLong(), "the guest got a 2xx for " + fixture.allowedUrl()
                    + ", but the fixture's server saw no request: something else answered");
        }
    }

    private static void ipLiteralIsRefused(ProbeContext context) {
        EgressFixture fixture = fixture(context);
        String host = fixture.ipLiteralUrl().getHost();
        Check.that(!listed(fixture, host), "the egress fixture's IP literal " + host + " is on its own allowlist "
                + fixture.allowlist() + "; name one that is not");
        refused(context, fixture.ipLiteralUrl(), "the unlisted IP literal");
    }

    private static void internalAddressesAreRefused(ProbeContext context) {
        EgressFixture fixture = fixture(context);
        if (fixture.internalUrls().isEmpty()) {
            Assumptions.abort("the egress fixture names no internal destinations (internalUrls is empty)");
        }
        GuestHttp http = positiveControl(context);
        List<String> reached = new ArrayList<>();
        for (URI internal : fixture.internalUrls()) {
            Check.that(!listed(fixture, internal.getHost()), "the egress fixture's internal destination "
                    + internal + " is on its own allowlist " + fixture.allowlist() + "; name one that is not");
            String failure = attemptRefused(http, fixture, HttpAttempt.get(internal));
            if (!failure.isEmpty()) {
                reached.add(failure);
            }
        }
        Check.that(reached.isEmpty(), "internal destinations were reached: " + String.join("; ", reached));
    }

    private static void smuggledHostHeaderIsRefused(ProbeContext context) {
        EgressFixture fixture = fixture(context);
        URI unlisted = fixture.unlistedUrl();
        if (seen(fixture, unlisted).isEmpty()) {
            Assumptions.abort("the egress fixture's servers count no requests (no RequestWitness), so a request "
                    + "smuggled to " + unlisted + " cannot be seen");
        }
        GuestHttp http = positiveControl(context);
        long before = seen(fixture, unlisted).getAsLong();
        // Reaching the allowed server with an odd Host header is fine; reaching the unlisted one is not.
        http.fetch(HttpAttempt.get(fixture.allowedUrl()).withHostHeader(unlisted.getRawAuthority()));
        long after = seen(fixture, unlisted).getAsLong();
        Check.equal(before, after, "requests the unlisted server " + unlisted
                + " received from a request to the allowed host carrying its name in the Host header");
    }

    private static void connectTunnelIsRefused(ProbeContext context) {
        GuestHttp http = positiveControl(context);
        if (!http.client().tunnels()) {
            Assumptions.abort("the guest's " + http.client().command() + " cannot force a CONNECT tunnel "
                    + "(curl or python3 can)");
        }
        EgressFixture fixture = fixture(context);
        String failure = attemptRefused(http, fixture, HttpAttempt.get(fixture.unlistedUrl()).throughTunnel());
        Check.that(failure.isEmpty(), failure);
    }

    private static void ignoringTheProxyReachesNothing(ProbeContext context) {
        GuestHttp http = positiveControl(context);
        EgressFixture fixture = fixture(context);
        List<String> reached = new ArrayList<>();
        for (URI destination : List.of(fixture.unlistedUrl(), fixture.ipLiteralUrl())) {
            String failure = attemptRefused(http, fixture, HttpAttempt.get(destination).ignoringTheProxy());
            if (!failure.isEmpty()) {
                reached.add(failure);
            }
        }
        Check.that(reached.isEmpty(), String.join("; ", reached));
    }

    /** The positive control, then the refusal, then proof the refused server saw nothing. */
    private static void refused(ProbeContext context, URI destination, String what) {
        GuestHttp http = positiveControl(context);
        Check.that(!listed(fixture(context), destination.getHost()), "the egress fixture's " + what + " "
                + destination.getHost() + " is on its own allowlist " + fixture(context).allowlist());
        String failure = attemptRefused(http, fixture(context), HttpAttempt.get(destination));
        Check.that(failure.isEmpty(), failure);
    }

    /** Empty when the attempt was refused and its server (where counted) saw nothing; else what happened. */
    private static String attemptRefused(GuestHttp http, EgressFixture fixture, HttpAttempt attempt) {
        OptionalLong before = seen(fixture, attempt.url());
        GuestHttp.HttpOutcome outcome = http.fetch(attempt);
        OptionalLong after = seen(fixture, attempt.url());
        if (outcome.reached()) {
            return attempt + " was reached (status " + outcome.shown() + ")";
        }
        if (before.isPresent() && after.isPresent() && after.getAsLong() != before.getAsLong()) {
            return attempt + " got status " + outcome.shown() + ", but its server received "
                    + (after.getAsLong() - before.getAsLong()) + " request(s): the request left before the refusal";
        }
        return "";
    }

    private static GuestHttp positiveControl(ProbeContext context) {
        GuestHttp http = http(context);
        http.assertReached(HttpAttempt.get(fixture(context).allowedUrl()),
                "positive control (the allowed host must be reachable, or a refusal proves nothing)");
        return http;
    }

    private static GuestHttp http(ProbeContext context) {
        return GuestHttp.in(context, fixture(context).httpClient());
    }

    private static EgressFixture fixture(ProbeContext context) {
        return context.target().egressFixture().orElseThrow(() -> new IllegalStateException(
                "the " + NAME + " suite runs only with an EgressFixture"));
    }

    private static OptionalLong seen(EgressFixture fixture, URI url) {
        return fixture.witness().requestsSeen(url);
    }

    private static boolean listed(EgressFixture fixture, String host) {
        String wanted = host.toLowerCase(Locale.ROOT);
        return fixture.allowlist().stream().anyMatch(entry -> entry.toLowerCase(Locale.ROOT).equals(wanted));
    }
}
