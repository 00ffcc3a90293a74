package org.sandbox4j.aca;

import java.lang.System.Logger.Level;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.sandbox4j.core.spi.Json;

/**
 * The REST operations of one sandbox group, as {@code ACA-PROTOCOL.md} pins them. Each method
 * returns what the backend needs or throws an {@link AcaServiceException} whose message is fixed;
 * the status and the service's body are logged here, once.
 */
final class AcaClient {

    /** The error code of a 404 about the sandbox itself, not a path in it. */
    static final String SANDBOX_NOT_FOUND_CODE = "SandboxNotFound";
    private static final int MAX_PAGES = 100;
    private static final System.Logger LOG = System.getLogger(AcaClient.class.getName());

    private final String backendName;
    private final AcaHttp http;
    private final String groupPath;
    private final Duration timeout;

    AcaClient(AcaConfig config, AcaHttp http) {
        this.backendName = config.name();
        this.http = http;
        this.groupPath = "/subscriptions/" + AcaHttp.segment(config.subscription()) + "/resourceGroups/"
                + AcaHttp.segment(config.resourceGroup()) + "/sandboxGroups/" + AcaHttp.segment(config.sandboxGroup());
        this.timeout = config.readTimeout();
    }

    String sandboxPath(String id) {
        return groupPath + "/sandboxes/" + AcaHttp.segment(id);
    }

    // ---------------------------------------------------------------- sandboxes

    /** The sandbox object, or empty on 404. */
    Optional<Map<String, Object>> getSandbox(String id) {
        AcaHttp.Response response = http.get(sandboxPath(id), Map.of(), timeout);
        if (response.status() == 404) {
            return Optional.empty();
        }
        return Optional.of(object(require(response, "read sandbox " + id)));
    }

    /**
     * Creates a sandbox and returns its object (state Creating). Never replayed after a 5xx or a
     * lost connection: the service names the sandbox, so a second create would make a second one.
     */
    Map<String, Object> createSandbox(Map<String, Object> body) {
        AcaHttp.Response response = http.send(new AcaHttp.Call("PUT", groupPath + "/sandboxes", Map.of(), json(body),
                "application/json", timeout, AcaHttp.Replay.ONCE));
        return object(require(response, "create a sandbox"));
    }

    /** Every sandbox carrying all of {@code labels}, following nextLink on the endpoint only. */
    List<Map<String, Object>> listSandboxes(Map<String, String> labels) {
        Map<String, String> query = labels.isEmpty() ? Map.of() : AcaHttp.query("labels", AcaLabels.filter(labels));
        AcaHttp.Response response = http.get(groupPath + "/sandboxes", query, timeout);
        List<Map<String, Object>> all = new ArrayList<>();
        for (int page = 0; page < MAX_PAGES; page++) {
            Object value = parse(require(response, "list sandboxes"), "list sandboxes");
            String next = null;
            List<?> items;
            if (value instanceof List<?> bare) {
                items = bare;
            } else if (AcaJson.asObject(value) != null && AcaJson.asObject(value).get("value") instanceof List<?> listed) {
                items = listed;
                next = AcaJson.text(AcaJson.asObject(value), "nextLink");
            } else {
                throw malformed("list sandboxes", "no 'value' array");
            }
            for (Object item : items) {
                Map<String, Object> sandbox = AcaJson.asObject(item);
                if (sandbox != null && AcaJson.text(sandbox, "id") != null) {
                    all.add(sandbox);
                }
            }
            if (next == null || next.isBlank()) {
                return all;
            }
            response = http.getLink(URI.create(next), timeout);
        }
        LOG.log(Level.WARNING, () -> "backend '" + backendName + "': a sandbox listing ran past " + MAX_PAGES + " pages");
        return all;
    }

    /** Starts deleting; true when accepted, false when already gone. */
    boolean deleteSandbox(String id) {
        AcaHttp.Response response = http.send(new AcaHttp.Call("DELETE", sandboxPath(id), Map.of(), null, null, timeout,
                AcaHttp.Replay.SAFE));
        if (response.status() == 404) {
            return false;
        }
        require(response, "delete sandbox " + id);
        return true;
    }

    /** Asks a stopped sandbox to resume; the answer is the caller's to judge by polling. */
    AcaHttp.Response resume(String id) {
        return http.send(new AcaHttp.Call("POST", sandboxPath(id) + "/resume", Map.of(), null, null, timeout,
                AcaHttp.Replay.SAFE));
    }

    /** Replaces the lifecycle policy (both halves: a half left out is dropped). */
    void lifecycle(String id, Map<String, Object> policy) {
        AcaHttp.Response response = http.send(new AcaHttp.Call("POST", sandboxPath(id) + "/lifecycle", Map.of(),
                json(policy), "application/json", timeout, AcaHttp.Replay.SAFE));
        require(response, "set the lifecycle of sandbox " + id);
    }

    // ---------------------------------------------------------------- exec and files

