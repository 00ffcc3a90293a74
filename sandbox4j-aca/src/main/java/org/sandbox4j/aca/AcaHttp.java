package org.sandbox4j.aca;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.StringJoiner;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxInterrupted;

/**
 * The data plane's HTTP layer: one place that adds the api-version and the bearer token and
 * retries. A 403 is retried up to {@value #FORBIDDEN_ATTEMPTS} attempts (a role assignment takes
 * minutes to propagate); 429 and 5xx up to {@value #THROTTLED_ATTEMPTS}, waiting what
 * {@code Retry-After} asks (capped at {@link #MAX_RETRY_AFTER}) or else an exponential backoff.
 * A request marked {@link Replay#ONCE} (exec: running a command twice is not safe) is not
 * replayed after a 5xx or a lost connection, only after a 403 or 429, which the service answers
 * before doing anything. Every other status is returned to the caller, who knows what a 404 or a
 * 409 means for its operation.
 *
 * <p>Host memory stays bounded: an answer's body is read only up to its call's
 * {@link Call#maxAnswerBytes()} ({@link #MAX_ANSWER_BYTES} for JSON; a file read's cap; an
 * exec's output cap, base64-encoded), and one more byte refuses the answer
 * ({@link AnswerTooLarge}). The call's timeout bounds the whole exchange, body included.
 */
final class AcaHttp {

    /** The api-version every call carries. */
    static final String API_VERSION = "2026-02-01-preview";
    static final int FORBIDDEN_ATTEMPTS = 10;
    static final int THROTTLED_ATTEMPTS = 6;
    static final Duration FIRST_BACKOFF = Duration.ofMillis(500);
    static final Duration MAX_BACKOFF = Duration.ofSeconds(16);
    static final Duration MAX_RETRY_AFTER = Duration.ofSeconds(60);
    static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(30);
    /** The largest JSON answer read (a sandbox listing, an exec's bounded result is sized by its call). */
    static final long MAX_ANSWER_BYTES = 16L * 1024 * 1024;
    /** The most one answer can hold in memory: a Java array's length. */
    static final long MAX_BUFFERED_BYTES = Integer.MAX_VALUE - 16;
    private static final int MAX_LOGGED_BODY_CHARS = 2000;
    private static final System.Logger LOG = System.getLogger(AcaHttp.class.getName());

    /** Whether a request may be sent again after the service may have acted on it. */
    enum Replay { SAFE, ONCE }

    /** How the layer waits between attempts; a seam for tests. */
    @FunctionalInterface
    interface Sleeper {
        void sleep(Duration duration) throws InterruptedException;
    }

    /** One answer: status, body bytes, and the headers a caller may need. */
    record Response(int status, byte[] body, Map<String, String> headers) {
        boolean ok() {
            return status >= 200 && status < 300;
        }

        String text() {
            return new String(body, StandardCharsets.UTF_8);
        }
    }

    /** A request in flight: method, path below the endpoint, query, body, and the most of an answer to read. */
    record Call(String method, String path, Map<String, String> query, byte[] body, String contentType,
            Duration timeout, Replay replay, long maxAnswerBytes) {

        Call {
            maxAnswerBytes = Math.min(Math.max(0, maxAnswerBytes), MAX_BUFFERED_BYTES);
        }

        /** A call whose answer is JSON, read up to {@link #MAX_ANSWER_BYTES}. */
        Call(String method, String path, Map<String, String> query, byte[] body, String contentType,
                Duration timeout, Replay replay) {
            this(method, path, query, body, contentType, timeout, replay, MAX_ANSWER_BYTES);
        }
    }

    private final String backendName;
    private final URI endpoint;
    private final AcaTokenSupplier tokens;
    private final String scope;
    private final HttpClient client;
    private final Sleeper sleeper;

    AcaHttp(String backendName, URI endpoint, AcaTokenSupplier tokens, String scope, Sleeper sleeper) {
        this.backendName = backendName;
        String base = endpoint.toString();
        while (base.endsWith("/")) {
            base = base.substring(0, base.length() - 1);
        }
        this.endpoint = URI.create(base);
        this.tokens = Objects.requireNonNull(tokens, "tokens");
        this.scope = scope;
        this.sleeper = sleeper;
        this.client = HttpClient.newBuilder().connectTimeout(CONNECT_TIMEOUT)
                .followRedirects(HttpClient.Redirect.NEVER).build();
    }

    URI endpoint() {
        return endpoint;
    }

    /** Percent-encodes one path segment (the caller has refused {@code /}, {@code ..} and NUL). */
    static String segment(String value) {
        AcaConfig.requireSegment(value, "a path segment");
        return URLEncoder.encode(value, StandardCharsets.UTF_8).replace("+", "%20");
    }

    static Map<String, String> query(String... pairs) {
        Map<String, String> query = new LinkedHashMap<>();
        for (int i = 0; i + 1 < pairs.length; i += 2) {
            query.put(pairs[i], pairs[i + 1]);
        }
        return query;
    }

    Response get(String path, Map<String, String> query, Duration timeout) {
        return send(new Call("GET", path, query, null, null, timeout, Replay.SAFE));
    }

