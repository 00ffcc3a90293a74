package org.sandbox4j.bench;

import com.github.dockerjava.transport.DockerHttpClient;
import com.github.dockerjava.zerodep.ZerodepDockerHttpClient;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.sandbox4j.core.spi.Json;

/**
 * The Engine API's own exec, as bare as it comes: create the exec, start it attached and read its
 * stream to the end, inspect it for the exit code — three requests over the transport the docker
 * module speaks (docker-java's zerodep client), with none of docker-java's command layer.
 */
final class EngineApiExec implements AutoCloseable {

    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(5);
    private static final Duration RESPONSE_TIMEOUT = Duration.ofSeconds(60);
    /** The most of a control answer read (an exec's id, its inspection). */
    private static final int MAX_ANSWER_BYTES = 64 * 1024;
    private static final int CREATED = 201;
    private static final int OK = 200;
    private static final String START_ATTACHED = "{\"Detach\":false,\"Tty\":false}";

    private final DockerHttpClient client;

    EngineApiExec(URI host) {
        this.client = new ZerodepDockerHttpClient.Builder().dockerHost(host).connectionTimeout(CONNECT_TIMEOUT)
                .responseTimeout(RESPONSE_TIMEOUT).build();
    }

    /** Runs {@code argv} in {@code container}; fails unless it exits 0. */
    void run(String container, List<String> argv) throws IOException {
        String create = "{\"AttachStdout\":true,\"AttachStderr\":true,\"Tty\":false,\"Cmd\":["
                + argv.stream().map(Json::quote).collect(Collectors.joining(",")) + "]}";
        String created = answer(DockerHttpClient.Request.Method.POST,
                "/containers/" + URLEncoder.encode(container, StandardCharsets.UTF_8) + "/exec", create, CREATED);
        String id = Json.string(Json.parseObject(created), "Id");
        try (DockerHttpClient.Response started = client.execute(request(DockerHttpClient.Request.Method.POST,
                "/exec/" + id + "/start", START_ATTACHED))) {
            expect(started, OK, "start exec");
            try (InputStream stream = started.getBody()) {
                stream.transferTo(OutputStream.nullOutputStream());
            }
        }
        Map<String, Object> inspected = Json.parseObject(
                answer(DockerHttpClient.Request.Method.GET, "/exec/" + id + "/json", null, OK));
        Object exit = inspected.get("ExitCode");
        if (!(exit instanceof Number code) || code.intValue() != 0) {
            throw new IllegalStateException("the engine's exec ended with exit code " + exit);
        }
    }

    private String answer(DockerHttpClient.Request.Method method, String path, String body, int status)
            throws IOException {
        try (DockerHttpClient.Response response = client.execute(request(method, path, body))) {
            expect(response, status, method + " " + path);
            try (InputStream in = response.getBody()) {
                return new String(in.readNBytes(MAX_ANSWER_BYTES), StandardCharsets.UTF_8);
            }
        }
    }

    private static DockerHttpClient.Request request(DockerHttpClient.Request.Method method, String path, String body) {
        DockerHttpClient.Request.Builder builder = DockerHttpClient.Request.builder().method(method).path(path);
        if (body != null) {
            builder.putHeader("Content-Type", "application/json").bodyBytes(body.getBytes(StandardCharsets.UTF_8));
        }
        return builder.build();
    }

    private static void expect(DockerHttpClient.Response response, int status, String what) throws IOException {
        if (response.getStatusCode() != status) {
            String text;
            try (InputStream in = response.getBody()) {
                text = new String(in.readNBytes(MAX_ANSWER_BYTES), StandardCharsets.UTF_8).strip();
            }
            throw new IllegalStateException(what + ": the engine answered " + response.getStatusCode() + " " + text);
        }
    }

    @Override
    public void close() throws IOException {
        client.close();
    }
}
