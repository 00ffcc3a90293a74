package org.sandbox4j.aca;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.Egress;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.spi.Json;
import org.sandbox4j.core.SandboxEgressNotEnforced;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxSpec;

/**
 * Every request the backend sends, pinned (method, path, query, body), and every answer it reads, against samples of
 * each documented shape ({@code ACA-PROTOCOL.md}). Where a shape is unknown, every documented form is read.
 */
class AcaWireTest {

    private static final String GROUP = "/subscriptions/sub/resourceGroups/rg/sandboxGroups/group";
    private static final String SANDBOX = GROUP + "/sandboxes/sb1";
    private static final String API_VERSION = "2026-02-01-preview";
    private static final SandboxKey KEY = new SandboxKey("tenant", "thread-1", "agent");
    private static final String DENY_ALL_POLICY = "\"egressPolicy\":{\"defaultAction\":\"Deny\","
            + "\"trafficInspection\":\"Full\",\"hostRules\":[]}";

    /** A stub answering one reply per request, in order of the handler's choosing; records everything. */
    private static StubServer stub(Function<StubServer.Request, StubServer.Reply> handler) throws Exception {
        return new StubServer(handler);
    }

    private static StubServer.Request only(StubServer stub) {
        assertThat(stub.requests).hasSize(1);
        StubServer.Request request = stub.requests.get(0);
        assertThat(request.query()).containsEntry("api-version", API_VERSION);
        assertThat(request.authorization()).isEqualTo("Bearer token-for-" + AcaTokenSupplier.DEFAULT_SCOPE);
        return request;
    }

    private static Map<String, String> query(String... pairs) {
        Map<String, String> query = new LinkedHashMap<>();
        query.put("api-version", API_VERSION);
        for (int i = 0; i < pairs.length; i += 2) {
            query.put(pairs[i], pairs[i + 1]);
        }
        return query;
    }

    // ---------------------------------------------------------------- requests

    @Test
    void everyClientCallIsPinned() throws Exception {
        record Expected(String method, String path, Map<String, String> query, String body) {
        }
        List<Map.Entry<Function<AcaClient, Object>, Expected>> calls = List.of(
                Map.entry(c -> c.getSandbox("sb1"), new Expected("GET", SANDBOX, query(), "")),
                Map.entry(c -> c.createSandbox(Map.of("labels", Map.of("kind", "k"))),
                        new Expected("PUT", GROUP + "/sandboxes", query(), "{\"labels\":{\"kind\":\"k\"}}")),
                Map.entry(c -> c.listSandboxes(Map.of("scope", "tenant")),
                        new Expected("GET", GROUP + "/sandboxes", query("labels", "scope=tenant"), "")),
                Map.entry(c -> c.deleteSandbox("sb1"), new Expected("DELETE", SANDBOX, query(), "")),
                Map.entry(c -> c.resume("sb1"), new Expected("POST", SANDBOX + "/resume", query(), "")),
                Map.entry(c -> {
                    c.lifecycle("sb1", Map.of("autoSuspendPolicy", Map.of("enabled", true)));
                    return null;
                }, new Expected("POST", SANDBOX + "/lifecycle", query(), "{\"autoSuspendPolicy\":{\"enabled\":true}}")),
                Map.entry(c -> c.exec("sb1", "echo hi", "/work", Duration.ofSeconds(5), 1024),
                        new Expected("POST", SANDBOX + "/executeShellCommand", query(),
                                "{\"command\":\"echo hi\",\"workingDirectory\":\"/work\"}")),
                Map.entry(c -> c.stat("sb1", "/work/a b"),
                        new Expected("GET", SANDBOX + "/files/stat", query("path", "/work/a b"), "")),
                Map.entry(c -> c.list("sb1", "/work"),
                        new Expected("GET", SANDBOX + "/files/list", query("path", "/work"), "")),
                Map.entry(c -> c.read("sb1", "/work/a", 1024),
                        new Expected("GET", SANDBOX + "/files", query("path", "/work/a"), "")),
                Map.entry(c -> c.write("sb1", "/work/a", "bytes".getBytes(StandardCharsets.UTF_8)),
                        new Expected("PUT", SANDBOX + "/files", query("path", "/work/a", "createDirs", "true"), "bytes")),
                Map.entry(c -> c.publicImages(), new Expected("GET", GROUP + "/diskimages/public", query(), "")),
                Map.entry(c -> c.diskImages(), new Expected("GET", GROUP + "/diskimages", query(), "")));
        for (Map.Entry<Function<AcaClient, Object>, Expected> call : calls) {
            try (StubServer stub = stub(request -> StubServer.Reply.json(200, "{\"id\":\"sb1\",\"value\":[]}"))) {
                call.getKey().apply(stub.backend().client());
                StubServer.Request request = only(stub);
                Expected expected = call.getValue();
                assertThat(request.method()).isEqualTo(expected.method());
                assertThat(request.path()).isEqualTo(expected.path());
                assertThat(request.query()).as(expected.path()).isEqualTo(expected.query());
                assertThat(request.body()).isEqualTo(expected.body());
            }
        }
    }

