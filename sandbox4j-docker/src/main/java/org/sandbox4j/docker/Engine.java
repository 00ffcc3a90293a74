package org.sandbox4j.docker;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.exception.DockerException;
import com.github.dockerjava.core.DefaultDockerClientConfig;
import com.github.dockerjava.core.DockerClientImpl;
import com.github.dockerjava.transport.DockerHttpClient;
import com.github.dockerjava.zerodep.ZerodepDockerHttpClient;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import org.sandbox4j.core.spi.ErrorDetail;
import org.sandbox4j.core.spi.Json;

/**
 * One Engine API endpoint: a client for control calls, bounded by the command timeout, and one
 * without a response timeout for exec streams, which the exec's own deadline bounds instead (a
 * quiet command must not look like a dead engine). Both speak docker-java's zerodep transport,
 * which handles {@code unix://} without a native library.
 */
final class Engine implements AutoCloseable {

    /** Connections per client: parallel execs plus the calls around them. */
    static final int MAX_CONNECTIONS = 64;
    /** How much of an error body is read for its message. */
    private static final int MAX_ERROR_BODY = 4096;

    private final URI host;
    private final Duration commandTimeout;
    private final DockerHttpClient controlTransport;
    private final DockerHttpClient streamTransport;
    private final DockerClient control;
    private final DockerClient streams;

    private Engine(URI host, Duration connectTimeout, Duration commandTimeout) {
        this.host = host;
        this.commandTimeout = commandTimeout;
        DefaultDockerClientConfig config = DefaultDockerClientConfig.createDefaultConfigBuilder()
                .withDockerHost(host.toString()).build();
        this.controlTransport = new ZerodepDockerHttpClient.Builder().dockerHost(host).maxConnections(MAX_CONNECTIONS)
                .connectionTimeout(connectTimeout).responseTimeout(commandTimeout).build();
        this.streamTransport = new ZerodepDockerHttpClient.Builder().dockerHost(host).maxConnections(MAX_CONNECTIONS)
                .connectionTimeout(connectTimeout).build();
        this.control = DockerClientImpl.getInstance(config, controlTransport);
        this.streams = DockerClientImpl.getInstance(config, streamTransport);
    }

    static Engine connect(URI host, Duration connectTimeout, Duration commandTimeout) {
        return new Engine(host, connectTimeout, commandTimeout);
    }

    URI host() {
        return host;
    }

    /** Whether the JVM and the engine share a file system, so a host directory can be mounted. */
    boolean isLocal() {
        return "unix".equals(host.getScheme());
    }

    /** The engine's unix socket, for a stream taken over from it ({@link HijackedExec}); empty for tcp. */
    java.util.Optional<java.nio.file.Path> socketPath() {
        return isLocal() && host.getPath() != null && !host.getPath().isEmpty()
                ? java.util.Optional.of(java.nio.file.Path.of(host.getPath())) : java.util.Optional.empty();
    }

    /** The bound on each control call. */
    Duration commandTimeout() {
        return commandTimeout;
    }

    DockerClient control() {
        return control;
    }

    DockerClient streams() {
        return streams;
    }

    /** The engine's answer to one raw archive read: status, the path-stat header, and the body. */
    record ArchiveResponse(int status, String pathStat, InputStream body, DockerHttpClient.Response response)
            implements AutoCloseable {
        @Override
        public void close() {
            // Closing with the body unread drops the connection, which ends the engine's stream too.
            response.close();
        }

        /** The engine's message for a failed call, bounded. */
        String message() {
            try {
                byte[] bytes = body.readNBytes(MAX_ERROR_BODY);
                String text = new String(bytes, StandardCharsets.UTF_8).strip();
                try {
                    Object message = Json.parseObject(text).get("message");
                    return message == null ? text : message.toString();
                } catch (IllegalArgumentException notJson) {
                    return text;
                }
            } catch (IOException e) {
                return "(unreadable: " + ErrorDetail.of(e) + ")";
            }
        }
    }

    /**
     * {@code GET /containers/{id}/archive?path=...}: the path's stat header and a tar stream of it.
     * The caller reads only what it needs and closes.
     */
    ArchiveResponse archive(String containerId, String path) {
        DockerHttpClient.Request request = DockerHttpClient.Request.builder()
                .method(DockerHttpClient.Request.Method.GET)
                .path("/containers/" + URLEncoder.encode(containerId, StandardCharsets.UTF_8) + "/archive?path="
                        + URLEncoder.encode(path, StandardCharsets.UTF_8))
                .build();
        DockerHttpClient.Response response = streamTransport.execute(request);
        return new ArchiveResponse(response.getStatusCode(), response.getHeader("X-Docker-Container-Path-Stat"),
                response.getBody(), response);
    }

    /**
     * Whether a failure says the engine answered "not found" (a container, an image, a volume). Podman 4.3
     * answers an inspect of a container removed meanwhile with 500 and the cause "no such container".
     */
    static boolean isNotFound(RuntimeException failure) {
        if (!(failure instanceof DockerException docker)) {
            return false;
        }
        return docker.getHttpStatus() == 404 || (docker.getHttpStatus() == 500 && String.valueOf(docker.getMessage())
                .toLowerCase(java.util.Locale.ROOT).contains(PODMAN_NO_SUCH_CONTAINER));
    }

    private static final String PODMAN_NO_SUCH_CONTAINER = "\"cause\":\"no such container\"";

    static boolean isConflict(RuntimeException failure) {
        return failure instanceof DockerException docker && docker.getHttpStatus() == 409;
    }

    static boolean isNotModified(RuntimeException failure) {
        return failure instanceof DockerException docker && docker.getHttpStatus() == 304;
    }

    /** A one-line account of an engine failure, for messages and logs. */
    static String detail(Throwable failure) {
        String text = ErrorDetail.of(failure);
        return text.replace('\n', ' ').strip();
    }

    /** Whether a failure is the transport's (no answer at all) rather than the engine's. */
    static boolean isUnreachable(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof IOException) {
                return true;
            }
            String message = String.valueOf(cause.getMessage()).toLowerCase(Locale.ROOT);
            if (message.contains("connection refused") || message.contains("no such file or directory")
                    && !(cause instanceof DockerException)) {
                return true;
            }
        }
        return false;
    }

    @Override
    public void close() {
        try {
            control.close();
        } catch (IOException | RuntimeException ignored) {
            // Best effort: the pools hold only sockets.
        }
        try {
            streams.close();
        } catch (IOException | RuntimeException ignored) {
            // Best effort.
        }
    }
}
