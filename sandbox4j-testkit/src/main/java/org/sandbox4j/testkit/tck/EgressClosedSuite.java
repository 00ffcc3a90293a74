package org.sandbox4j.testkit.tck;

import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Assumptions;
import org.sandbox4j.core.Egress;
import org.sandbox4j.core.ExecResult;

/**
 * EGRESS_CLOSED: a sandbox acquired with {@link Egress#CLOSED} reaches nothing: no network device
 * beyond loopback, no route out, not the host's own loopback (where a backend sharing the host's
 * network would find it), and no DNS.
 *
 * <p>Network rule: these probes send traffic only to listeners the probe itself starts on the
 * host's {@code 127.0.0.1}, so a backend that is not closed leaks to nothing else. That is why
 * DNS is probed with a query addressed to the probe's own listener, never with the guest's
 * resolver: glibc sends even a {@code .invalid} name to the nameservers of {@code resolv.conf}
 * (on a host network, the host's resolver, often on a private range).
 */
public final class EgressClosedSuite {

    /** The suite's stable name. */
    public static final String NAME = "EGRESS_CLOSED";

    /** The only interface a closed guest may have. */
    static final String LOOPBACK = "lo";

    private static final String NET_DEV = "/proc/net/dev";
    private static final String NET_CLASS = "/sys/class/net";
    private static final String IPV4_ROUTES = "/proc/net/route";
    private static final String IPV6_ROUTES = "/proc/net/ipv6_route";
    private static final String NET_DEV_HEADER = "Inter-|";
    private static final String ROUTE_HEADER = "Iface";
    private static final int IPV6_ROUTE_FIELDS = 10;
    private static final Duration HOST_REQUEST_TIMEOUT = Duration.ofSeconds(10);
    private static final int HTTP_OK = 200;

    /** The guest's wait for an answer to its DNS query; a loopback answer comes at once. */
    private static final int DNS_ANSWER_WAIT_SECONDS = 3;
    private static final String ANSWERED = "answered";
    private static final Set<String> SENDER_VERDICTS = Set.of(ANSWERED, "unanswered", "sent", "send-failed");

    /** Sends the query (hex in $3) to 127.0.0.1:$1 and prints whether an answer came within $2 s. */
    private static final String PYTHON_DNS = String.join("\n",
            "import socket, sys",
            "port, wait, query = int(sys.argv[1]), float(sys.argv[2]), bytes.fromhex(sys.argv[3])",
            "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)",
            "s.settimeout(wait)",
            "try:",
            "    s.sendto(query, ('127.0.0.1', port))",
            "except OSError:",
            "    print('send-failed')",
            "    sys.exit(0)",
            "try:",
            "    s.recvfrom(512)",
            "    print('answered')",
            "except OSError:",
            "    print('unanswered')",
            "");

    /** bash's /dev/udp: sends the query (printf %b escapes in $2) to 127.0.0.1:$1; cannot wait for an answer. */
    private static final String BASH_DNS =
            "{ printf '%b' \"$2\" > \"/dev/udp/127.0.0.1/$1\"; } 2>/dev/null && echo sent || echo send-failed";

