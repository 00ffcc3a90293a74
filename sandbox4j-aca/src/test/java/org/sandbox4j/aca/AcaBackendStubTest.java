package org.sandbox4j.aca;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.sandbox4j.core.Egress;
import org.sandbox4j.core.SandboxEgressNotEnforced;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxSpec;

/** Acquire, warm resume and disposal against a minimal in-test data plane. */
class AcaBackendStubTest {

    private static final String GROUP = "/subscriptions/sub/resourceGroups/rg/sandboxGroups/group";
    private static final SandboxKey KEY = new SandboxKey("tenant", "thread-1", "agent");

    /** Sandboxes by id: state and the label filter text of their create. */
    private final Map<String, String> states = new ConcurrentHashMap<>();
    private final Map<String, String> createBodies = new ConcurrentHashMap<>();
    private final AtomicInteger ids = new AtomicInteger();

    private StubServer.Reply handle(StubServer.Request request) {
        String path = request.path();
        if (path.equals(GROUP + "/diskimages/public")) {
            return StubServer.Reply.json(200, "{\"value\":[{\"name\":\"python\"},\"node\"]}");
        }
        if (path.equals(GROUP + "/sandboxes") && request.method().equals("PUT")) {
            String id = "sb" + ids.incrementAndGet();
            states.put(id, "Creating");
            createBodies.put(id, request.body());
            return StubServer.Reply.json(201, "{\"id\":\"" + id + "\",\"state\":\"Creating\"}");
        }
        if (path.equals(GROUP + "/sandboxes") && request.method().equals("GET")) {
            String filter = request.query().getOrDefault("labels", "");
            StringBuilder value = new StringBuilder();
            states.forEach((id, state) -> {
                boolean all = true;
                for (String pair : filter.split(",")) {
                    String[] kv = pair.split("=", 2);
                    all &= filter.isEmpty() || createBodies.get(id).contains("\"" + kv[0] + "\":\"" + kv[1] + "\"");
                }
                if (all) {
                    value.append(value.length() == 0 ? "" : ",").append("{\"id\":\"").append(id)
                            .append("\",\"state\":\"").append(state).append("\"}");
                }
            });
            return StubServer.Reply.json(200, "{\"value\":[" + value + "]}");
        }
        String prefix = GROUP + "/sandboxes/";
        String rest = path.substring(prefix.length());
        String id = rest.contains("/") ? rest.substring(0, rest.indexOf('/')) : rest;
        String action = rest.contains("/") ? rest.substring(rest.indexOf('/') + 1) : "";
        if (!states.containsKey(id)) {
            return StubServer.Reply.json(404, "{\"error\":{\"code\":\"SandboxNotFound\"}}");
        }
        switch (request.method() + " " + action) {
            case "GET ":
                states.computeIfPresent(id, (k, s) -> s.equals("Creating") ? "Running" : s);
                return StubServer.Reply.json(200, "{\"id\":\"" + id + "\",\"state\":\"" + states.get(id)
                        + "\",\"stateDetails\":{}}");
            case "POST resume":
                states.put(id, "Running");
                return StubServer.Reply.json(202, "");
            case "POST lifecycle":
                return StubServer.Reply.json(200, request.body());
            case "POST executeShellCommand":
                return StubServer.Reply.commandSucceeded();
            case "DELETE ":
                states.remove(id);
                return StubServer.Reply.json(202, "");
            default:
                return StubServer.Reply.json(404, "{\"error\":{\"code\":\"NotFound\"}}");
        }
    }

    private static SandboxSpec spec() {
        return SandboxSpec.builder("execute_code").image("python").egress(Egress.ALLOWLIST)
                .egressAllow("pypi.org", "*.pythonhosted.org").build();
    }

    @Test
    void coldCreateSendsLabelsEgressAndTheWholeLifecycle() throws Exception {
        try (StubServer stub = new StubServer(this::handle)) {
            AcaBackend backend = stub.backend();
            AcaSandbox sandbox = (AcaSandbox) backend.acquire(KEY, spec());
            assertThat(states).containsEntry(sandbox.id(), "Running");
            String body = createBodies.get(sandbox.id());
            assertThat(body).contains("\"sourcesRef\":{\"diskImage\":{\"name\":\"python\",\"isPublic\":true}}")
                    .contains("\"labels\":{\"scope\":\"tenant\",\"thread\":\"thread-1\",\"agent\":\"agent\","
                            + "\"kind\":\"execute_code\"}")
                    .contains("\"egressPolicy\":{\"defaultAction\":\"Deny\",\"trafficInspection\":\"Full\","
                            + "\"hostRules\":[{\"pattern\":\"pypi.org\",\"action\":\"Allow\"},"
                            + "{\"pattern\":\"*.pythonhosted.org\",\"action\":\"Allow\"}]}");
            StubServer.Request lifecycle = stub.requests.stream().filter(r -> r.path().endsWith("/lifecycle"))
                    .findFirst().orElseThrow();
            assertThat(lifecycle.body()).isEqualTo("{\"autoSuspendPolicy\":{\"enabled\":true,\"interval\":60,"
                    + "\"mode\":\"Memory\"},\"autoDeletePolicy\":{\"enabled\":true,\"deleteIntervalInSeconds\":600}}");
        }
    }

