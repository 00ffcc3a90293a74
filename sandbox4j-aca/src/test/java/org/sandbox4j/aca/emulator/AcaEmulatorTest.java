package org.sandbox4j.aca.emulator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.sandbox4j.aca.emulator.Json.obj;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.math.BigDecimal;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sandbox4j.testkit.tck.LoopbackHttpServer;

/** The emulator driven over real HTTP on loopback with java.net.http, as the backend will drive it. */
class AcaEmulatorTest {

    private static final String TOKEN = "test-token-7f3a";
    private static final String GROUP = AcaEmulator.groupPath("sub1", "rg1", "grp1");
    private static final String V = "api-version=" + AcaEmulator.API_VERSION;

    @TempDir
    Path state;

    private AcaEmulator emu;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @BeforeEach
    void start() throws IOException {
        emu = AcaEmulator.start(state, TOKEN);
    }

    @AfterEach
    void stop() {
        emu.close();
    }

    // ----------------------------------------------------------------------------------------------------- helpers

    private HttpResponse<byte[]> call(String method, String pathAndQuery, byte[] body, String token, String type)
            throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(emu.baseUrl() + pathAndQuery))
                .timeout(Duration.ofSeconds(30))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofByteArray(body));
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        if (body != null) {
            b.header("Content-Type", type);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    private HttpResponse<byte[]> json(String method, String path, Object body) throws Exception {
        String sep = path.contains("?") ? "&" : "?";
        return call(method, path + sep + V, body == null ? null : Json.write(body).getBytes(StandardCharsets.UTF_8),
                TOKEN, "application/json");
    }

    private static Map<String, Object> body(HttpResponse<byte[]> r) {
        return Json.parseObject(new String(r.body(), StandardCharsets.UTF_8));
    }

    /** A JSON number as core's reader returns it. */
    private static BigDecimal n(long value) {
        return BigDecimal.valueOf(value);
    }

    private static String text(HttpResponse<byte[]> r) {
        return new String(r.body(), StandardCharsets.UTF_8);
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    private static String sb(String id) {
        return GROUP + "/sandboxes/" + id;
    }

    private String create(Map<String, Object> labels) throws Exception {
        HttpResponse<byte[]> r = json("PUT", GROUP + "/sandboxes", obj(
                "sourcesRef", obj("diskImage", obj("name", "python", "isPublic", true)),
                "labels", labels));
        assertThat(r.statusCode()).as(text(r)).isEqualTo(201);
        Map<String, Object> o = body(r);
        assertThat(o.get("state")).isEqualTo("Creating");
        return (String) o.get("id");
    }

    private String running() throws Exception {
        String id = create(obj("kind", "k"));
        assertThat(state(id)).isEqualTo("Running");
        return id;
    }

    private String state(String id) throws Exception {
        HttpResponse<byte[]> r = json("GET", sb(id), null);
        assertThat(r.statusCode()).as(text(r)).isEqualTo(200);
        return (String) body(r).get("state");
    }

    private HttpResponse<byte[]> exec(String id, String command, String wd) throws Exception {
        return json("POST", sb(id) + "/executeShellCommand",
                wd == null ? obj("command", command) : obj("command", command, "workingDirectory", wd));
    }

    private HttpResponse<byte[]> put(String id, String path, String content) throws Exception {
        return call("PUT", sb(id) + "/files?path=" + enc(path) + "&createDirs=true&" + V,
                content.getBytes(StandardCharsets.UTF_8), TOKEN, "application/octet-stream");
    }

    private static String errorCode(HttpResponse<byte[]> r) {
        return (String) ((Map<?, ?>) body(r).get("error")).get("code");
    }

    // -------------------------------------------------------------------------------------------------- transport

    @Test
    void bearerTokenAndApiVersionAreChecked() throws Exception {
        HttpResponse<byte[]> none = call("GET", GROUP + "/sandboxes?" + V, null, null, null);
        assertThat(none.statusCode()).isEqualTo(401);
        assertThat(none.headers().firstValue("WWW-Authenticate")).hasValue("Bearer");
        assertThat(call("GET", GROUP + "/sandboxes?" + V, null, "wrong", null).statusCode()).isEqualTo(401);
        HttpResponse<byte[]> noVersion = call("GET", GROUP + "/sandboxes", null, TOKEN, null);
        assertThat(noVersion.statusCode()).isEqualTo(400);
        assertThat(errorCode(noVersion)).isEqualTo("InvalidApiVersion");
        assertThat(call("GET", GROUP + "/sandboxes?api-version=2024-01-01", null, TOKEN, null).statusCode())
                .isEqualTo(400);
        assertThat(json("GET", GROUP + "/sandboxes", null).statusCode()).isEqualTo(200);
        assertThat(json("GET", GROUP + "/nothing", null).statusCode()).isEqualTo(404);
    }

    @Test
    void forbiddenWhileTheRolePropagatesThenSuccess() throws Exception {
        emu.failFirstWith403(2);
        HttpResponse<byte[]> a = json("GET", GROUP + "/sandboxes", null);
        assertThat(a.statusCode()).isEqualTo(403);
        assertThat(errorCode(a)).isEqualTo("AuthorizationFailed");
        assertThat(json("GET", GROUP + "/sandboxes", null).statusCode()).isEqualTo(403);
        assertThat(json("GET", GROUP + "/sandboxes", null).statusCode()).isEqualTo(200);
    }

    @Test
    void throttlingCarriesRetryAfterAndChangesNothing() throws Exception {
        emu.throttleNext(1, 7);
        HttpResponse<byte[]> r = json("PUT", GROUP + "/sandboxes",
                obj("sourcesRef", obj("diskImage", obj("name", "python", "isPublic", true))));
        assertThat(r.statusCode()).isEqualTo(429);
        assertThat(r.headers().firstValue("Retry-After")).hasValue("7");
        assertThat(emu.sandboxIds()).isEmpty();
        create(obj());
        assertThat(emu.sandboxIds()).hasSize(1);
    }

    @Test
    void serverErrorsThenRecovery() throws Exception {
        emu.failNextWith5xx(2);
        assertThat(json("GET", GROUP + "/sandboxes", null).statusCode()).isEqualTo(503);
        assertThat(json("GET", GROUP + "/sandboxes", null).statusCode()).isEqualTo(503);
        assertThat(json("GET", GROUP + "/sandboxes", null).statusCode()).isEqualTo(200);
    }

    @Test
    void requestsAreLogged() throws Exception {
        String id = running();
        emu.clearRequests();
        exec(id, "true", null);
        List<AcaEmulator.Request> log = emu.requests();
        assertThat(log).hasSize(1);
        assertThat(log.get(0).method()).isEqualTo("POST");
        assertThat(log.get(0).path()).isEqualTo(sb(id) + "/executeShellCommand");
        assertThat(log.get(0).query()).isEqualTo(V);
        assertThat(Json.parseObject(log.get(0).bodyText())).containsEntry("command", "true");
    }

    // ---------------------------------------------------------------------------------------------- state machine

    @Test
    void createGetAndTheCreationLatency() throws Exception {
        emu.creationLatency(Duration.ofMillis(400));
        String id = create(obj("scope", "s", "thread", "t"));
        Map<String, Object> got = body(json("GET", sb(id), null));
        assertThat(got.get("state")).isEqualTo("Creating");
        assertThat(got.get("labels")).isEqualTo(obj("scope", "s", "thread", "t"));
        assertThat(got.get("sourcesRef")).isEqualTo(obj("diskImage", obj("name", "python", "isPublic", true)));
        assertThat(got.get("resources")).isEqualTo(obj("cpu", "1000m", "memory", "2048Mi"));
        assertThat(exec(id, "true", null).statusCode()).isEqualTo(409);
        Thread.sleep(500);
        assertThat(state(id)).isEqualTo("Running");
        assertThat(body(json("GET", sb(id), null)).get("stateDetails")).isEqualTo(obj());
    }

    @Test
    void createRefusesBadSourcesAndLongLabelValues() throws Exception {
        HttpResponse<byte[]> unknown = json("PUT", GROUP + "/sandboxes",
                obj("sourcesRef", obj("diskImage", obj("name", "cobol-1", "isPublic", true))));
        assertThat(unknown.statusCode()).isEqualTo(400);
        assertThat(json("PUT", GROUP + "/sandboxes", obj()).statusCode()).isEqualTo(400);
        assertThat(json("PUT", GROUP + "/sandboxes", obj("sourcesRef", obj("diskImage", obj("id", "nope"))))
                .statusCode()).isEqualTo(400);
        HttpResponse<byte[]> longLabel = json("PUT", GROUP + "/sandboxes", obj(
                "sourcesRef", obj("diskImage", obj("name", "python", "isPublic", true)),
                "labels", obj("agent", "a".repeat(64))));
        assertThat(longLabel.statusCode()).isEqualTo(400);
        assertThat(errorCode(longLabel)).isEqualTo("InvalidLabel");
        create(obj("agent", "a".repeat(63)));
    }

    @Test
    void listFiltersByLabelsWithAndSemantics() throws Exception {
        String a = create(obj("scope", "s1", "thread", "t1", "kind", "x"));
        String b = create(obj("scope", "s1", "thread", "t2", "kind", "x"));
        String c = create(obj("scope", "s2", "thread", "t1", "kind", "y"));
        assertThat(ids(json("GET", GROUP + "/sandboxes", null))).containsExactly(a, b, c);
        assertThat(ids(json("GET", GROUP + "/sandboxes?labels=" + enc("scope=s1,thread=t1"), null)))
                .containsExactly(a);
        assertThat(ids(json("GET", GROUP + "/sandboxes?labels=" + enc("scope=s1"), null))).containsExactly(a, b);
        assertThat(ids(json("GET", GROUP + "/sandboxes?labels=" + enc("kind=y"), null))).containsExactly(c);
        assertThat(ids(json("GET", GROUP + "/sandboxes?labels=" + enc("kind=z"), null))).isEmpty();
        // another group sees nothing
        assertThat(ids(json("GET", AcaEmulator.groupPath("sub1", "rg1", "other") + "/sandboxes", null))).isEmpty();
    }

    @Test
    void listPagesWithNextLinkWhenAsked() throws Exception {
        emu.pageSize(2);
        String a = create(obj("k", "v"));
        String b = create(obj("k", "v"));
        String c = create(obj("k", "v"));
        Map<String, Object> first = body(json("GET", GROUP + "/sandboxes?labels=" + enc("k=v"), null));
        assertThat(((List<?>) first.get("value"))).hasSize(2);
        String next = (String) first.get("nextLink");
        assertThat(next).startsWith(emu.baseUrl() + GROUP + "/sandboxes?");
        HttpResponse<byte[]> second = http.send(HttpRequest.newBuilder(URI.create(next))
                .header("Authorization", "Bearer " + TOKEN).build(), HttpResponse.BodyHandlers.ofByteArray());
        assertThat(ids(second)).containsExactly(c);
        assertThat(body(second)).doesNotContainKey("nextLink");
        assertThat(a).isNotEqualTo(b);
    }

    @SuppressWarnings("unchecked")
    private static List<String> ids(HttpResponse<byte[]> r) {
        assertThat(r.statusCode()).as(new String(r.body(), StandardCharsets.UTF_8)).isEqualTo(200);
        return ((List<Map<String, Object>>) body(r).get("value")).stream().map(m -> (String) m.get("id")).toList();
    }

    @Test
    void stopResumeSuspendAndDisabled() throws Exception {
        String id = running();
        assertThat(json("POST", sb(id) + "/stop", null).statusCode()).isEqualTo(202);
        Map<String, Object> stopped = body(json("GET", sb(id), null));
        assertThat(stopped.get("state")).isEqualTo("Stopped");
        assertThat(stopped.get("stateDetails")).isEqualTo(obj("stoppedReason", "UserRequested"));
        assertThat(json("POST", sb(id) + "/resume", null).statusCode()).isEqualTo(202);
        assertThat(state(id)).isEqualTo("Running");

        emu.suspend(id);
        assertThat(state(id)).isEqualTo("Suspended");
        assertThat(json("POST", sb(id) + "/resume", null).statusCode()).isEqualTo(202);
        assertThat(state(id)).isEqualTo("Running");

        emu.disable(id);
        assertThat(body(json("GET", sb(id), null)).get("stateDetails")).isEqualTo(obj("stoppedReason", "Disabled"));
        assertThat(json("POST", sb(id) + "/resume", null).statusCode()).isEqualTo(409);
        assertThat(json("POST", sb(id) + "/enable", null).statusCode()).isEqualTo(202);
        assertThat(state(id)).isEqualTo("Stopped");
        assertThat(json("POST", sb(id) + "/resume", null).statusCode()).isEqualTo(202);
        assertThat(state(id)).isEqualTo("Running");

        emu.stop(id);
        assertThat(state(id)).isEqualTo("Stopped");
        emu.fail(id);
        assertThat(state(id)).isEqualTo("Failed");
        assertThat(json("POST", sb(id) + "/resume", null).statusCode()).isEqualTo(409);
    }

    @Test
    void aResumingSandboxReadsResumingUntilRunning() throws Exception {
        String id = running();
        emu.resumeLatency(Duration.ofMillis(300));
        emu.suspend(id);
        assertThat(json("POST", sb(id) + "/resume", null).statusCode()).isEqualTo(202);
        assertThat(state(id)).isEqualTo("Resuming");
        // A second resume while it wakes is accepted and changes nothing; exec waits for Running.
        assertThat(json("POST", sb(id) + "/resume", null).statusCode()).isEqualTo(202);
        assertThat(errorCode(exec(id, "true", null))).isEqualTo("SandboxNotRunning");
        Thread.sleep(400);
        assertThat(state(id)).isEqualTo("Running");
    }

    @Test
    void execAndFilesOnANonRunningSandboxAre409() throws Exception {
        String id = running();
        put(id, "/work/a.txt", "x");
        emu.suspend(id);
        for (HttpResponse<byte[]> r : List.of(
                exec(id, "echo hi", null),
                json("GET", sb(id) + "/files?path=" + enc("/work/a.txt"), null),
                put(id, "/work/b.txt", "y"),
                json("DELETE", sb(id) + "/files?path=" + enc("/work/a.txt"), null),
                json("GET", sb(id) + "/files/stat?path=" + enc("/work/a.txt"), null),
                json("GET", sb(id) + "/files/list?path=" + enc("/work"), null),
                json("POST", sb(id) + "/files/mkdir", obj("path", "/work/d")),
                json("POST", sb(id) + "/egresspolicy", obj("defaultAction", "Deny")))) {
            assertThat(r.statusCode()).as(r.request().method() + " " + r.uri()).isEqualTo(409);
            assertThat(errorCode(r)).isEqualTo("SandboxNotRunning");
        }
    }

    @Test
    void deleteGoesThroughDeletingTo404() throws Exception {
        emu.deletionLatency(Duration.ofMillis(300));
        String id = create(obj("scope", "s"));
        Path root = emu.guestRoot(id);
        assertThat(json("DELETE", sb(id), null).statusCode()).isEqualTo(202);
        assertThat(state(id)).isEqualTo("Deleting");
        assertThat(ids(json("GET", GROUP + "/sandboxes?labels=" + enc("scope=s"), null))).containsExactly(id);
        assertThat(exec(id, "true", null).statusCode()).isEqualTo(409);
        assertThat(json("DELETE", sb(id), null).statusCode()).isEqualTo(202);
        Thread.sleep(400);
        HttpResponse<byte[]> gone = json("GET", sb(id), null);
        assertThat(gone.statusCode()).isEqualTo(404);
        assertThat(errorCode(gone)).isEqualTo("SandboxNotFound");
        assertThat(json("DELETE", sb(id), null).statusCode()).isEqualTo(404);
        assertThat(ids(json("GET", GROUP + "/sandboxes", null))).isEmpty();
        assertThat(root).doesNotExist();
    }

    @Test
    void deleteWithoutLatencyIs404AtOnce() throws Exception {
        String id = running();
        assertThat(json("DELETE", sb(id), null).statusCode()).isEqualTo(202);
        assertThat(json("GET", sb(id), null).statusCode()).isEqualTo(404);
        assertThat(json("POST", sb(id) + "/resume", null).statusCode()).isEqualTo(404);
    }

    // ------------------------------------------------------------------------------------------ policies, images

    @Test
    void lifecyclePolicyReplacesTheWholePolicy() throws Exception {
        String id = running();
        Map<String, Object> policy = obj(
                "autoSuspendPolicy", obj("enabled", true, "interval", n(60), "mode", "Memory"),
                "autoDeletePolicy", obj("enabled", true, "deleteIntervalInSeconds", n(600)));
        HttpResponse<byte[]> r = json("POST", sb(id) + "/lifecycle", policy);
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(body(json("GET", sb(id), null)).get("lifecycle")).isEqualTo(policy);
        Map<String, Object> half = obj("autoDeletePolicy", obj("enabled", false, "deleteIntervalInSeconds", n(0)));
        json("POST", sb(id) + "/lifecycle", half);
        assertThat(body(json("GET", sb(id), null)).get("lifecycle")).isEqualTo(half);
    }

    @Test
    void egressPolicyStoredAtCreateAndReplacedWhileRunning() throws Exception {
        Map<String, Object> deny = obj("defaultAction", "Deny", "trafficInspection", "Full", "hostRules",
                List.of(obj("pattern", "pypi.org", "action", "Allow"), obj("pattern", "*.pythonhosted.org",
                        "action", "Allow")));
        HttpResponse<byte[]> r = json("PUT", GROUP + "/sandboxes", obj(
                "sourcesRef", obj("diskImage", obj("name", "python", "isPublic", true)), "egressPolicy", deny));
        String id = (String) body(r).get("id");
        assertThat(body(json("GET", sb(id), null)).get("egressPolicy")).isEqualTo(deny);
        Map<String, Object> closed = obj("defaultAction", "Deny", "trafficInspection", "Full", "hostRules", List.of());
        assertThat(json("POST", sb(id) + "/egresspolicy", closed).statusCode()).isEqualTo(200);
        assertThat(body(json("GET", sb(id), null)).get("egressPolicy")).isEqualTo(closed);
        assertThat(json("POST", sb(id) + "/egresspolicy", obj("defaultAction", "Maybe")).statusCode()).isEqualTo(400);
        assertThat(body(json("GET", sb(id) + "/egress-decisions", null)).get("value")).isEqualTo(List.of());
    }

    /** What curl in the guest got from {@code url}: the status, or 000 when nothing answered. */
    private String curl(String id, String options, URI url) throws Exception {
        HttpResponse<byte[]> r = exec(id, "curl -s -o /dev/null -w '%{http_code}' --max-time 10 " + options + " '" + url
                + "'", null);
        assertThat(r.statusCode()).as(text(r)).isEqualTo(200);
        return (String) body(r).get("stdout");
    }

    /**
     * The service's own default is Allow (3P-aca-rs: "a policy that omits it is an open sandbox"), so a sandbox
     * created without a policy, or with an Allow default, reaches the emulated internet (every public host, each a
     * loopback fixture of this test) with no rule naming it.
     */
    @Test
    void aSandboxCreatedWithoutAPolicyIsOpen() throws Exception {
        try (LoopbackHttpServer somewhere = LoopbackHttpServer.start("somewhere")) {
            emu.publicHost("somewhere.example.test", new InetSocketAddress(InetAddress.getLoopbackAddress(),
                    somewhere.port()));
            String id = running();
            assertThat(body(json("GET", sb(id), null))).doesNotContainKey("egressPolicy");
            assertThat(curl(id, "", somewhere.url("somewhere.example.test"))).isEqualTo("200");
            assertThat(somewhere.requests()).isEqualTo(1);

            Map<String, Object> deny = obj("defaultAction", "Deny", "trafficInspection", "Full", "hostRules", List.of());
            assertThat(json("POST", sb(id) + "/egresspolicy", deny).statusCode()).isEqualTo(200);
            assertThat(curl(id, "", somewhere.url("somewhere.example.test"))).isNotEqualTo("200");
            assertThat(json("POST", sb(id) + "/egresspolicy", obj("defaultAction", "Allow")).statusCode())
                    .isEqualTo(200);
            assertThat(curl(id, "", somewhere.url("somewhere.example.test"))).isEqualTo("200");
            assertThat(somewhere.requests()).isEqualTo(2);
        }
    }

    /**
     * The guest's network looks like a microVM's (a NIC in 100.96.0.0/24 and a default route), and the platform's
     * filter, set from outside, lets nothing leave but by loopback. The probes go to the guest's own gateway address,
     * inside the namespace this test made; nothing reaches another network.
     */
    @Test
    void theGuestHasANicAndARouteBehindTheFilter() throws Exception {
        String id = running();
        Map<String, Object> net = body(exec(id, "cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' ' | sort;"
                + " while read -r dev dest rest; do [ \"$dest\" = 00000000 ] && echo \"default via $dev\"; done"
                + " < /proc/net/route", null));
        assertThat(((String) net.get("stdout")).lines().toList()).as(net.toString())
                .contains("eth0", "lo", "default via eth0");
        assertThat(curl(id, "--noproxy '*'", URI.create("http://100.96.0.1:8080/"))).isEqualTo("000");
        Map<String, Object> udp = body(exec(id, "python3 -c \"import socket; s = socket.socket(socket.AF_INET, "
                + "socket.SOCK_DGRAM); print(s.sendto(b'x', ('100.96.0.1', 53)))\" 2>&1 | tail -n 1", null));
        assertThat((String) udp.get("stdout")).as(udp.toString()).contains("Operation not permitted");
        Map<String, Object> env = body(exec(id, "env", null));
        assertThat((String) env.get("stdout")).doesNotContainIgnoringCase("proxy");
    }

    @Test
    void theStoredEgressPolicyIsEnforcedByTheProxyAndFollowsItsReplacement() throws Exception {
        try (LoopbackHttpServer allowed = LoopbackHttpServer.start("allowed");
                LoopbackHttpServer other = LoopbackHttpServer.start("other")) {
            emu.publicHost("allowed.example.test", new InetSocketAddress(InetAddress.getLoopbackAddress(),
                    allowed.port()));
            Map<String, Object> allow = obj("defaultAction", "Deny", "trafficInspection", "Full", "hostRules",
                    List.of(obj("pattern", "allowed.example.test", "action", "Allow")));
            HttpResponse<byte[]> r = json("PUT", GROUP + "/sandboxes", obj("sourcesRef", obj("diskImage",
                    obj("name", "python", "isPublic", true)), "egressPolicy", allow));
            String id = (String) body(r).get("id");
            assertThat(state(id)).isEqualTo("Running");

            // Deny by default, one Allow rule: the public host is reached through the proxy, nothing else is.
            assertThat(curl(id, "", allowed.url("allowed.example.test"))).isEqualTo("200");
            assertThat(allowed.requests()).isEqualTo(1);
            assertThat(curl(id, "", other.url())).isNotEqualTo("200");
            // ... and only at its own port: the same name on another loopback port is not that host.
            assertThat(curl(id, "", other.url("allowed.example.test"))).isNotEqualTo("200");
            assertThat(curl(id, "--noproxy '*'", other.url())).isEqualTo("000");
            assertThat(other.requests()).isZero();
            // Transparent: the guest is given no proxy, and a client that ignores proxies is filtered all the same.
            assertThat((String) body(exec(id, "env", null)).get("stdout")).doesNotContainIgnoringCase("proxy");
            assertThat(curl(id, "--noproxy '*'", allowed.url("allowed.example.test"))).isEqualTo("200");
            assertThat(allowed.requests()).isEqualTo(2);

            // A replaced policy takes effect in the running guest: closed, then open again.
            Map<String, Object> closed = obj("defaultAction", "Deny", "hostRules", List.of());
            assertThat(json("POST", sb(id) + "/egresspolicy", closed).statusCode()).isEqualTo(200);
            assertThat(curl(id, "", allowed.url("allowed.example.test"))).isNotEqualTo("200");
            assertThat(allowed.requests()).isEqualTo(2);
            assertThat(json("POST", sb(id) + "/egresspolicy", allow).statusCode()).isEqualTo(200);
            assertThat(curl(id, "", allowed.url("allowed.example.test"))).isEqualTo("200");

            // What the emulator cannot enforce it refuses, rather than storing it unenforced.
            assertThat(json("POST", sb(id) + "/egresspolicy", obj("defaultAction", "Deny", "hostRules",
                    List.of(obj("pattern", "allowed.example.test", "action", "Deny")))).statusCode()).isEqualTo(501);
            assertThat(json("POST", sb(id) + "/egresspolicy", obj("defaultAction", "Deny", "hostRules",
                    List.of(obj("pattern", "a.example.test:443", "action", "Allow")))).statusCode()).isEqualTo(400);
            assertThat(body(json("GET", sb(id), null)).get("egressPolicy")).isEqualTo(allow);
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void diskImagesPublicCatalogueAndImports() throws Exception {
        List<Map<String, Object>> pub = (List<Map<String, Object>>) body(
                json("GET", GROUP + "/diskimages/public", null)).get("value");
        assertThat(pub).extracting(m -> m.get("name")).contains("python");
        assertThat(json("GET", GROUP + "/diskimages/public/python", null).statusCode()).isEqualTo(200);
        assertThat(json("GET", GROUP + "/diskimages/public/cobol-1", null).statusCode()).isEqualTo(404);

        HttpResponse<byte[]> imp = json("PUT", GROUP + "/diskimages",
                obj("image", obj("base", "myacr.azurecr.io/tools:1"), "labels", obj("name", "tools-1")));
        assertThat(imp.statusCode()).isEqualTo(201);
        String diskId = (String) body(imp).get("id");
        assertThat(body(imp).get("status")).isEqualTo(obj("state", "Creating"));
        Map<String, Object> one = body(json("GET", GROUP + "/diskimages/" + diskId, null));
        assertThat(one.get("status")).isEqualTo(obj("state", "Ready"));
        assertThat(one.get("image")).isEqualTo(obj("base", "myacr.azurecr.io/tools:1"));
        String seeded = emu.importDiskImage("sub1", "rg1", "grp1", "myacr.azurecr.io/team/app@sha256:abc");
        List<Map<String, Object>> all = (List<Map<String, Object>>) body(
                json("GET", GROUP + "/diskimages", null)).get("value");
        assertThat(all).extracting(m -> (Object) ((Map<?, ?>) m.get("image")).get("base"))
                .containsExactly("myacr.azurecr.io/tools:1", "myacr.azurecr.io/team/app@sha256:abc");
        assertThat(all.get(1).get("name")).isEqualTo("app-sha256-abc");

        HttpResponse<byte[]> fromDisk = json("PUT", GROUP + "/sandboxes",
                obj("sourcesRef", obj("diskImage", obj("id", seeded))));
        assertThat(fromDisk.statusCode()).isEqualTo(201);
        assertThat(json("DELETE", GROUP + "/diskimages/" + diskId, null).statusCode()).isEqualTo(204);
        assertThat(json("GET", GROUP + "/diskimages/" + diskId, null).statusCode()).isEqualTo(404);
    }

    // ----------------------------------------------------------------------------------------------- exec (bwrap)

    @Test
    void execSeparatesStreamsAndCarriesTheExitCode() throws Exception {
        String id = running();
        HttpResponse<byte[]> r = exec(id, "echo out; echo err >&2; exit 3", null);
        assertThat(r.statusCode()).as(text(r)).isEqualTo(200);
        Map<String, Object> o = body(r);
        assertThat(o.get("stdout")).isEqualTo("out\n");
        assertThat(o.get("stderr")).isEqualTo("err\n");
        assertThat(o.get("exitCode")).isEqualTo(n(3));
        assertThat(o.get("executionTimeMs")).isInstanceOf(BigDecimal.class);
    }

    @Test
    void execRunsAsTheGuestUserAndSharesTheFiles() throws Exception {
        String id = running();
        assertThat(put(id, "/work/in.txt", "hello").statusCode()).isEqualTo(201);
        Map<String, Object> o = body(exec(id, "id -u; cat in.txt; pwd; echo made > out.txt; env | sort", "/work"));
        assertThat((String) o.get("stdout")).startsWith("65534\nhello/work\n").contains("PATH=/usr/bin:/bin");
        assertThat((String) o.get("stdout")).doesNotContain("SANDBOX4J_TCK_HOST_SENTINEL");
        assertThat(text(json("GET", sb(id) + "/files?path=" + enc("/work/out.txt"), null))).isEqualTo("made\n");
        assertThat(exec(id, "true", "/nope").statusCode()).isEqualTo(400);
    }

    /**
     * A background process that keeps a token only in its memory (the file it read is gone) hands it back after a
     * stop and a resume: POST /stop suspends, keeping memory and disk (MS-skill), and a stopped guest runs nothing.
     */
    @Test
    void aBackgroundProcessKeepsItsMemoryAcrossStopAndResume() throws Exception {
        String id = running();
        put(id, "/work/token", "tok-4b1d");
        String keeper = "(token=$(cat /work/token); rm /work/token; echo $$ > /tmp/keeper.pid;"
                + " while [ ! -e /tmp/ask ]; do sleep 0.1; done; echo \"$token\" > /tmp/answer) >/dev/null 2>&1 &"
                + " while [ ! -e /tmp/keeper.pid ]; do sleep 0.1; done; cat /tmp/keeper.pid";
        Map<String, Object> started = body(exec(id, keeper, null));
        String pid = ((String) started.get("stdout")).strip();
        assertThat(pid).as(started.toString()).matches("[0-9]+");

        assertThat(json("POST", sb(id) + "/stop", null).statusCode()).isEqualTo(202);
        assertThat(state(id)).isEqualTo("Stopped");
        assertThat(errorCode(exec(id, "true", null))).isEqualTo("SandboxNotRunning");
        Path freezer = Path.of("/sys/fs/cgroup/freezer/sandbox4j-aca-" + id + "/freezer.state");
        if (Files.exists(freezer)) {
            assertThat(Files.readString(freezer).strip()).isEqualTo("FROZEN");
        }
        assertThat(json("POST", sb(id) + "/resume", null).statusCode()).isEqualTo(202);
        assertThat(state(id)).isEqualTo("Running");

        Map<String, Object> answer = body(exec(id, "cat /tmp/keeper.pid; touch /tmp/ask; n=0;"
                + " while [ ! -s /tmp/answer ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n+1)); done; cat /tmp/answer",
                null));
        assertThat(answer.get("stdout")).as(answer.toString()).isEqualTo(pid + "\ntok-4b1d\n");

        // An auto-suspend (Memory mode) keeps it too; a disabled sandbox's guest ends.
        Map<String, Object> seen = body(exec(id, "(sleep 300 &) ; echo started", null));
        assertThat(seen.get("stdout")).isEqualTo("started\n");
        emu.suspend(id);
        assertThat(json("POST", sb(id) + "/resume", null).statusCode()).isEqualTo(202);
        assertThat(body(exec(id, "ps -eo args | grep -c '^sleep 300'", null)).get("stdout")).isEqualTo("1\n");
        emu.disable(id);
        assertThat(json("POST", sb(id) + "/enable", null).statusCode()).isEqualTo(202);
        assertThat(json("POST", sb(id) + "/resume", null).statusCode()).isEqualTo(202);
        Map<String, Object> after = body(exec(id, "ps -eo args | grep -c '^sleep 300'; test -e /tmp/answer || echo gone",
                null));
        assertThat(after.get("stdout")).as(after.toString()).isEqualTo("0\ngone\n");
    }

    @Test
    void anAutoSuspendInDiskModeRestartsTheGuestFresh() throws Exception {
        String id = running();
        json("POST", sb(id) + "/lifecycle", obj("autoSuspendPolicy", obj("enabled", true, "interval", n(60),
                "mode", "Disk")));
        put(id, "/work/kept", "disk");
        assertThat(body(exec(id, "(sleep 300 &) ; echo started", null)).get("stdout")).isEqualTo("started\n");
        emu.suspend(id);
        assertThat(json("POST", sb(id) + "/resume", null).statusCode()).isEqualTo(202);
        Map<String, Object> after = body(exec(id, "ps -eo args | grep -c '^sleep 300'; cat /work/kept", null));
        assertThat(after.get("stdout")).as(after.toString()).isEqualTo("0\ndisk");
    }

    @Test
    void theGuestHasAProcessLimit() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(Files.isWritable(Path.of("/sys/fs/cgroup/pids/cgroup.procs")),
                "no writable v1 pids controller");
        String id = running();
        HttpResponse<byte[]> bomb = exec(id, "n=0; while [ $n -lt 2000 ]; do sleep 30 & n=$((n+1)); done 2>/dev/null;"
                + " echo done", null);
        assertThat(bomb.statusCode()).as(text(bomb)).isEqualTo(200);
        long current = Long.parseLong(Files.readString(
                Path.of("/sys/fs/cgroup/pids/sandbox4j-aca-" + id + "/pids.current")).trim());
        assertThat(current).isLessThanOrEqualTo(AcaEmulator.GUEST_PIDS_MAX).isGreaterThan(900);
        assertThat(json("POST", sb(id) + "/stop", null).statusCode()).isEqualTo(202);
        json("POST", sb(id) + "/resume", null);
        assertThat(body(exec(id, "echo alive", null)).get("stdout")).isEqualTo("alive\n");
        assertThat(json("DELETE", sb(id), null).statusCode()).isEqualTo(202);
        assertThat(Path.of("/sys/fs/cgroup/pids/sandbox4j-aca-" + id)).doesNotExist();
    }

    @Test
    void execTimeoutIs504AndKillsTheCommand() throws Exception {
        String id = running();
        emu.execTimeout(Duration.ofMillis(500));
        long t0 = System.nanoTime();
        HttpResponse<byte[]> r = exec(id, "sleep 30", null);
        assertThat(r.statusCode()).isEqualTo(504);
        assertThat(errorCode(r)).isEqualTo("GatewayTimeout");
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(10));
    }

    // ------------------------------------------------------------------------------------------------------ files

    @Test
    @SuppressWarnings("unchecked")
    void filesRoundTripWithLinksStatAndList() throws Exception {
        String id = running();
        assertThat(put(id, "/work/dir/a.txt", "12345").statusCode()).isEqualTo(201);
        assertThat(put(id, "/work/dir/a.txt", "123456").statusCode()).isEqualTo(200);
        assertThat(text(json("GET", sb(id) + "/files?path=" + enc("/work/dir/a.txt"), null))).isEqualTo("123456");
        assertThat(body(exec(id, "ln -s a.txt link; ln -s /etc/passwd abs; mkfifo fifo; mkdir sub", "/work/dir"))
                .get("exitCode")).isEqualTo(n(0));

        Map<String, Object> st = body(json("GET", sb(id) + "/files/stat?path=" + enc("/work/dir/link"), null));
        assertThat(st).containsEntry("name", "link").containsEntry("path", "/work/dir/link")
                .containsEntry("isSymlink", true).containsEntry("isDir", false)
                .containsEntry("symlinkTarget", "a.txt").containsEntry("size", n(5));
        Map<String, Object> fst = body(json("GET", sb(id) + "/files/stat?path=" + enc("/work/dir/a.txt"), null));
        assertThat(fst).containsEntry("size", n(6)).containsEntry("mode", n(0644)).containsEntry("isSymlink", false)
                .doesNotContainKey("symlinkTarget").containsKey("modifiedTime");
        assertThat(json("GET", sb(id) + "/files/stat?path=" + enc("/work/dir/none"), null).statusCode())
                .isEqualTo(404);

        Map<String, Object> ls = body(json("GET", sb(id) + "/files/list?path=" + enc("/work/dir"), null));
        assertThat(ls.get("path")).isEqualTo("/work/dir");
        List<Map<String, Object>> entries = (List<Map<String, Object>>) ls.get("entries");
        assertThat(entries).extracting(e -> e.get("name")).containsExactly("a.txt", "abs", "fifo", "link", "sub");
        assertThat(entries).extracting(e -> e.get("path"))
                .containsExactly("/work/dir/a.txt", "/work/dir/abs", "/work/dir/fifo", "/work/dir/link",
                        "/work/dir/sub");
        assertThat(entries.get(1)).containsEntry("isSymlink", true).containsEntry("symlinkTarget", "/etc/passwd");
        assertThat(entries.get(4)).containsEntry("isDir", true).containsEntry("isSymlink", false);

        // reads follow links, inside the guest: an absolute target is the guest's /etc/passwd (the image's), not the host's
        assertThat(text(json("GET", sb(id) + "/files?path=" + enc("/work/dir/link"), null))).isEqualTo("123456");
        String guestPasswd = (String) body(exec(id, "cat /etc/passwd", "/")).get("stdout");
        assertThat(guestPasswd).isNotEqualTo(java.nio.file.Files.readString(java.nio.file.Path.of("/etc/passwd")));
        assertThat(text(json("GET", sb(id) + "/files?path=" + enc("/work/dir/abs"), null))).isEqualTo(guestPasswd);
        assertThat(json("GET", sb(id) + "/files?path=" + enc("/work/dir/sub"), null).statusCode()).isEqualTo(400);
        Map<String, Object> fifo = body(json("GET", sb(id) + "/files/stat?path=" + enc("/work/dir/fifo"), null));
        assertThat(fifo).containsEntry("isDir", false).containsEntry("isSymlink", false).containsEntry("size", n(0));
        emu.execTimeout(Duration.ofMillis(300));
        assertThat(json("GET", sb(id) + "/files?path=" + enc("/work/dir/fifo"), null).statusCode()).isEqualTo(504);
        assertThat(json("GET", sb(id) + "/files?path=" + enc("/work/x/../dir/a.txt"), null).statusCode())
                .isEqualTo(400);
        assertThat(json("GET", sb(id) + "/files?path=" + enc("work/dir/a.txt"), null).statusCode()).isEqualTo(400);

        // the host directory is real
        Path host = emu.guestRoot(id).resolve("work/dir");
        assertThat(Files.isSymbolicLink(host.resolve("link"))).isTrue();
        assertThat(Files.readString(host.resolve("a.txt"))).isEqualTo("123456");
    }

    @Test
    void writesWithoutCreateDirsModesMkdirAndDelete() throws Exception {
        String id = running();
        HttpResponse<byte[]> noParent = call("PUT", sb(id) + "/files?path=" + enc("/w/a/b.txt") + "&" + V,
                "x".getBytes(StandardCharsets.UTF_8), TOKEN, "application/octet-stream");
        assertThat(noParent.statusCode()).isEqualTo(404);
        HttpResponse<byte[]> exe = call("PUT", sb(id) + "/files?path=" + enc("/w/run.sh") + "&createDirs=true&mode=755&"
                + V, "echo ran".getBytes(StandardCharsets.UTF_8), TOKEN, "application/octet-stream");
        assertThat(exe.statusCode()).isEqualTo(201);
        assertThat(body(exe)).containsEntry("mode", n(0755));
        assertThat(body(exec(id, "./run.sh", "/w")).get("stdout")).isEqualTo("ran\n");

        assertThat(json("POST", sb(id) + "/files/mkdir", obj("path", "/w/d1/d2")).statusCode()).isEqualTo(201);
        assertThat(json("POST", sb(id) + "/files/mkdir", obj("path", "/w/d1/d2")).statusCode()).isEqualTo(200);
        put(id, "/w/d1/d2/f", "f");
        assertThat(json("DELETE", sb(id) + "/files?path=" + enc("/w/d1") + "&recursive=false", null).statusCode())
                .isEqualTo(409);
        assertThat(json("DELETE", sb(id) + "/files?path=" + enc("/w/d1") + "&recursive=true", null).statusCode())
                .isEqualTo(204);
        assertThat(json("GET", sb(id) + "/files/stat?path=" + enc("/w/d1"), null).statusCode()).isEqualTo(404);
        assertThat(json("DELETE", sb(id) + "/files?path=" + enc("/w/d1"), null).statusCode()).isEqualTo(404);

        // deleting a link removes the link, not its target
        Map<String, Object> ln = body(exec(id, "ln -s run.sh l", "/w"));
        assertThat(ln.get("exitCode")).as(ln.toString()).isEqualTo(n(0));
        assertThat(json("DELETE", sb(id) + "/files?path=" + enc("/w/l"), null).statusCode()).isEqualTo(204);
        assertThat(json("GET", sb(id) + "/files/stat?path=" + enc("/w/run.sh"), null).statusCode()).isEqualTo(200);
    }
}