    /** A GET whose answer is read up to {@code maxAnswerBytes}. */
    Response get(String path, Map<String, String> query, Duration timeout, long maxAnswerBytes) {
        return send(new Call("GET", path, query, null, null, timeout, Replay.SAFE, maxAnswerBytes));
    }

    /** GET of an absolute URL the service handed out (a nextLink), which must be on the endpoint. */
    Response getLink(URI link, Duration timeout) {
        if (!Objects.equals(link.getScheme(), endpoint.getScheme()) || !Objects.equals(link.getHost(), endpoint.getHost())
                || link.getPort() != endpoint.getPort()) {
            throw new AcaServiceException("backend '" + backendName + "': the service pointed a listing at another "
                    + "host; the listing was not followed (see the log)", 0);
        }
        return send(new Call("GET", link.getRawPath(), rawQuery(link), null, null, timeout, Replay.SAFE));
    }

    Response send(Call call) {
        int forbidden = 0;
        int throttled = 0;
        while (true) {
            Response response;
            try {
                response = once(call);
            } catch (HttpTimeoutException timedOut) {
                throw new AcaTimeout(call.method() + " " + call.path(), timedOut);
            } catch (IOException lost) {
                throttled++;
                if (call.replay() == Replay.ONCE || throttled >= THROTTLED_ATTEMPTS) {
                    LOG.log(Level.WARNING, () -> "backend '" + backendName + "': " + call.method() + " " + call.path()
                            + " failed: " + lost);
                    throw new AcaServiceException("backend '" + backendName + "' could not reach the ACA service; "
                            + "the cause is in the log", lost);
                }
                pause(backoff(throttled), call);
                continue;
            }
            int status = response.status();
            if (status == 403 && ++forbidden < FORBIDDEN_ATTEMPTS) {
                logRetry(call, response, forbidden);
                pause(backoff(forbidden), call);
                continue;
            }
            boolean serverError = status >= 500 && status <= 599;
            if ((status == 429 || serverError && call.replay() == Replay.SAFE) && ++throttled < THROTTLED_ATTEMPTS) {
                logRetry(call, response, throttled);
                pause(retryAfter(response.headers()).orElse(backoff(throttled)), call);
                continue;
            }
            return response;
        }
    }

    private Response once(Call call) throws IOException {
        StringJoiner query = new StringJoiner("&");
        query.add("api-version=" + encode(API_VERSION));
        call.query().forEach((k, v) -> {
            if (!k.equals("api-version")) {
                query.add(encode(k) + "=" + encode(v));
            }
        });
        URI uri = URI.create(endpoint + call.path() + "?" + query);
        HttpRequest.BodyPublisher body = call.body() == null ? HttpRequest.BodyPublishers.noBody()
                : HttpRequest.BodyPublishers.ofByteArray(call.body());
        HttpRequest.Builder request = HttpRequest.newBuilder(uri).timeout(call.timeout())
                .method(call.method(), body)
                .header("Authorization", "Bearer " + token())
                .header("Accept", "application/json");
        if (call.body() != null) {
            request.header("Content-Type", call.contentType());
        }
        CompletableFuture<HttpResponse<byte[]>> pending = client.sendAsync(request.build(),
                info -> new BoundedBody(call.maxAnswerBytes()));
        HttpResponse<byte[]> response;
        try {
            response = pending.get(call.timeout().toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException slow) {
            pending.cancel(true);
            throw new HttpTimeoutException("no whole answer within " + call.timeout());
        } catch (InterruptedException e) {
            pending.cancel(true);
            Thread.currentThread().interrupt();
            throw new SandboxInterrupted("the thread waiting on the ACA service was interrupted", e);
        } catch (ExecutionException failed) {
            for (Throwable cause = failed.getCause(); cause != null; cause = cause.getCause()) {
                if (cause instanceof AnswerTooLarge tooLarge) {
                    LOG.log(Level.WARNING, () -> "backend '" + backendName + "': " + call.method() + " " + call.path()
                            + " answered more than " + tooLarge.limit() + " bytes; the answer was refused");
                    throw new AnswerTooLarge("backend '" + backendName + "': the ACA service's answer held more than "
                            + tooLarge.limit() + " bytes and was refused (details in the log)", tooLarge.limit());
                }
            }
            if (failed.getCause() instanceof IOException lost) {
                throw lost;
            }
            throw new IOException(failed.getCause());
        }
        Map<String, String> headers = new LinkedHashMap<>();
        response.headers().map().forEach((name, values) -> {
            if (!values.isEmpty()) {
                headers.put(name.toLowerCase(java.util.Locale.ROOT), values.get(0));
            }
        });
        return new Response(response.statusCode(), response.body(), headers);
    }

    /** The bearer token; a supplier's failure is logged here and reported without its detail. */
    private String token() {
        try {
            return Objects.requireNonNull(tokens.token(scope), "the token supplier returned null");
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, () -> "backend '" + backendName + "': the token supplier failed for scope " + scope
                    + ": " + e);
            throw new AcaServiceException("backend '" + backendName + "' could not get a token for the ACA service "
                    + "from its AcaTokenSupplier; the cause is in the log", e);
        }
    }