    /** Query id 0x5a4b, flags: recursion desired; one question, no other records. */
    private static final byte[] QUERY_HEADER = {0x5a, 0x4b, 0x01, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
    /** The root label ending the name, then type A and class IN. */
    private static final byte[] QUESTION_TAIL = {0x00, 0x00, 0x01, 0x00, 0x01};
    private static final int OCTAL_BYTE_MASK = 0xff;

    private EgressClosedSuite() {
    }

    public static Suite suite() {
        return Suite.egress(NAME, Egress.CLOSED)
                .probes(
                        Probe.of("only-loopback-is-present",
                                "the guest has a network device beyond loopback: a closed sandbox has a way out",
                                EgressClosedSuite::onlyLoopbackIsPresent),
                        Probe.of("no-route-leaves-the-guest",
                                "the guest's routing table sends traffic through a device other than loopback",
                                EgressClosedSuite::noRouteLeavesTheGuest),
                        Probe.of("the-hosts-loopback-is-unreachable",
                                "the guest reaches a server on the host's 127.0.0.1: it shares the host's network",
                                EgressClosedSuite::hostsLoopbackIsUnreachable),
                        Probe.of("a-dns-query-never-leaves-the-guest",
                                "a DNS query from the guest reaches a listener on the host and gets an answer: names "
                                        + "resolve, and DNS can carry data out",
                                EgressClosedSuite::dnsQueryNeverLeaves))
                .build();
    }

    private static void onlyLoopbackIsPresent(ProbeContext context) {
        List<String> interfaces = loopbackIsListed(context);
        List<String> beyondLoopback = interfaces.stream().filter(name -> !LOOPBACK.equals(name)).toList();
        Check.that(beyondLoopback.isEmpty(), "the guest has network devices beyond loopback: " + beyondLoopback);
    }

    /**
     * Positive control: every Linux network namespace has {@code lo}, so a listing without it was
     * not read from a real network view.
     */
    private static List<String> loopbackIsListed(ProbeContext context) {
        List<String> interfaces = interfaces(context);
        Check.that(interfaces.contains(LOOPBACK), "positive control: the guest's device listing does not name "
                + LOOPBACK + ", which every network namespace has: " + interfaces);
        return interfaces;
    }

    /**
     * The guest's interfaces. {@code /proc/net/dev} shows the reading process's own network
     * namespace; {@code /sys/class/net} shows the namespace sysfs was mounted in (the host's, when
     * a backend unshares the network without remounting sysfs), so it is only the fallback.
     */
    private static List<String> interfaces(ProbeContext context) {
        ExecResult netDev = context.exec("cat", NET_DEV);
        String listing = netDev.stdoutText();
        if (netDev.exitCode() == 0 && listing.startsWith(NET_DEV_HEADER)) {
            List<String> names = new ArrayList<>();
            for (String line : listing.split("\n")) {
                int colon = line.indexOf(':');
                if (colon > 0 && !line.startsWith(NET_DEV_HEADER) && !line.contains("|")) {
                    names.add(line.substring(0, colon).strip());
                }
            }
            return names;
        }
        ExecResult sysfs = context.exec("ls", "-1", NET_CLASS);
        Check.that(sysfs.exitCode() == 0, "positive control: the guest shows neither " + NET_DEV + " nor "
                + NET_CLASS + " (exit " + sysfs.exitCode() + ": " + sysfs.stderrText().strip() + ")");
        return sysfs.stdoutText().lines().map(String::strip).filter(name -> !name.isEmpty()).toList();
    }

    private static void noRouteLeavesTheGuest(ProbeContext context) {
        loopbackIsListed(context);
        ExecResult ipv4 = context.exec("cat", IPV4_ROUTES);
        if (ipv4.exitCode() != 0) {
            Assumptions.abort("the guest has no readable " + IPV4_ROUTES + " (exit " + ipv4.exitCode() + ": "
                    + ipv4.stderrText().strip() + ")");
        }
        List<String> leaving = new ArrayList<>();
        for (String line : ipv4.stdoutText().split("\n")) {
            String[] fields = line.strip().split("\\s+");
            if (!line.isBlank() && !ROUTE_HEADER.equals(fields[0]) && !LOOPBACK.equals(fields[0])) {
                leaving.add("IPv4 via " + fields[0]);
            }
        }
        // IPv6 may be disabled: then the table is absent, which routes nothing.
        ExecResult ipv6 = context.exec("sh", "-c", "test ! -e \"$1\" || cat \"$1\"", "probe", IPV6_ROUTES);
        Check.that(ipv6.exitCode() == 0, "positive control: " + IPV6_ROUTES + " exists but cannot be read: "
                + ipv6.stderrText().strip());
        for (String line : ipv6.stdoutText().split("\n")) {
            String[] fields = line.strip().split("\\s+");
            if (fields.length == IPV6_ROUTE_FIELDS && !LOOPBACK.equals(fields[IPV6_ROUTE_FIELDS - 1])) {
                leaving.add("IPv6 via " + fields[IPV6_ROUTE_FIELDS - 1]);
            }
        }
        Check.that(leaving.isEmpty(), "the guest has routes out: " + leaving.stream().distinct().toList());
    }

    /** Shared with {@link EgressDenyAllSuite}: a filter outside the guest must refuse the host's loopback too. */
    static void hostsLoopbackIsUnreachable(ProbeContext context) throws Exception {
        GuestHttp http = GuestHttp.in(context, context.target().egressFixture().flatMap(EgressFixture::httpClient));
        try (LoopbackHttpServer server = LoopbackHttpServer.start("closed-probe")) {
            assertTheHostReaches(server);
            // Through whatever proxy the guest is given (a closed sandbox has none that leads out), then without.
            for (HttpAttempt attempt : List.of(HttpAttempt.get(server.url()),
                    HttpAttempt.get(server.url()).ignoringTheProxy())) {
                long before = server.requests();
                GuestHttp.HttpOutcome outcome = http.fetch(attempt);
                Check.that(!outcome.reached(), "the guest reached the host's loopback server: " + attempt
                        + " (status " + outcome.shown() + ")");
                Check.equal(before, server.requests(), "requests the host's loopback server received from the "
                        + "guest's " + attempt);
            }
        }
    }

    /** Positive control: the server answers on the host, so the guest's failure to reach it means something. */
    private static void assertTheHostReaches(LoopbackHttpServer server) throws Exception {
        HttpClient client = HttpClient.newBuilder().proxy(HttpClient.Builder.NO_PROXY)
                .connectTimeout(HOST_REQUEST_TIMEOUT).build();
        HttpResponse<String> response = client.send(HttpRequest.newBuilder(server.url())
                .timeout(HOST_REQUEST_TIMEOUT).GET().build(), HttpResponse.BodyHandlers.ofString());
        Check.equal(HTTP_OK, response.statusCode(), "positive control: the host's own request to " + server.url());
        Check.equal(server.body(), response.body(), "positive control: the body of the host's loopback server");
    }

    /** Shared with {@link EgressDenyAllSuite}: no resolver answers a guest whose every destination is refused. */
    static void dnsQueryNeverLeaves(ProbeContext context) throws Exception {
        byte[] query = dnsQuery("probe-" + UUID.randomUUID().toString().substring(0, 8) + ".sandbox4j-tck.invalid");
        boolean python = context.shell("command -v \"$1\" >/dev/null 2>&1", "python3").exitCode() == 0;
        boolean bash = !python && context.shell("command -v \"$1\" >/dev/null 2>&1", "bash").exitCode() == 0;
        if (!python && !bash) {
            Assumptions.abort("the guest has neither python3 nor bash to send a UDP datagram with");
        }
        try (LoopbackDnsListener listener = LoopbackDnsListener.start()) {
            byte[] answer = listener.askFromTheHost(query);
            Check.that(answer.length == query.length, "positive control: the host's own DNS query to its "
                    + "loopback listener got no answer");
            long before = listener.queries();
            String port = Integer.toString(listener.port());
            ExecResult sent = python
                    ? context.exec("python3", "-c", PYTHON_DNS, port, Integer.toString(DNS_ANSWER_WAIT_SECONDS),
                            HexFormat.of().formatHex(query))
                    : context.exec("bash", "-c", BASH_DNS, "probe", port, printfEscapes(query));
            String verdict = sent.stdoutText().strip();
            Check.that(SENDER_VERDICTS.contains(verdict), "positive control: the guest's "
                    + (python ? "python3" : "bash") + " sender did not run (exit " + sent.exitCode() + ", stdout "
                    + Check.show(verdict) + ", stderr " + Check.show(sent.stderrText().strip()) + ")");
            listener.awaitFence();
            long arrived = listener.queries() - before;
            Check.that(arrived == 0 && !ANSWERED.equals(verdict), "a DNS query from the guest reached the host's "
                    + "loopback listener (" + arrived + " datagram(s) arrived; the guest said '" + verdict + "')");
        }
    }

    /** A standard query (recursion desired) for the A record of {@code name}. */
    static byte[] dnsQuery(String name) {
        ByteArrayOutputStream query = new ByteArrayOutputStream();
        query.writeBytes(QUERY_HEADER);
        for (String label : name.toLowerCase(Locale.ROOT).split("\\.")) {
            byte[] bytes = label.getBytes(StandardCharsets.US_ASCII);
            query.write(bytes.length);
            query.writeBytes(bytes);
        }
        query.writeBytes(QUESTION_TAIL);
        return query.toByteArray();
    }

    /** Bytes as {@code \0ooo} escapes for {@code printf %b}: only digits and backslashes reach the shell. */
    static String printfEscapes(byte[] bytes) {
        StringBuilder escaped = new StringBuilder();
        for (byte b : bytes) {
            escaped.append(String.format("\\0%03o", b & OCTAL_BYTE_MASK));
        }
        return escaped.toString();
    }
}