    @Test
    void everyCreateSendsAnEgressPolicyWhateverTheMode() throws Exception {
        List<String> bodies = new ArrayList<>();
        try (StubServer stub = stub(request -> {
            if (request.method().equals("PUT")) {
                bodies.add(request.body());
                return StubServer.Reply.json(201, "{\"id\":\"sb1\",\"state\":\"Creating\"}");
            }
            if (request.path().endsWith("/diskimages/public")) {
                return StubServer.Reply.json(200, "[\"python\"]");
            }
            if (request.path().endsWith("/executeShellCommand")) {
                return StubServer.Reply.commandSucceeded();
            }
            return StubServer.Reply.json(200, "{\"id\":\"sb1\",\"state\":\"Running\"}");
        })) {
            stub.backend().acquire(KEY, SandboxSpec.builder("a").image("python").egress(Egress.DENY_ALL).build());
            stub.backend().acquire(KEY, SandboxSpec.builder("b").image("python").egress(Egress.ALLOWLIST)
                    .egressAllow("pypi.org").build());
        }
        // The service's own default is Allow: a create without a policy would be an open sandbox.
        assertThat(bodies).hasSize(2);
        assertThat(bodies.get(0)).contains(DENY_ALL_POLICY);
        assertThat(bodies.get(1)).contains("\"egressPolicy\":{\"defaultAction\":\"Deny\",\"trafficInspection\":"
                + "\"Full\",\"hostRules\":[{\"pattern\":\"pypi.org\",\"action\":\"Allow\"}]}");
    }

    @Test
    void theBackendDeclaresDenyAllAndAllowlistAndRefusesTheRestBeforeAnyRequest() throws Exception {
        try (StubServer stub = stub(request -> StubServer.Reply.json(500, "{}"))) {
            AcaBackend backend = stub.backend();
            assertThat(backend.declarations().egressModes()).containsExactlyInAnyOrder(Egress.DENY_ALL,
                    Egress.ALLOWLIST);
            for (Egress mode : List.of(Egress.CLOSED, Egress.UNRESTRICTED)) {
                SandboxSpec spec = SandboxSpec.builder("k").image("python").egress(mode).build();
                assertThatThrownBy(() -> backend.acquire(KEY, spec)).as(mode.wire())
                        .isInstanceOf(SandboxEgressNotEnforced.class).hasMessageContaining("'deny-all'")
                        .hasMessageContaining("'allowlist'");
            }
            assertThat(stub.requests).isEmpty();
        }
    }

    // ---------------------------------------------------------------- states

    @Test
    void aResumingSandboxIsPolledAndNeverAskedToResumeAgain() throws Exception {
        List<String> states = new ArrayList<>(List.of("Resuming", "Resuming", "Running"));
        try (StubServer stub = stub(request -> StubServer.Reply.json(200, "{\"id\":\"sb1\",\"state\":\""
                + (states.size() > 1 ? states.remove(0) : states.get(0)) + "\"}"))) {
            stub.backend().ensureRunning("sb1", AcaBackend.RESUME_TIMEOUT);
            assertThat(stub.requests).extracting(StubServer.Request::method).containsOnly("GET");
            assertThat(stub.requests).hasSize(3);
            assertThat(stub.sleeps).containsOnly(AcaBackend.POLL_INTERVAL);
        }
    }