    /** {@code Retry-After} in seconds or as an HTTP date, or the millisecond variants Azure sends. */
    static Optional<Duration> retryAfter(Map<String, String> headers) {
        Duration wait = null;
        for (String name : new String[] {"retry-after-ms", "x-ms-retry-after-ms"}) {
            String value = headers.get(name);
            if (wait == null && value != null) {
                try {
                    wait = Duration.ofMillis(Long.parseLong(value.strip()));
                } catch (NumberFormatException ignored) {
                    // Try the next form.
                }
            }
        }
        String value = headers.get("retry-after");
        if (wait == null && value != null) {
            try {
                wait = Duration.ofSeconds(Long.parseLong(value.strip()));
            } catch (NumberFormatException notSeconds) {
                try {
                    ZonedDateTime at = ZonedDateTime.parse(value.strip(), DateTimeFormatter.RFC_1123_DATE_TIME);
                    wait = Duration.between(ZonedDateTime.now(at.getZone()), at);
                } catch (DateTimeParseException ignored) {
                    // Unreadable: fall back to the backoff.
                }
            }
        }
        if (wait == null) {
            return Optional.empty();
        }
        if (wait.isNegative()) {
            wait = Duration.ZERO;
        }
        return Optional.of(wait.compareTo(MAX_RETRY_AFTER) > 0 ? MAX_RETRY_AFTER : wait);
    }

    /** 0.5 s, 1 s, 2 s, ... capped at {@link #MAX_BACKOFF}. */
    static Duration backoff(int attempt) {
        Duration wait = FIRST_BACKOFF.multipliedBy(1L << Math.min(attempt - 1, 20));
        return wait.compareTo(MAX_BACKOFF) > 0 ? MAX_BACKOFF : wait;
    }

    private void pause(Duration wait, Call call) {
        try {
            sleeper.sleep(wait);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SandboxInterrupted("the thread waiting to retry " + call.method() + " against the ACA service "
                    + "was interrupted", e);
        }
    }

    private void logRetry(Call call, Response response, int attempt) {
        LOG.log(Level.DEBUG, () -> "backend '" + backendName + "': " + call.method() + " " + call.path() + " answered "
                + response.status() + " (attempt " + attempt + "), retrying: " + bodyForLog(response));
    }

    /** The service's answer as one log line, bounded. */
    static String bodyForLog(Response response) {
        String text = response.text().replaceAll("[\\r\\n]+", " ");
        return text.length() > MAX_LOGGED_BODY_CHARS ? text.substring(0, MAX_LOGGED_BODY_CHARS) + "..." : text;
    }

    private static String encode(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8).replace("+", "%20");
    }

    private static Map<String, String> rawQuery(URI link) {
        Map<String, String> query = new LinkedHashMap<>();
        String raw = link.getRawQuery();
        if (raw == null) {
            return query;
        }
        for (String pair : raw.split("&")) {
            int eq = pair.indexOf('=');
            String k = java.net.URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
            String v = eq < 0 ? "" : java.net.URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
            query.put(k, v);
        }
        return query;
    }

    /** Collects an answer's body, refusing it once it holds more than {@code limit} bytes. */
    static final class BoundedBody implements HttpResponse.BodySubscriber<byte[]> {
        private final long limit;
        private final CompletableFuture<byte[]> body = new CompletableFuture<>();
        private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        private Flow.Subscription subscription;

        BoundedBody(long limit) {
            this.limit = limit;
        }

        @Override
        public CompletionStage<byte[]> getBody() {
            return body;
        }

        @Override
        public void onSubscribe(Flow.Subscription value) {
            subscription = value;
            value.request(Long.MAX_VALUE);
        }

        @Override
        public void onNext(List<ByteBuffer> items) {
            if (body.isDone()) {
                return;
            }
            for (ByteBuffer item : items) {
                if (bytes.size() + (long) item.remaining() > limit) {
                    subscription.cancel();
                    body.completeExceptionally(new AnswerTooLarge("more than " + limit + " bytes", limit));
                    return;
                }
                byte[] chunk = new byte[item.remaining()];
                item.get(chunk);
                bytes.write(chunk, 0, chunk.length);
            }
        }

        @Override
        public void onError(Throwable failure) {
            body.completeExceptionally(failure);
        }

        @Override
        public void onComplete() {
            body.complete(bytes.toByteArray());
        }
    }

    /** An answer held more than its call allows; nothing of it is kept. Callers that know why may say more. */
    static final class AnswerTooLarge extends SandboxException {
        private static final long serialVersionUID = 1L;

        private final long limit;

        AnswerTooLarge(String message, long limit) {
            super(message);
            this.limit = limit;
        }

        long limit() {
            return limit;
        }
    }

    /** The client-side bound on one request expired: typed, wherever a caller lets it through. */
    static final class AcaTimeout extends org.sandbox4j.core.SandboxTimeoutException {
        private static final long serialVersionUID = 1L;

        AcaTimeout(String what, Throwable cause) {
            super(what + " timed out", cause);
        }
    }
}