    @Test
    void aSuspendedSandboxIsResumedBeforeAnyCreate() throws Exception {
        try (StubServer stub = new StubServer(this::handle)) {
            AcaBackend backend = stub.backend();
            AcaSandbox first = (AcaSandbox) backend.acquire(KEY, spec());
            states.put(first.id(), "Suspended");
            AcaSandbox second = (AcaSandbox) backend.acquire(KEY, spec());
            assertThat(second.id()).isEqualTo(first.id());
            assertThat(states).containsEntry(first.id(), "Running").hasSize(1);
            assertThat(stub.requests).anyMatch(r -> r.path().endsWith("/" + first.id() + "/resume"));
        }
    }

    @Test
    void aWarmSandboxNeverChangesItsImageOrEgress() throws Exception {
        try (StubServer stub = new StubServer(this::handle)) {
            AcaBackend backend = stub.backend();
            backend.acquire(KEY, spec());
            for (SandboxSpec other : List.of(
                    SandboxSpec.builder("execute_code").image("node").egress(Egress.ALLOWLIST)
                            .egressAllow("pypi.org", "*.pythonhosted.org").build(),
                    SandboxSpec.builder("execute_code").image("python").egress(Egress.ALLOWLIST)
                            .egressAllow("pypi.org").build())) {
                assertThatThrownBy(() -> backend.acquire(KEY, other)).isInstanceOf(SandboxException.class)
                        .hasMessageContaining("another image or egress allowlist");
            }
            assertThat(states).hasSize(1);
        }
    }

    @Test
    void aSandboxDeletedBehindOurBackIsReplaced() throws Exception {
        try (StubServer stub = new StubServer(this::handle)) {
            AcaBackend backend = stub.backend();
            AcaSandbox first = (AcaSandbox) backend.acquire(KEY, spec());
            states.remove(first.id());
            AcaSandbox second = (AcaSandbox) backend.acquire(KEY, spec());
            assertThat(second.id()).isNotEqualTo(first.id());
        }
    }

    @Test
    void anAllowlistEntryAHostRuleCannotSayIsRefusedBeforeAnyRequest() throws Exception {
        try (StubServer stub = new StubServer(this::handle)) {
            for (String entry : List.of("pypi.org:443", "files.internal=10.0.0.5", "https://pypi.org", "[2001:db8::1]")) {
                SandboxSpec spec = SandboxSpec.builder("k").image("python").egress(Egress.ALLOWLIST)
                        .egressAllow(entry).build();
                assertThatThrownBy(() -> stub.backend().acquire(KEY, spec)).as(entry)
                        .isInstanceOf(SandboxEgressNotEnforced.class).hasMessageContaining("host rules");
            }
            assertThat(stub.requests).isEmpty();
            assertThat(stub.backend().egressPolicy(SandboxSpec.builder("k").egress(Egress.ALLOWLIST)
                    .egressAllow("PyPI.org", "*.pythonhosted.org", "203.0.113.7").build()).get("hostRules"))
                    .asList().hasSize(3);
        }
    }

    @Test
    void anUnknownPrebuiltNameIsRefusedListingTheCatalogue() throws Exception {
        try (StubServer stub = new StubServer(this::handle)) {
            assertThatThrownBy(() -> stub.backend().acquire(KEY, SandboxSpec.builder("k").image("ruby-3")
                    .egress(Egress.DENY_ALL).build()))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("node, python");
        }
    }

    @Test
    void anotherReplicaDisposesTheConversationByLabel() throws Exception {
        try (StubServer stub = new StubServer(this::handle)) {
            stub.backend().acquire(KEY, spec());
            stub.backend().acquire(new SandboxKey("tenant", "thread-1", "other-agent"), spec());
            stub.backend().acquire(new SandboxKey("tenant", "thread-2", "agent"), spec());
            AcaBackend replica = stub.backend();
            assertThat(replica.disposeScope("tenant", "thread-1")).isEqualTo(2);
            assertThat(states).hasSize(1);
            replica.dispose(KEY);
            assertThat(states).hasSize(1);
        }
    }

    @Test
    void disposeScopeNeverThrows() throws Exception {
        try (StubServer stub = new StubServer(request -> StubServer.Reply.json(500, "{}"))) {
            assertThat(stub.backend().disposeScope("tenant", "thread-1")).isZero();
        }
    }

    @Test
    void qualifyFollowsTheReference() {
        assertThat(AcaBackend.qualify("tools:1", "myacr.azurecr.io")).isEqualTo("myacr.azurecr.io/tools:1");
        assertThat(AcaBackend.qualify("team/tools:1", "myacr.azurecr.io")).isEqualTo("myacr.azurecr.io/team/tools:1");
        assertThat(AcaBackend.qualify("other.io/tools:1", "myacr.azurecr.io")).isEqualTo("other.io/tools:1");
        assertThat(AcaBackend.qualify("localhost/tools", "myacr.azurecr.io")).isEqualTo("localhost/tools");
        assertThat(AcaBackend.qualify("tools:1", "")).isEqualTo("tools:1");
    }
}
