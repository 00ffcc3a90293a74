package org.sandbox4j.egress;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.sandbox4j.egress.Loopback.body;
import static org.sandbox4j.egress.Loopback.exchange;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The proxy over a real unix socket, to real servers on 127.0.0.1. Destinations that must be
 * refused are reached only through a fake resolver, and a recording connector proves no
 * connection to them was even attempted.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class EgressProxyTest {

    @TempDir
    Path dir;

    private Path socket;
    private Loopback.CountingServer http;
    private final List<EgressProxy> proxies = new ArrayList<>();

    /** Records every connect; connects for real only to loopback, and refuses anything else. */
    static final class RecordingConnector implements Connector {
        final List<InetSocketAddress> attempts = new CopyOnWriteArrayList<>();

        @Override
        public SocketChannel connect(InetSocketAddress address, Duration timeout) throws IOException {
            attempts.add(address);
            if (!address.getAddress().isLoopbackAddress()) {
                throw new IOException("test connector: never connects to " + address);
            }
            return Connector.TCP.connect(address, timeout);
        }
    }

    private final RecordingConnector connector = new RecordingConnector();

    @BeforeEach
    void setUp() throws IOException {
        socket = dir.resolve("egress.sock");
        http = new Loopback.CountingServer();
    }

    @AfterEach
    void tearDown() {
        proxies.forEach(EgressProxy::close);
        http.close();
    }

    private EgressProxy start(EgressProxy.Settings settings, String... rules) {
        EgressProxy proxy = EgressProxy.start(socket, EgressPolicy.parse(List.of(rules)), settings, connector);
        proxies.add(proxy);
        return proxy;
    }

    private EgressProxy start(String... rules) {
        return start(EgressProxy.Settings.defaults().withResolver(name -> {
            throw new UnknownHostException("test resolver knows no " + name);
        }), rules);
    }

    private static String get(String url) {
        return "GET " + url + " HTTP/1.1\r\nHost: ignored\r\nUser-Agent: test\r\n\r\n";
    }

    @Test
    void anAllowedGetReachesTheServerAndReturnsItsBody() throws Exception {
        EgressProxy proxy = start("127.0.0.1:" + http.port());
        String response = exchange(socket, get("http://127.0.0.1:" + http.port() + "/hello"));
        assertThat(response).startsWith("HTTP/1.1 200 ");
        assertThat(body(response)).isEqualTo("hello from loopback /hello");
        assertThat(http.requests).hasValue(1);
        assertThat(connector.attempts).containsExactly(new InetSocketAddress(Loopback.LOOPBACK, http.port()));
        proxy.close();
        EgressDecision decision = proxy.decisions().get(0);
        assertThat(decision.verdict()).isEqualTo(EgressDecision.Verdict.ALLOWED);
        assertThat(decision.method()).isEqualTo("GET");
        assertThat(decision.host()).isEqualTo("127.0.0.1");
        assertThat(decision.port()).isEqualTo(http.port());
        assertThat(decision.bytesToServer()).isPositive();
        assertThat(decision.bytesToClient()).isEqualTo(response.length());
    }

    @Test
    void anUnlistedNameIsRefusedWithOneLineAndNoConnection() throws Exception {
        start("127.0.0.1:" + http.port());
        String response = exchange(socket, get("http://unlisted.example/x"));
        assertThat(response).startsWith("HTTP/1.1 403 Forbidden\r\n").contains("Content-Type: text/plain")
                .contains("Connection: close\r\n");
        assertThat(body(response)).isEqualTo("sandbox4j egress: unlisted.example:80 is not on this sandbox's allowlist\n");
        assertThat(http.requests).hasValue(0);
        assertThat(connector.attempts).isEmpty();
    }

    @Test
    void anUnlistedAddressLiteralIsRefused() throws Exception {
        start("allowed.test:" + http.port() + "=127.0.0.1");
        String response = exchange(socket, get("http://127.0.0.1:" + http.port() + "/"));
        assertThat(response).startsWith("HTTP/1.1 403 ");
        assertThat(body(response)).contains("127.0.0.1:" + http.port() + " is not on this sandbox's allowlist");
        assertThat(http.requests).hasValue(0);
        assertThat(connector.attempts).isEmpty();
    }

    @Test
    void aNamePinnedToLoopbackIsAdmittedWithoutDns() throws Exception {
        start(EgressProxy.Settings.defaults().withResolver(name -> {
            throw new AssertionError("a pinned name must not be resolved: " + name);
        }), "allowed.test:" + http.port() + "=127.0.0.1");
        String response = exchange(socket, get("http://Allowed.Test:" + http.port() + "/pinned"));
        assertThat(response).startsWith("HTTP/1.1 200 ");
        assertThat(body(response)).isEqualTo("hello from loopback /pinned");
        assertThat(http.headers.get(0).get("Host")).containsExactly("allowed.test:" + http.port());
    }

    @ParameterizedTest(name = "a name resolving to {0} is refused before any connect")
    @ValueSource(strings = {"127.0.0.1", "10.0.0.1", "169.254.169.254", "::1", "::ffff:127.0.0.1", "fd00:ec2::254",
            "192.168.1.1", "100.64.0.1"})
    void aNameResolvingToAnInternalAddressIsRefusedBeforeAnyConnect(String internal) throws Exception {
        InetAddress address = internal.contains(":")
                ? HostSyntax.parseIpv6(internal).orElseThrow() : HostSyntax.parseIpv4(internal).orElseThrow();
        List<String> asked = new CopyOnWriteArrayList<>();
        start(EgressProxy.Settings.defaults().withResolver(name -> {
            asked.add(name);
            return List.of(InetAddress.getByAddress(name, InetAddress.getByName("203.0.113.7").getAddress()), address);
        }), "evil.test:*");
        String response = exchange(socket, get("http://evil.test:8080/"));
        assertThat(response).startsWith("HTTP/1.1 403 ");
        assertThat(body(response)).startsWith("sandbox4j egress: evil.test:8080 resolves to an internal address (")
                .endsWith("\n").hasLineCount(1);
        assertThat(asked).containsExactly("evil.test");
        assertThat(connector.attempts).isEmpty();

        String tunnel = exchange(socket, "CONNECT evil.test:443 HTTP/1.1\r\n\r\n");
        assertThat(tunnel).startsWith("HTTP/1.1 403 ").contains("resolves to an internal address");
        assertThat(connector.attempts).isEmpty();
    }

    @Test
    void anIpv4MappedIpv6AnswerIsJudgedByItsIpv4Address() throws Exception {
        byte[] mapped = new byte[16];
        mapped[10] = (byte) 0xff;
        mapped[11] = (byte) 0xff;
        mapped[12] = (byte) 169;
        mapped[13] = (byte) 254;
        mapped[14] = (byte) 169;
        mapped[15] = (byte) 254;
        // Kept as an Inet6Address, the way a resolver could hand it back.
        InetAddress metadata = java.net.Inet6Address.getByAddress("meta.test", mapped, -1);
        start(EgressProxy.Settings.defaults().withResolver(name -> List.of(metadata)), "meta.test");
        String response = exchange(socket, get("http://meta.test/latest/meta-data/"));
        assertThat(response).startsWith("HTTP/1.1 403 ");
        assertThat(body(response)).contains("resolves to an internal address (cloud metadata 169.254.169.254 (IPv4-mapped))");
        assertThat(connector.attempts).isEmpty();
    }

    @Test
    void anAddressRuleForAnInternalAddressReachesItButANameRuleNever() throws Exception {
        start(EgressProxy.Settings.defaults().withResolver(name -> List.of(Loopback.LOOPBACK)),
                "127.0.0.1:" + http.port(), "loopback.test:" + http.port());
        assertThat(exchange(socket, get("http://127.0.0.1:" + http.port() + "/named"))).startsWith("HTTP/1.1 200 ");
        assertThat(exchange(socket, get("http://loopback.test:" + http.port() + "/resolved")))
                .startsWith("HTTP/1.1 403 ").contains("resolves to an internal address (loopback 127.0.0.0/8)");
        assertThat(http.paths).containsExactly("/named");
    }

    @Test
    void aResolvedPublicAddressIsTheOneConnectedTo() throws Exception {
        InetAddress publicAddress = HostSyntax.parseIpv4("203.0.113.7").orElseThrow();
        start(EgressProxy.Settings.defaults().withResolver(name -> List.of(publicAddress)), "public.test");
        String response = exchange(socket, get("http://public.test/"));
        // The test connector refuses every non-loopback address, so the proxy reports a 502; what
        // matters is that it tried exactly the address it checked, once.
        assertThat(response).startsWith("HTTP/1.1 502 ");
        assertThat(body(response)).startsWith("sandbox4j egress: could not connect to public.test:80: ");
        assertThat(connector.attempts).containsExactly(new InetSocketAddress(publicAddress, 80));
    }

    @Test
    void anUnresolvableNameIs502() throws Exception {
        start("nowhere.test");
        String response = exchange(socket, get("http://nowhere.test/"));
        assertThat(response).startsWith("HTTP/1.1 502 Bad Gateway");
        assertThat(body(response)).isEqualTo("sandbox4j egress: nowhere.test does not resolve\n");
        assertThat(connector.attempts).isEmpty();
    }

    @Test
    void aConnectTimeoutIs502NamingTheBound() throws Exception {
        // The timeout itself is the connector's; a seam stands in for an address that never answers,
        // since a test may not send a packet anywhere but loopback.
        List<InetSocketAddress> attempts = new CopyOnWriteArrayList<>();
        EgressProxy proxy = EgressProxy.start(socket, EgressPolicy.parse(List.of("slow.test=127.0.0.1")),
                EgressProxy.Settings.defaults().withConnectTimeout(Duration.ofMillis(250)), (address, timeout) -> {
                    attempts.add(address);
                    throw new ConnectTimeout("no answer within " + timeout.toMillis() + " ms");
                });
        proxies.add(proxy);
        String response = exchange(socket, "CONNECT slow.test:443 HTTP/1.1\r\n\r\n");
        assertThat(response).startsWith("HTTP/1.1 502 ");
        assertThat(body(response)).isEqualTo("sandbox4j egress: could not connect to slow.test:443: timed out after 250 ms\n");
        assertThat(attempts).containsExactly(new InetSocketAddress(Loopback.LOOPBACK, 443));
    }

    @Test
    void aRefusedConnectIs502() throws Exception {
        int closedPort = Loopback.freePort();
        start("127.0.0.1:" + closedPort);
        String response = exchange(socket, get("http://127.0.0.1:" + closedPort + "/"));
        assertThat(response).startsWith("HTTP/1.1 502 ");
        assertThat(body(response)).startsWith("sandbox4j egress: could not connect to 127.0.0.1:" + closedPort);
    }

    @Test
    void hostHeaderSmugglingReachesOnlyTheCheckedServerWithHostRewritten() throws Exception {
        start("allowed.test:" + http.port() + "=127.0.0.1");
        String request = "GET http://allowed.test:" + http.port() + "/smuggle?q=1 HTTP/1.1\r\n"
                + "Host: unlisted.example\r\n"
                + "host: second.example\r\n"
                + "Proxy-Authorization: Basic c2VjcmV0\r\n"
                + "Proxy-Connection: keep-alive\r\n"
                + "Connection: keep-alive, X-Hop\r\n"
                + "X-Hop: drop me\r\n"
                + "X-Keep: keep me\r\n"
                + "\r\n";
        String response = exchange(socket, request);
        assertThat(response).startsWith("HTTP/1.1 200 ");
        assertThat(http.requests).hasValue(1);
        Map<String, List<String>> seen = http.headers.get(0);
        assertThat(seen.get("Host")).containsExactly("allowed.test:" + http.port());
        assertThat(seen).doesNotContainKeys("Proxy-authorization", "Proxy-connection", "X-hop");
        assertThat(seen.get("X-keep")).containsExactly("keep me");
        assertThat(seen.get("Connection")).containsExactly("close");
        assertThat(http.paths).containsExactly("/smuggle?q=1");
    }

    @Test
    void aConnectTunnelCarriesRawBytesBothWays() throws Exception {
        try (Loopback.EchoServer echo = new Loopback.EchoServer()) {
            EgressProxy proxy = start("127.0.0.1:" + echo.port());
            try (SocketChannel client = Loopback.connect(socket)) {
                // The first tunnelled bytes may travel with the head: they must not be lost.
                Loopback.send(client, "CONNECT 127.0.0.1:" + echo.port() + " HTTP/1.1\r\nHost: x\r\n\r\nearly|");
                assertThat(Loopback.readUntil(client, "\r\n\r\n")).isEqualTo("HTTP/1.1 200 Connection Established\r\n\r\n");
                assertThat(Loopback.readUntil(client, "early|")).isEqualTo("early|");
                byte[] binary = new byte[100_000];
                for (int i = 0; i < binary.length; i++) {
                    binary[i] = (byte) i;
                }
                Thread writer = new Thread(() -> {
                    try {
                        client.write(ByteBuffer.wrap(binary));
                    } catch (IOException e) {
                        throw new IllegalStateException(e);
                    }
                });
                writer.start();
                ByteBuffer back = ByteBuffer.allocate(binary.length);
                while (back.hasRemaining() && client.read(back) >= 0) {
                    // keep reading
                }
                writer.join();
                assertThat(back.array()).isEqualTo(binary);
                client.shutdownOutput();
                assertThat(Loopback.readAll(client)).isEmpty();
            }
            proxy.close();
            EgressDecision decision = proxy.decisions().get(0);
            assertThat(decision.method()).isEqualTo("CONNECT");
            assertThat(decision.verdict()).isEqualTo(EgressDecision.Verdict.ALLOWED);
            assertThat(decision.bytesToServer()).isEqualTo(binary_length() + "early|".length());
            assertThat(decision.bytesToClient()).isEqualTo(binary_length() + "early|".length());
        }
    }

    private static long binary_length() {
        return 100_000;
    }

    @Test
    void aConnectToAnUnlistedHostIs403() throws Exception {
        start("127.0.0.1:1");
        String response = exchange(socket, "CONNECT unlisted.example:443 HTTP/1.1\r\n\r\n");
        assertThat(response).startsWith("HTTP/1.1 403 ");
        assertThat(body(response)).isEqualTo("sandbox4j egress: unlisted.example:443 is not on this sandbox's allowlist\n");
        assertThat(connector.attempts).isEmpty();
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {
            "GET /x HTTP/1.1\r\n\r\n|is not a proxy request",
            "GET https://example.com/ HTTP/1.1\r\n\r\n|use CONNECT",
            "garbage\r\n\r\n|not 'METHOD TARGET HTTP/1.x'",
            "GET http://a.test/ HTTP/2.0\r\n\r\n|not 'METHOD TARGET HTTP/1.x'",
            "GET  http://a.test/ HTTP/1.1\r\n\r\n|not 'METHOD TARGET HTTP/1.x'",
            "G\u00c9T http://a.test/ HTTP/1.1\r\n\r\n|not 'METHOD TARGET HTTP/1.x'",
            "GET http://a.test/ HTTP/1.1\r\nno colon here\r\n\r\n|header line 1",
            "GET http://a.test/ HTTP/1.1\r\nX: a\r\n folded\r\n\r\n|header line 2",
            "CONNECT a.test HTTP/1.1\r\n\r\n|CONNECT needs host:port",
            "CONNECT a.test:99999 HTTP/1.1\r\n\r\n|is not 1-65535",
            "CONNECT 2001:db8::1:443 HTTP/1.1\r\n\r\n|must be in brackets",
            "GET http://user@a.test/ HTTP/1.1\r\n\r\n|user part",
            "GET ftp://a.test/ HTTP/1.1\r\n\r\n|absolute http:// URL",
            "OPTIONS * HTTP/1.1\r\n\r\n|is not a proxy request",
    })
    void malformedRequestsAre400(String caseText) throws Exception {
        String[] parts = caseText.split("\\|");
        start("a.test:*=127.0.0.1");
        String response = exchange(socket, parts[0]);
        assertThat(response).startsWith("HTTP/1.1 400 Bad Request");
        assertThat(body(response)).contains(parts[1]).hasLineCount(1);
        assertThat(connector.attempts).isEmpty();
    }

    @Test
    void anOversizedHeadIs431() throws Exception {
        start(EgressProxy.Settings.defaults().withMaxHeaderBytes(1024), "a.test:*=127.0.0.1");
        String response = exchange(socket, "GET http://a.test/ HTTP/1.1\r\nX-Big: " + "x".repeat(2000) + "\r\n\r\n");
        assertThat(response).startsWith("HTTP/1.1 431 Request Header Fields Too Large");
        assertThat(body(response)).isEqualTo("sandbox4j egress: the request head is larger than 1024 bytes\n");
        // A head that never ends is cut off at the same bound.
        String endless = exchange(socket, "GET http://a.test/ HTTP/1.1\r\n" + "X: y\r\n".repeat(300));
        assertThat(endless).startsWith("HTTP/1.1 431 ");
        assertThat(http.requests).hasValue(0);
    }

    @Test
    void aSlowHeadIs408() throws Exception {
        EgressProxy proxy = start(EgressProxy.Settings.defaults().withHeaderTimeout(Duration.ofMillis(300)),
                "a.test:*=127.0.0.1");
        try (SocketChannel client = Loopback.connect(socket)) {
            Loopback.send(client, "GET http://a.test/ HTTP/1.1\r\n");
            long started = System.nanoTime();
            String response = Loopback.readAll(client);
            assertThat(response).startsWith("HTTP/1.1 408 Request Timeout");
            assertThat(body(response)).isEqualTo("sandbox4j egress: the request head did not arrive within 300 ms\n");
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(20));
        }
        awaitDecisions(proxy, 1);
        assertThat(proxy.decisions().get(0).reason()).contains("did not arrive within 300 ms");
    }

    @Test
    void connectionsBeyondTheCapGet503() throws Exception {
        EgressProxy proxy = start(EgressProxy.Settings.defaults().withMaxConnections(2), "a.test:*=127.0.0.1");
        try (SocketChannel first = Loopback.connect(socket); SocketChannel second = Loopback.connect(socket)) {
            assertThat(first.isConnected() && second.isConnected()).isTrue();
            awaitLive(proxy, 2);
            String response = exchange(socket, get("http://a.test/"));
            assertThat(response).startsWith("HTTP/1.1 503 Service Unavailable");
            assertThat(body(response)).isEqualTo(
                    "sandbox4j egress: this sandbox already has 2 open connections, the limit; retry when one closes\n");
            assertThat(proxy.decisions()).anySatisfy(d -> assertThat(d.reason()).contains("2 open connections"));
        }
        awaitLive(proxy, 0);
        assertThat(exchange(socket, get("http://a.test:" + http.port() + "/"))).startsWith("HTTP/1.1 200 ");
    }

    @Test
    void anIdleTunnelIsClosed() throws Exception {
        try (Loopback.EchoServer echo = new Loopback.EchoServer()) {
            EgressProxy proxy = start(EgressProxy.Settings.defaults().withIdleTimeout(Duration.ofMillis(1000)),
                    "127.0.0.1:" + echo.port());
            try (SocketChannel client = Loopback.connect(socket)) {
                Loopback.send(client, "CONNECT 127.0.0.1:" + echo.port() + " HTTP/1.1\r\n\r\n");
                assertThat(Loopback.readUntil(client, "\r\n\r\n")).startsWith("HTTP/1.1 200 ");
                Loopback.send(client, "ping");
                assertThat(Loopback.readUntil(client, "ping")).isEqualTo("ping");
                long started = System.nanoTime();
                assertThat(Loopback.readAll(client)).isEmpty();
                assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(20));
            }
            awaitDecisions(proxy, 1);
            assertThat(proxy.decisions().get(0).reason()).contains("closed after 1000 ms without traffic");
        }
    }

    @Test
    void closeKillsLiveTunnelsRemovesTheSocketAndIsIdempotent() throws Exception {
        try (Loopback.EchoServer echo = new Loopback.EchoServer()) {
            EgressProxy proxy = start("127.0.0.1:" + echo.port());
            assertThat(Files.exists(socket)).isTrue();
            try (SocketChannel client = Loopback.connect(socket)) {
                Loopback.send(client, "CONNECT 127.0.0.1:" + echo.port() + " HTTP/1.1\r\n\r\n");
                assertThat(Loopback.readUntil(client, "\r\n\r\n")).startsWith("HTTP/1.1 200 ");
                proxy.close();
                assertThat(Loopback.readAll(client)).isEmpty();
            }
            assertThat(proxy.isClosed()).isTrue();
            assertThat(proxy.liveConnections()).isZero();
            assertThat(Files.exists(socket)).isFalse();
            proxy.close();
            assertThatThrownBy(() -> Loopback.connect(socket)).isInstanceOf(IOException.class);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (connectionThreads() > 0 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertThat(connectionThreads()).isZero();
        }
    }

    @Test
    void theSocketIsOwnerOnlyAndAnExistingPathIsRefused() throws Exception {
        start("a.test");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(socket))).isEqualTo("rw-------");
        assertThat(Files.list(dir).map(p -> p.getFileName().toString())).containsExactly("egress.sock");
        assertThatThrownBy(() -> EgressProxy.start(socket, EgressPolicy.NONE, EgressProxy.Settings.defaults()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(socket.toString())
                .hasMessageContaining("something already exists there");
        Path file = Files.writeString(dir.resolve("plain"), "x");
        assertThatThrownBy(() -> EgressProxy.start(file, EgressPolicy.NONE, EgressProxy.Settings.defaults()))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(Files.readString(file)).isEqualTo("x");
    }

    @Test
    void theAuditFileHasOneEscapedJsonLinePerDecision() throws Exception {
        Path audit = dir.resolve("audit.jsonl");
        EgressProxy proxy = start(EgressProxy.Settings.defaults().withAuditFile(audit).withResolver(name -> {
            throw new UnknownHostException(name);
        }), "127.0.0.1:" + http.port());
        String allowed = exchange(socket, get("http://127.0.0.1:" + http.port() + "/audit"));
        exchange(socket, get("http://unlisted.example/"));
        exchange(socket, "CONNECT a\"b\\c:443 HTTP/1.1\r\n\r\n");
        proxy.close();
        // Lines are written when each connection ends, which need not be the order the client saw answers in.
        List<String> lines = new ArrayList<>(Files.readAllLines(audit, StandardCharsets.UTF_8));
        assertThat(lines).hasSize(3);
        lines.sort(java.util.Comparator.comparing((String line) -> !line.contains("ALLOWED"))
                .thenComparing(line -> !line.contains("unlisted.example")));
        assertThat(lines.get(0)).startsWith("{\"time\":\"").contains(
                "\"method\":\"GET\",\"host\":\"127.0.0.1\",\"port\":" + http.port() + ",\"verdict\":\"ALLOWED\"",
                "\"reason\":\"sandbox4j egress: allowed by rule '127.0.0.1:" + http.port() + "'\"",
                "\"bytesToClient\":" + allowed.length() + "}");
        assertThat(lines.get(1)).contains("\"host\":\"unlisted.example\",\"port\":80,\"verdict\":\"REFUSED\"",
                "\"bytesToServer\":0,\"bytesToClient\":0");
        assertThat(lines.get(2)).contains("\"host\":\"a\\\"b\\\\c\"", "'a\\\"b\\\\c' is not a DNS name");
    }

    @Test
    void concurrentClientsAreServedIndependently() throws Exception {
        EgressProxy proxy = start("allowed.test:" + http.port() + "=127.0.0.1");
        int clients = 16;
        ExecutorService pool = Executors.newFixedThreadPool(clients);
        try {
            List<Callable<String>> calls = new ArrayList<>();
            for (int i = 0; i < clients; i++) {
                int n = i;
                calls.add(() -> exchange(socket, n % 4 == 3
                        ? get("http://unlisted.example/")
                        : get("http://allowed.test:" + http.port() + "/c" + n)));
            }
            List<String> responses = new ArrayList<>();
            for (Future<String> f : pool.invokeAll(calls)) {
                responses.add(f.get());
            }
            for (int i = 0; i < clients; i++) {
                if (i % 4 == 3) {
                    assertThat(responses.get(i)).startsWith("HTTP/1.1 403 ");
                } else {
                    assertThat(body(responses.get(i))).isEqualTo("hello from loopback /c" + i);
                }
            }
            assertThat(http.requests).hasValue(12);
        } finally {
            pool.shutdownNow();
        }
        awaitDecisions(proxy, clients);
        assertThat(proxy.decisions()).hasSize(clients);
    }

    @Test
    void settingsRefuseNonsense() {
        EgressProxy.Settings defaults = EgressProxy.Settings.defaults();
        assertThat(defaults.maxConnections()).isEqualTo(64);
        assertThat(defaults.headerTimeout()).isEqualTo(Duration.ofSeconds(10));
        assertThat(defaults.idleTimeout()).isEqualTo(Duration.ofMinutes(5));
        assertThat(defaults.connectTimeout()).isEqualTo(Duration.ofSeconds(10));
        assertThat(defaults.maxHeaderBytes()).isEqualTo(64 * 1024);
        assertThat(defaults.auditFile()).isEmpty();
        assertThatThrownBy(() -> defaults.withMaxConnections(0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("maxConnections");
        assertThatThrownBy(() -> defaults.withIdleTimeout(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("idleTimeout");
    }

    private static long connectionThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith("sandbox4j-egress-") && t.getName().contains("-conn-"))
                .count();
    }

    private static void awaitLive(EgressProxy proxy, int count) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (proxy.liveConnections() != count && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(proxy.liveConnections()).isEqualTo(count);
    }

    private static void awaitDecisions(EgressProxy proxy, int count) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (proxy.decisions().size() < count && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(proxy.decisions()).hasSizeGreaterThanOrEqualTo(count);
    }
}