    /**
     * The service refuses exec on a sandbox that is not running (ASSUMED 409: its CLI resumes before an exec): the
     * backend resumes it, as the CLI does, and sends the command once more; the command runs once.
     */
    @Test
    void anExecRefusedBecauseTheSandboxIsNotRunningResumesItAndIsSentOnceMore() throws Exception {
        AtomicReference<String> state = new AtomicReference<>("Stopped");
        List<String> trail = new ArrayList<>();
        try (StubServer stub = stub(request -> {
            String call = request.method() + " " + request.path().substring(SANDBOX.length());
            trail.add(call);
            switch (call) {
                case "POST /resume":
                    state.set("Running");
                    return StubServer.Reply.json(202, "");
                case "GET ":
                    return StubServer.Reply.json(200, "{\"id\":\"sb1\",\"state\":\"" + state.get() + "\"}");
                case "POST /executeShellCommand":
                    if (!state.get().equals("Running")) {
                        return StubServer.Reply.json(409, "{\"error\":{\"code\":\"SandboxNotRunning\"}}");
                    }
                    return StubServer.Reply.json(200, runLocally(request.body()));
                default:
                    return StubServer.Reply.json(404, "{}");
            }
        })) {
            AcaSandbox sandbox = new AcaSandbox(stub.backend(), "sb1");
            ExecResult result = sandbox.exec(Command.shell("echo resumed"), ExecOptions.in("/",
                    Duration.ofSeconds(30)));
            assertThat(result.stdoutText()).isEqualTo("resumed\n");
            assertThat(trail).containsExactly("POST /executeShellCommand", "GET ", "POST /resume", "GET ",
                    "POST /executeShellCommand");
        }
    }

    /** What executeShellCommand answers: the wrapper run by this machine's sh, as the service would run it. */
    private static String runLocally(String body) {
        try {
            String command = (String) Json.parseObject(body).get("command");
            Process process = new ProcessBuilder("sh", "-c", command).start();
            process.getOutputStream().close();
            byte[] out = process.getInputStream().readAllBytes();
            byte[] err = process.getErrorStream().readAllBytes();
            assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
            Map<String, Object> answer = new LinkedHashMap<>();
            answer.put("exitCode", (long) process.exitValue());
            answer.put("stdout", new String(out, StandardCharsets.UTF_8));
            answer.put("stderr", new String(err, StandardCharsets.UTF_8));
            return AcaJson.write(answer);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    // ---------------------------------------------------------------- answers

    @Test
    void aCreateIsAcceptedWithAny2xx() throws Exception {
        for (int status : List.of(200, 201, 202)) {
            try (StubServer stub = stub(request -> StubServer.Reply.json(status, "{\"id\":\"sb1\"}"))) {
                assertThat(stub.backend().client().createSandbox(Map.of())).containsEntry("id", "sb1");
            }
        }
    }

    @Test
    void aListIsReadAsValueWithNextLinkOrAsABareArray() throws Exception {
        try (StubServer bare = stub(request -> StubServer.Reply.json(200,
                "[{\"id\":\"a\",\"state\":\"Running\"},{\"id\":\"b\"},{\"noId\":true}]"))) {
            assertThat(bare.backend().client().listSandboxes(Map.of())).extracting(s -> s.get("id"))
                    .containsExactly("a", "b");
        }
        AtomicReference<String> base = new AtomicReference<>();
        try (StubServer paged = stub(request -> request.query().containsKey("page")
                ? StubServer.Reply.json(200, "{\"value\":[{\"id\":\"b\"}]}")
                : StubServer.Reply.json(200, "{\"value\":[{\"id\":\"a\"}],\"nextLink\":\"" + base.get() + GROUP
                        + "/sandboxes?api-version=" + API_VERSION + "&page=2\"}"))) {
            base.set(paged.baseUrl());
            assertThat(paged.backend().client().listSandboxes(Map.of("kind", "k"))).extracting(s -> s.get("id"))
                    .containsExactly("a", "b");
            assertThat(paged.requests.get(1).query()).containsEntry("page", "2");
        }
    }

    @Test
    void theCatalogueIsReadAsObjectsOrStringsInValueOrABareArray() throws Exception {
        for (String answer : List.of("{\"value\":[{\"name\":\"ubuntu\",\"isPublic\":true},{\"name\":\"python\"}]}",
                "[\"ubuntu\",\"python\"]", "{\"value\":[\"ubuntu\",{\"name\":\"python\"}]}")) {
            try (StubServer stub = stub(request -> StubServer.Reply.json(200, answer))) {
                assertThat(stub.backend().client().publicImages()).as(answer).containsExactly("ubuntu", "python");
            }
        }
    }

    @Test
    void aSandboxObjectIsReadForStateAndStoppedReasonWhateverElseItCarries() throws Exception {
        try (StubServer stub = stub(request -> StubServer.Reply.json(200, "{\"id\":\"sb1\",\"state\":\"STOPPED\","
                + "\"stateDetails\":{\"stoppedReason\":\"Disabled\"},\"unknownField\":{\"x\":1}}"))) {
            Map<String, Object> sandbox = stub.backend().client().getSandbox("sb1").orElseThrow();
            assertThat(AcaBackend.state(sandbox)).isEqualTo("stopped");
            assertThatThrownBy(() -> stub.backend().ensureRunning("sb1", Duration.ofSeconds(1)))
                    .hasMessageContaining("disabled");
        }
    }
}
