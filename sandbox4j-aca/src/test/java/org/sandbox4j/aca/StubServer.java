package org.sandbox4j.aca;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/** A tiny loopback HTTP stub: each request goes to a handler; every request is recorded. */
final class StubServer implements AutoCloseable {

    record Request(String method, String path, Map<String, String> query, String authorization, String body) {
    }

    record Reply(int status, Map<String, String> headers, String body) {
        static Reply json(int status, String body) {
            return new Reply(status, Map.of("Content-Type", "application/json"), body);
        }

        /** What the exec wrapper prints for a command that printed nothing and exited 0 (acquire's mkdir). */
        static Reply commandSucceeded() {
            return json(200, "{\"exitCode\":0,\"stdout\":\"" + AcaExecScript.OUT + "\\n" + AcaExecScript.ERR
                    + "\\n" + AcaExecScript.EXIT + " 0\\n\",\"stderr\":\"\"}");
        }
    }

    final List<Request> requests = Collections.synchronizedList(new ArrayList<>());
    final List<Duration> sleeps = Collections.synchronizedList(new ArrayList<>());
    private final HttpServer server;

    StubServer(Function<Request, Reply> handler) throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", exchange -> {
            Map<String, String> query = new LinkedHashMap<>();
            String raw = exchange.getRequestURI().getRawQuery();
            if (raw != null) {
                for (String pair : raw.split("&")) {
                    int eq = pair.indexOf('=');
                    query.put(URLDecoder.decode(pair.substring(0, eq), StandardCharsets.UTF_8),
                            URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
                }
            }
            String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
            Request request = new Request(exchange.getRequestMethod(), exchange.getRequestURI().getRawPath(), query,
                    exchange.getRequestHeaders().getFirst("Authorization"), body);
            requests.add(request);
            Reply reply;
            try {
                reply = handler.apply(request);
            } catch (RuntimeException e) {
                reply = Reply.json(500, "{\"error\":{\"code\":\"StubFailure\",\"message\":\"" + e + "\"}}");
            }
            byte[] bytes = reply.body().getBytes(StandardCharsets.UTF_8);
            reply.headers().forEach((k, v) -> exchange.getResponseHeaders().add(k, v));
            exchange.sendResponseHeaders(reply.status(), bytes.length == 0 ? -1 : bytes.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(bytes);
            }
        });
        server.start();
    }

    String baseUrl() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    AcaConfig config() {
        return AcaConfig.builder().endpoint(baseUrl()).subscription("sub").resourceGroup("rg").sandboxGroup("group")
                .build();
    }

    AcaBackend backend() {
        return new AcaBackend(config(), scope -> "token-for-" + scope, sleeps::add);
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