    /**
     * Runs one shell line; the answer unparsed, since 409 and 400 mean things to the caller. The
     * answer is read up to {@code maxAnswerBytes}.
     */
    AcaHttp.Response exec(String id, String command, String workingDirectory, Duration bound, long maxAnswerBytes) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("command", command);
        body.put("workingDirectory", workingDirectory);
        return http.send(new AcaHttp.Call("POST", sandboxPath(id) + "/executeShellCommand", Map.of(), json(body),
                "application/json", bound, AcaHttp.Replay.ONCE, maxAnswerBytes));
    }

    AcaHttp.Response stat(String id, String path) {
        return http.get(sandboxPath(id) + "/files/stat", AcaHttp.query("path", path), fileCallBound());
    }

    AcaHttp.Response list(String id, String path) {
        return http.get(sandboxPath(id) + "/files/list", AcaHttp.query("path", path), fileCallBound());
    }

    /** The file's bytes, read up to {@code maxBytes} (one more refuses the answer). */
    AcaHttp.Response read(String id, String path, long maxBytes) {
        return http.get(sandboxPath(id) + "/files", AcaHttp.query("path", path), fileCallBound(), maxBytes);
    }

    /**
     * The longest one file call may take (a transfer of the largest file a spec allows over a slow
     * link included). The service touches what its guest made: a FIFO swapped in for a file keeps
     * a read or a write open until the bound, which must stay short whatever the read timeout.
     */
    static final Duration FILE_CALL_TIMEOUT = Duration.ofSeconds(30);

    private Duration fileCallBound() {
        return timeout.compareTo(FILE_CALL_TIMEOUT) < 0 ? timeout : FILE_CALL_TIMEOUT;
    }

    AcaHttp.Response write(String id, String path, byte[] content) {
        return http.send(new AcaHttp.Call("PUT", sandboxPath(id) + "/files", AcaHttp.query("path", path, "createDirs",
                "true"), content, "application/octet-stream", fileCallBound(), AcaHttp.Replay.SAFE));
    }

    // ---------------------------------------------------------------- images

    /** The prebuilt catalogue's names. */
    List<String> publicImages() {
        AcaHttp.Response response = http.get(groupPath + "/diskimages/public", Map.of(), timeout);
        List<String> names = new ArrayList<>();
        for (Object item : items(require(response, "list the public disk images"), "list the public disk images")) {
            if (item instanceof String name) {
                names.add(name);
            } else if (AcaJson.asObject(item) != null && AcaJson.text(AcaJson.asObject(item), "name") != null) {
                names.add(AcaJson.text(AcaJson.asObject(item), "name"));
            }
        }
        return names;
    }

    /** The group's imported disk images. */
    List<Map<String, Object>> diskImages() {
        AcaHttp.Response response = http.get(groupPath + "/diskimages", Map.of(), timeout);
        List<Map<String, Object>> images = new ArrayList<>();
        for (Object item : items(require(response, "list the disk images"), "list the disk images")) {
            Map<String, Object> image = AcaJson.asObject(item);
            if (image != null) {
                images.add(image);
            }
        }
        return images;
    }

    // ---------------------------------------------------------------- answers

    /** Throws the fixed-message exception for a non-2xx answer, logging the detail. */
    AcaHttp.Response require(AcaHttp.Response response, String operation) {
        if (response.ok()) {
            return response;
        }
        throw failed(response, operation);
    }

    AcaServiceException failed(AcaHttp.Response response, String operation) {
        LOG.log(Level.WARNING, () -> "backend '" + backendName + "': " + operation + " answered " + response.status()
                + ": " + AcaHttp.bodyForLog(response));
        String hint = switch (response.status()) {
            case 401 -> "; the token was not accepted: check the credential";
            case 403 -> "; the identity lacks the 'Container Apps SandboxGroup Data Owner' role on the sandbox group";
            case 404 -> "; check the endpoint, subscription, resource group and sandbox group";
            case 429 -> "; the service is throttling: try again later";
            default -> response.status() >= 500 ? "; the service failed: try again later" : "";
        };
        return new AcaServiceException("backend '" + backendName + "' could not " + operation + hint
                + " (details in the log)", response.status());
    }

    /** The error code of a failed answer, when its body has the usual shape. */
    static Optional<String> errorCode(AcaHttp.Response response) {
        try {
            Map<String, Object> error = AcaJson.asObject(Json.parseObject(response.text()).get("error"));
            return Optional.ofNullable(error == null ? null : AcaJson.text(error, "code"));
        } catch (RuntimeException notJson) {
            return Optional.empty();
        }
    }

    Map<String, Object> object(AcaHttp.Response response) {
        Map<String, Object> object = AcaJson.asObject(parse(response, "read an answer"));
        if (object == null) {
            throw malformed("read an answer", "not a JSON object");
        }
        return object;
    }

    private List<?> items(AcaHttp.Response response, String operation) {
        Object value = parse(response, operation);
        if (value instanceof List<?> bare) {
            return bare;
        }
        Map<String, Object> object = AcaJson.asObject(value);
        if (object != null && object.get("value") instanceof List<?> listed) {
            return listed;
        }
        throw malformed(operation, "no 'value' array");
    }

    private Object parse(AcaHttp.Response response, String operation) {
        try {
            return Json.parse(response.text());
        } catch (Json.Malformed e) {
            throw malformed(operation, e.getMessage());
        }
    }

    AcaServiceException malformed(String operation, String why) {
        LOG.log(Level.WARNING, () -> "backend '" + backendName + "': " + operation + " returned an unreadable answer: "
                + why);
        return new AcaServiceException("backend '" + backendName + "' could not " + operation + ": the service's "
                + "answer was not understood (details in the log)", 0);
    }

    static byte[] json(Object value) {
        return AcaJson.write(value).getBytes(StandardCharsets.UTF_8);
    }
}
