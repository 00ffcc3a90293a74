package org.sandbox4j.aca;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class AcaHttpRetryTest {

    private static final String SANDBOX = "/subscriptions/sub/resourceGroups/rg/sandboxGroups/group/sandboxes/sb1";
    private static final String RUNNING = "{\"id\":\"sb1\",\"state\":\"Running\"}";

    @Test
    void forbiddenDuringRolePropagationIsRetriedThenSucceeds() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        try (StubServer stub = new StubServer(request -> calls.incrementAndGet() <= 3
                ? StubServer.Reply.json(403, "{\"error\":{\"code\":\"AuthorizationFailed\"}}")
                : StubServer.Reply.json(200, RUNNING))) {
            AcaBackend backend = stub.backend();
            assertThat(backend.client().getSandbox("sb1")).isPresent();
            assertThat(stub.requests).hasSize(4);
            assertThat(stub.sleeps).containsExactly(Duration.ofMillis(500), Duration.ofSeconds(1), Duration.ofSeconds(2));
            StubServer.Request first = stub.requests.get(0);
            assertThat(first.path()).isEqualTo(SANDBOX);
            assertThat(first.query()).containsEntry("api-version", AcaHttp.API_VERSION);
            assertThat(first.authorization()).isEqualTo("Bearer token-for-" + AcaTokenSupplier.DEFAULT_SCOPE);
        }
    }

    @Test
    void forbiddenForeverStopsAfterTheBoundAndIsSanitised() throws Exception {
        try (StubServer stub = new StubServer(request -> StubServer.Reply.json(403,
                "{\"error\":{\"code\":\"AuthorizationFailed\",\"message\":\"principal 1234 secret detail\"}}"))) {
            AcaBackend backend = stub.backend();
            assertThatThrownBy(() -> backend.client().getSandbox("sb1"))
                    .isInstanceOf(AcaServiceException.class)
                    .hasMessageContaining("SandboxGroup Data Owner")
                    .hasMessageNotContaining("1234")
                    .hasMessageNotContaining("403");
            assertThat(stub.requests).hasSize(AcaHttp.FORBIDDEN_ATTEMPTS);
        }
    }

    @Test
    void throttlingHonoursRetryAfter() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        try (StubServer stub = new StubServer(request -> calls.incrementAndGet() <= 2
                ? new StubServer.Reply(429, Map.of("Retry-After", "7"), "{}")
                : StubServer.Reply.json(200, RUNNING))) {
            assertThat(stub.backend().client().getSandbox("sb1")).isPresent();
            assertThat(stub.sleeps).containsExactly(Duration.ofSeconds(7), Duration.ofSeconds(7));
        }
    }

    @Test
    void retryAfterIsCappedAndReadInEveryForm() {
        assertThat(AcaHttp.retryAfter(Map.of("retry-after", "3600"))).contains(AcaHttp.MAX_RETRY_AFTER);
        assertThat(AcaHttp.retryAfter(Map.of("retry-after-ms", "250"))).contains(Duration.ofMillis(250));
        assertThat(AcaHttp.retryAfter(Map.of("retry-after", "Sun, 06 Nov 1994 08:49:37 GMT"))).contains(Duration.ZERO);
        assertThat(AcaHttp.retryAfter(Map.of("retry-after", "soon"))).isEmpty();
        assertThat(AcaHttp.backoff(30)).isEqualTo(AcaHttp.MAX_BACKOFF);
    }

    @Test
    void serverErrorsBackOffAndAreBounded() throws Exception {
        try (StubServer stub = new StubServer(request -> StubServer.Reply.json(503, "{}"))) {
            assertThatThrownBy(() -> stub.backend().client().getSandbox("sb1"))
                    .isInstanceOf(AcaServiceException.class).hasMessageContaining("try again later");
            assertThat(stub.requests).hasSize(AcaHttp.THROTTLED_ATTEMPTS);
            assertThat(stub.sleeps).startsWith(Duration.ofMillis(500), Duration.ofSeconds(1), Duration.ofSeconds(2));
        }
    }

    @Test
    void execIsNotReplayedAfterAServerError() throws Exception {
        try (StubServer stub = new StubServer(request -> StubServer.Reply.json(502, "{}"))) {
            AcaHttp.Response response = stub.backend().client().exec("sb1", "true", "/", Duration.ofSeconds(5), AcaHttp.MAX_ANSWER_BYTES);
            assertThat(response.status()).isEqualTo(502);
            assertThat(stub.requests).hasSize(1);
        }
    }

    @Test
    void aCreateIsNotReplayedAfterAServerError() throws Exception {
        try (StubServer stub = new StubServer(request -> StubServer.Reply.json(503, "{}"))) {
            assertThatThrownBy(() -> stub.backend().client().createSandbox(Map.of("labels", Map.of())))
                    .isInstanceOf(AcaServiceException.class);
            assertThat(stub.requests).hasSize(1);
        }
    }

    @Test
    void anAnswerLargerThanItsCallAllowsIsRefusedUnread() throws Exception {
        String big = "{\"id\":\"sb1\",\"state\":\"Running\",\"pad\":\"" + "x".repeat(4096) + "\"}";
        try (StubServer stub = new StubServer(request -> StubServer.Reply.json(200, big))) {
            AcaBackend backend = stub.backend();
            assertThatThrownBy(() -> backend.client().read("sb1", "/w/f", 1024))
                    .isInstanceOf(AcaHttp.AnswerTooLarge.class).hasMessageContaining("1024");
            assertThat(backend.client().read("sb1", "/w/f", big.length()).body()).hasSize(big.length());
        }
    }

    @Test
    void aFailingTokenSupplierIsReportedWithoutItsDetail() throws Exception {
        try (StubServer stub = new StubServer(request -> StubServer.Reply.json(200, RUNNING))) {
            AcaBackend backend = new AcaBackend(stub.config(), scope -> {
                throw new IllegalStateException("secret-credential-detail");
            }, stub.sleeps::add);
            assertThatThrownBy(() -> backend.client().getSandbox("sb1")).isInstanceOf(AcaServiceException.class)
                    .hasMessageContaining("AcaTokenSupplier").hasMessageNotContaining("secret-credential-detail");
            assertThat(stub.requests).isEmpty();
        }
    }

    @Test
    void execIsRetriedAfterThrottling() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        try (StubServer stub = new StubServer(request -> calls.incrementAndGet() == 1
                ? new StubServer.Reply(429, Map.of("Retry-After", "1"), "{}")
                : StubServer.Reply.json(200, "{\"exitCode\":0}"))) {
            AcaHttp.Response response = stub.backend().client().exec("sb1", "true", "/", Duration.ofSeconds(5), AcaHttp.MAX_ANSWER_BYTES);
            assertThat(response.status()).isEqualTo(200);
            assertThat(stub.requests).hasSize(2);
        }
    }
}
