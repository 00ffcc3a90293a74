package org.sandbox4j.aca.emulator;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.net.UnknownHostException;
import java.net.URLEncoder;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.sandbox4j.egress.EgressPolicy;
import org.sandbox4j.egress.EgressProxy;
import org.sandbox4j.egress.EgressRule;
import org.sandbox4j.egress.HostResolver;

/**
 * An emulator of the Azure Container Apps Sandboxes REST data plane, as {@code sandbox4j-aca/ACA-PROTOCOL.md}
 * describes it: a JDK {@link HttpServer} on 127.0.0.1 (ephemeral port), a bearer-token check, the sandbox state
 * machine, label filtering, lifecycle and egress policies stored and read back, a disk-image catalogue and imported
 * images, files kept in a real host directory per sandbox (the guest's {@code /}) and exec carried out in bubblewrap.
 * A stop or a Memory-mode suspend freezes the guest with its memory; a resume goes through {@code Resuming} and thaws
 * it. The guest has a NIC and a route, and its egress is transparent, as on the service: a filter set outside it sends
 * every outbound TCP connection through the platform side ({@link PlatformEgress}) to the sandbox's
 * {@link EgressProxy}, which applies the stored policy (none means open: the service's default is Allow).
 * Switches let tests inject 403 (role propagation), 429 with Retry-After, 5xx, suspension, stops and latencies; every
 * request is logged.
 */
public final class AcaEmulator implements AutoCloseable {

    public static final String API_VERSION = "2026-02-01-preview";
    public static final String BWRAP = "/usr/bin/bwrap";
    private static final Pattern LABEL_KEY = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,62}");
    private static final Set<String> ACTIVE_STOPPED = Set.of("Stopped", "Suspended", "Idle");
    /** MS-early overview: "Waking from suspended or idle state". */
    static final String RESUMING = "Resuming";

    /** One logged request: method, raw path, raw query (null if none) and the body bytes. */
    public record Request(String method, String path, String query, byte[] body) {
        public String bodyText() {
            return new String(body, StandardCharsets.UTF_8);
        }

        /** Path plus {@code ?query} when there is one. */
        public String uri() {
            return query == null ? path : path + "?" + query;
        }

        @Override
        public String toString() {
            return method + " " + uri();
        }
    }

    private static final class Group {
        final Map<String, Sandbox> sandboxes = new LinkedHashMap<>();
        final Map<String, DiskImage> images = new LinkedHashMap<>();
    }

    private static final class Sandbox {
        String id;
        String state;
        String stoppedReason;
        Map<String, Object> labels = new LinkedHashMap<>();
        Object egressPolicy;
        Object lifecycle;
        Object sourcesRef;
        Object resources;
        Map<String, Object> extras = new LinkedHashMap<>();
        String createdTime;
        Instant runningAt;
        String pendingTarget;
        Instant goneAt;
        Path fs;
        Process init;
        long initPid;
        /** Whether the guest's processes are suspended (frozen with their memory), as a stopped VM's are. */
        boolean frozen;
        /** The platform's egress proxy for this sandbox while its guest runs; null when its policy allows nothing. */
        volatile EgressProxy proxy;
        /** The platform side of the guest's transparent egress, and its relay in the guest's network namespace. */
        PlatformEgress platform;
        Process relay;
        /** This sandbox's short directory for the proxy socket (a unix socket path stops at 108 bytes). */
        Path egressDir;
    }

    private static final class DiskImage {
        String id;
        String name;
        Map<String, Object> image;
        Map<String, Object> labels;
        Instant readyAt;
        String extraIdentity;
    }

    private static final class HttpError extends RuntimeException {
        final int status;
        final String code;

        HttpError(int status, String code, String message) {
            super(message, null, false, false);
            this.status = status;
            this.code = code;
        }
    }

    private final Object lock = new Object();
    private final Map<String, Group> groups = new LinkedHashMap<>();
    private final List<Request> requests = new CopyOnWriteArrayList<>();
    private final List<Map<String, Object>> publicCatalogue = new ArrayList<>();
    private HttpServer server;
    private ExecutorService executor;
    private Path stateDir;
    private volatile String acceptedToken;
    private int fail403;
    private int throttle;
    private long throttleRetryAfter;
    private int fail5xx;
    private Duration creationLatency = Duration.ZERO;
    private Duration resumeLatency = Duration.ZERO;
    private Duration stopLatency = Duration.ZERO;
    private Duration deletionLatency = Duration.ZERO;
    private Duration importLatency = Duration.ZERO;
    private volatile Duration execTimeout = Duration.ofSeconds(600);
    private int pageSize;
    /** How the platform's egress proxy resolves names; by default it knows none, so no test ever asks real DNS. */
    private volatile HostResolver egressResolver = name -> {
        throw new UnknownHostException(name + " (the emulator's egress resolver knows no names; see egressResolver)");
    };
    /** The emulated internet: public host name → the loopback server standing in for it. */
    private final Map<String, InetSocketAddress> publicHosts = new LinkedHashMap<>();
    private Path egressRoot;
    private int egressDirs;

    /**
     * The service's prebuilt presets (MS-skill: {@code ubuntu, debian, alpine, python, node, dotnet, playwright};
     * {@code aca sandbox create --disk ubuntu}). Every one boots the same local test root here (the host's
     * {@code /usr}, read-only): the names are the service's, the contents are not.
     */
    public static final List<String> PRESETS = List.of("ubuntu", "debian", "alpine", "python", "node", "dotnet",
            "playwright");

    private AcaEmulator() {
        for (String n : PRESETS) {
            publicCatalogue.add(Json.obj("name", n, "isPublic", true, "description", "prebuilt " + n));
        }
    }

    /** Starts an emulator keeping its sandboxes' files under {@code stateDir} (created if missing). */
    public static AcaEmulator start(Path stateDir) throws IOException {
        AcaEmulator e = new AcaEmulator();
        e.stateDir = Files.createDirectories(stateDir);
        e.egressRoot = Files.createTempDirectory("s4ja");
        e.server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        e.executor = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "aca-emulator");
            t.setDaemon(true);
            return t;
        });
        e.server.setExecutor(e.executor);
        e.server.createContext("/", e::handle);
        e.server.start();
        return e;
    }

    /** Starts an emulator that accepts {@code token} as its bearer token. */
    public static AcaEmulator start(Path stateDir, String token) throws IOException {
        return start(stateDir).acceptToken(token);
    }

    /** {@code http://127.0.0.1:<port>}, no trailing slash: stands in for https://management.<region>.azuredevcompute.io. */
    public String baseUrl() {
        InetSocketAddress a = server.getAddress();
        return "http://" + a.getAddress().getHostAddress() + ":" + a.getPort();
    }

    /** The group path for the given names, e.g. to build URLs in tests. */
    public static String groupPath(String subscription, String resourceGroup, String sandboxGroup) {
        return "/subscriptions/" + subscription + "/resourceGroups/" + resourceGroup + "/sandboxGroups/" + sandboxGroup;
    }

    public Path stateDir() {
        return stateDir;
    }

    // ----------------------------------------------------------------------------------------------------- switches

    public AcaEmulator acceptToken(String token) {
        this.acceptedToken = token;
        return this;
    }

    /** The next {@code n} authorised requests get 403 AuthorizationFailed (a role assignment still propagating). */
    public AcaEmulator failFirstWith403(int n) {
        synchronized (lock) {
            fail403 = n;
        }
        return this;
    }

    /** The next {@code n} authorised requests get 429 with {@code Retry-After: retryAfterSeconds}. */
    public AcaEmulator throttleNext(int n, long retryAfterSeconds) {
        synchronized (lock) {
            throttle = n;
            throttleRetryAfter = retryAfterSeconds;
        }
        return this;
    }

    /** The next {@code n} authorised requests get 503 ServiceUnavailable. */
    public AcaEmulator failNextWith5xx(int n) {
        synchronized (lock) {
            fail5xx = n;
        }
        return this;
    }

    public AcaEmulator creationLatency(Duration d) {
        synchronized (lock) {
            creationLatency = d;
        }
        return this;
    }

    public AcaEmulator resumeLatency(Duration d) {
        synchronized (lock) {
            resumeLatency = d;
        }
        return this;
    }

    public AcaEmulator stopLatency(Duration d) {
        synchronized (lock) {
            stopLatency = d;
        }
        return this;
    }

    public AcaEmulator deletionLatency(Duration d) {
        synchronized (lock) {
            deletionLatency = d;
        }
        return this;
    }

    public AcaEmulator importLatency(Duration d) {
        synchronized (lock) {
            importLatency = d;
        }
        return this;
    }

    /** Per-request exec cap (the claimed ~600 s gateway cap); past it the command is killed and the answer is 504. */
    public AcaEmulator execTimeout(Duration d) {
        execTimeout = d;
        return this;
    }

    /** List answers carry at most {@code n} sandboxes and a {@code nextLink}; 0 (default) = one page, no nextLink. */
    public AcaEmulator pageSize(int n) {
        synchronized (lock) {
            pageSize = n;
        }
        return this;
    }

    /**
     * How the platform's egress proxy resolves the names an allowlisting sandbox asks for. The default knows no name
     * at all (every lookup fails), so no test traffic ever depends on, or reaches, real DNS. Whatever it answers, the
     * proxy refuses loopback, private, link-local and metadata addresses for every name except a {@link #publicHost}.
     */
    public AcaEmulator egressResolver(HostResolver resolver) {
        egressResolver = java.util.Objects.requireNonNull(resolver, "resolver");
        return this;
    }

    /**
     * The emulated internet: {@code name} is a public host, served on this machine by the loopback server at
     * {@code server}. A host rule naming it exactly sends the guest there (and only to that port), as the service's
     * proxy would send it to the public host; every other name is resolved by {@link #egressResolver}.
     */
    public AcaEmulator publicHost(String name, InetSocketAddress server) {
        synchronized (lock) {
            publicHosts.put(name.toLowerCase(Locale.ROOT), server);
        }
        return this;
    }

    /** Replaces the public (prebuilt) disk-image catalogue. */
    public AcaEmulator publicCatalogue(String... names) {
        synchronized (lock) {
            publicCatalogue.clear();
            for (String n : names) {
                publicCatalogue.add(Json.obj("name", n, "isPublic", true, "description", "prebuilt " + n));
            }
        }
        return this;
    }

    /**
     * Service-side suspension (auto-suspend): the sandbox reads Suspended, stoppedReason AutoSuspend; its guest is
     * frozen with its memory (Memory mode), or ended when the sandbox's lifecycle asks for Disk mode.
     */
    public void suspend(String sandboxId) {
        park(sandboxId, "Suspended", "AutoSuspend");
    }

    /** Service-side stop: the sandbox reads Stopped, stoppedReason UserRequested; its guest is frozen, as by POST /stop. */
    public void stop(String sandboxId) {
        park(sandboxId, "Stopped", "UserRequested");
    }

    /** The sandbox is Stopped with stoppedReason Disabled: resume is refused until POST /enable. */
    public void disable(String sandboxId) {
        park(sandboxId, "Stopped", "Disabled");
    }

    /** The sandbox reads Failed. */
    public void fail(String sandboxId) {
        park(sandboxId, "Failed", null);
    }

    /** Service-side deletion (the auto-delete timer): the sandbox is gone at once. */
    public void expire(String sandboxId) {
        synchronized (lock) {
            for (Group g : groups.values()) {
                Sandbox s = g.sandboxes.remove(sandboxId);
                if (s != null) {
                    stopGuest(s);
                    removeTree(s.fs.getParent());
                    removeEgressDir(s);
                    return;
                }
            }
            throw new IllegalArgumentException("no sandbox " + sandboxId);
        }
    }

    private void park(String sandboxId, String state, String reason) {
        synchronized (lock) {
            Sandbox s = find(sandboxId);
            s.state = state;
            s.stoppedReason = reason;
            s.runningAt = null;
            s.pendingTarget = null;
            if (reason == null || reason.equals("Disabled")) {
                stopGuest(s);
            } else {
                suspendGuest(s);
            }
        }
    }

    /** The current state of a sandbox, or null if it does not exist (any group). */
    public String stateOf(String sandboxId) {
        synchronized (lock) {
            for (Group g : groups.values()) {
                advance(g);
                Sandbox s = g.sandboxes.get(sandboxId);
                if (s != null) {
                    return s.state;
                }
            }
            return null;
        }
    }

    /** The host directory that is the sandbox's guest {@code /}. */
    public Path guestRoot(String sandboxId) {
        synchronized (lock) {
            return find(sandboxId).fs;
        }
    }

    /** Ids of every existing sandbox (all groups), in creation order. */
    public List<String> sandboxIds() {
        synchronized (lock) {
            List<String> ids = new ArrayList<>();
            for (Group g : groups.values()) {
                advance(g);
                ids.addAll(g.sandboxes.keySet());
            }
            return ids;
        }
    }

    /** Registers a Ready imported disk image in a group and returns its id. */
    public String importDiskImage(String subscription, String resourceGroup, String sandboxGroup, String base) {
        synchronized (lock) {
            Group g = group(groupPath(subscription, resourceGroup, sandboxGroup));
            DiskImage d = new DiskImage();
            d.id = UUID.randomUUID().toString();
            d.name = diskName(base);
            d.image = Json.obj("base", base);
            d.labels = Json.obj("name", d.name);
            d.readyAt = Instant.EPOCH;
            g.images.put(d.id, d);
            return d.id;
        }
    }

    private Sandbox find(String sandboxId) {
        for (Group g : groups.values()) {
            Sandbox s = g.sandboxes.get(sandboxId);
            if (s != null) {
                return s;
            }
        }
        throw new IllegalArgumentException("no sandbox " + sandboxId);
    }

    public List<Request> requests() {
        return List.copyOf(requests);
    }

    public void clearRequests() {
        requests.clear();
    }

    @Override
    public void close() {
        if (server != null) {
            server.stop(0);
        }
        synchronized (lock) {
            for (Group g : groups.values()) {
                g.sandboxes.values().forEach(AcaEmulator::stopGuest);
            }
        }
        if (executor != null) {
            executor.shutdownNow();
        }
        if (egressRoot != null) {
            removeTree(egressRoot);
        }
    }

    // ------------------------------------------------------------------------------------------------------ serving

    private void handle(HttpExchange ex) throws IOException {
        try (ex) {
            byte[] body;
            try (InputStream in = ex.getRequestBody()) {
                body = in.readAllBytes();
            }
            String method = ex.getRequestMethod();
            String rawPath = ex.getRequestURI().getRawPath();
            String rawQuery = ex.getRequestURI().getRawQuery();
            requests.add(new Request(method, rawPath, rawQuery, body));
            try {
                serve(ex, method, rawPath, rawQuery, body);
            } catch (NoSuchFileException e) {
                sendJson(ex, 404, Json.obj("error", Json.obj("code", "PathNotFound", "message",
                        "no such file or directory")));
            } catch (java.nio.file.FileSystemException e) {
                sendJson(ex, 400, Json.obj("error", Json.obj("code", "InvalidRequest", "message",
                        "file system refused the operation: " + e.getReason())));
            } catch (HttpError e) {
                if (e.status == 401) {
                    ex.getResponseHeaders().add("WWW-Authenticate", "Bearer");
                }
                sendJson(ex, e.status, Json.obj("error", Json.obj("code", e.code, "message", e.getMessage())));
            } catch (RuntimeException e) {
                sendJson(ex, 500, Json.obj("error", Json.obj("code", "InternalServerError", "message",
                        "emulator: " + e)));
            }
        }
    }

    private void serve(HttpExchange ex, String method, String rawPath, String rawQuery, byte[] body)
            throws IOException {
        String auth = ex.getRequestHeaders().getFirst("Authorization");
        String token = acceptedToken;
        if (token == null || auth == null || !auth.equals("Bearer " + token)) {
            throw new HttpError(401, "Unauthorized", "missing or invalid bearer token");
        }
        Map<String, String> q = query(rawQuery);
        if (!API_VERSION.equals(q.get("api-version"))) {
            throw new HttpError(400, "InvalidApiVersion", "api-version must be " + API_VERSION);
        }
        synchronized (lock) {
            if (fail403 > 0) {
                fail403--;
                throw new HttpError(403, "AuthorizationFailed",
                        "the client does not have authorization to perform this action (role assignment propagating)");
            }
            if (throttle > 0) {
                throttle--;
                ex.getResponseHeaders().add("Retry-After", Long.toString(throttleRetryAfter));
                throw new HttpError(429, "TooManyRequests", "too many requests");
            }
            if (fail5xx > 0) {
                fail5xx--;
                throw new HttpError(503, "ServiceUnavailable", "the service is temporarily unavailable");
            }
        }
        List<String> seg = segments(rawPath);
        if (seg.size() < 7 || !seg.get(0).equals("subscriptions") || !seg.get(2).equals("resourceGroups")
                || !seg.get(4).equals("sandboxGroups")) {
            throw notFound(rawPath);
        }
        String gp = groupPath(seg.get(1), seg.get(3), seg.get(5));
        List<String> rest = seg.subList(6, seg.size());
        String base = baseUrl() + rawPath;
        if (rest.get(0).equals("sandboxes")) {
            sandboxes(ex, method, gp, rest, q, body, base);
        } else if (rest.get(0).equals("diskimages")) {
            diskImages(ex, method, gp, rest, body);
        } else {
            throw notFound(rawPath);
        }
    }

    private static HttpError notFound(String what) {
        return new HttpError(404, "NotFound", "no such resource: " + what);
    }

    private static HttpError methodNotAllowed(String method) {
        return new HttpError(405, "MethodNotAllowed", "method " + method + " not allowed here");
    }

    private void sandboxes(HttpExchange ex, String method, String gp, List<String> rest, Map<String, String> q,
            byte[] body, String selfUrl) throws IOException {
        if (rest.size() == 1) {
            switch (method) {
                case "PUT":
                    sendJson(ex, 201, create(gp, jsonBody(body)));
                    return;
                case "GET":
                    sendJson(ex, 200, list(gp, q, selfUrl));
                    return;
                default:
                    throw methodNotAllowed(method);
            }
        }
        String id = rest.get(1);
        if (rest.size() == 2) {
            switch (method) {
                case "GET":
                    synchronized (lock) {
                        sendJson(ex, 200, view(sandbox(gp, id)));
                    }
                    return;
                case "DELETE":
                    synchronized (lock) {
                        Sandbox s = sandbox(gp, id);
                        if (!s.state.equals("Deleting")) {
                            stopGuest(s);
                            s.state = "Deleting";
                            s.goneAt = Instant.now().plus(deletionLatency);
                            s.runningAt = null;
                        }
                    }
                    sendEmpty(ex, 202);
                    return;
                default:
                    throw methodNotAllowed(method);
            }
        }
        String op = rest.get(2);
        if (rest.size() == 3) {
            switch (op) {
                case "stop":
                    requireMethod(method, "POST");
                    lifecycleAction(gp, id, "stop");
                    sendEmpty(ex, 202);
                    return;
                case "resume":
                    requireMethod(method, "POST");
                    lifecycleAction(gp, id, "resume");
                    sendEmpty(ex, 202);
                    return;
                case "enable":
                    requireMethod(method, "POST");
                    lifecycleAction(gp, id, "enable");
                    sendEmpty(ex, 202);
                    return;
                case "lifecycle":
                    requireMethod(method, "POST");
                    sendJson(ex, 200, setLifecycle(gp, id, jsonBody(body)));
                    return;
                case "egresspolicy":
                    requireMethod(method, "POST");
                    sendJson(ex, 200, setEgress(gp, id, jsonBody(body)));
                    return;
                case "egress-decisions":
                    requireMethod(method, "GET");
                    synchronized (lock) {
                        sandbox(gp, id);
                    }
                    sendJson(ex, 200, Json.obj("value", List.of()));
                    return;
                case "executeShellCommand":
                    requireMethod(method, "POST");
                    exec(ex, gp, id, jsonBody(body));
                    return;
                case "files":
                    files(ex, method, gp, id, q, body);
                    return;
                default:
                    throw notFound(op);
            }
        }
        if (rest.size() == 4 && op.equals("files")) {
            String sub = rest.get(3);
            Path fs = runningFs(gp, id);
            switch (sub) {
                case "stat": {
                    requireMethod(method, "GET");
                    String p = guestPath(q.get("path"));
                    Path h = resolve(fs, p, false);
                    if (!Files.exists(h, LinkOption.NOFOLLOW_LINKS)) {
                        throw new HttpError(404, "PathNotFound", "no such file or directory: " + p);
                    }
                    sendJson(ex, 200, entry(h, p));
                    return;
                }
                case "list": {
                    requireMethod(method, "GET");
                    String p = guestPath(q.get("path"));
                    Path h = resolve(fs, p, false);
                    if (!Files.exists(h, LinkOption.NOFOLLOW_LINKS)) {
                        throw new HttpError(404, "PathNotFound", "no such file or directory: " + p);
                    }
                    if (!Files.isDirectory(h, LinkOption.NOFOLLOW_LINKS)) {
                        throw new HttpError(400, "InvalidRequest", "not a directory: " + p);
                    }
                    List<Map<String, Object>> entries = new ArrayList<>();
                    List<Path> children;
                    try (Stream<Path> st = Files.list(h)) {
                        children = new ArrayList<>(st.toList());
                    }
                    children.sort(Comparator.comparing(c -> c.getFileName().toString()));
                    for (Path c : children) {
                        String name = c.getFileName().toString();
                        entries.add(entry(c, p.equals("/") ? "/" + name : p + "/" + name));
                    }
                    sendJson(ex, 200, Json.obj("path", p, "entries", entries));
                    return;
                }
                case "mkdir": {
                    requireMethod(method, "POST");
                    Object pv = jsonBody(body).get("path");
                    if (!(pv instanceof String)) {
                        throw new HttpError(400, "InvalidRequest", "body needs a string 'path'");
                    }
                    String p = guestPath((String) pv);
                    Path h = resolve(fs, p, true);
                    boolean existed = Files.isDirectory(h);
                    mkdirs(fs, p);
                    sendJson(ex, existed ? 200 : 201, entry(resolve(fs, p, false), p));
                    return;
                }
                default:
                    throw notFound(sub);
            }
        }
        throw notFound(String.join("/", rest));
    }

    private static void requireMethod(String method, String wanted) {
        if (!method.equals(wanted)) {
            throw methodNotAllowed(method);
        }
    }

    // ------------------------------------------------------------------------------------------------ state machine

    private Group group(String gp) {
        return groups.computeIfAbsent(gp, k -> new Group());
    }

    /** Applies the time-driven transitions of every sandbox and disk image in the group. Caller holds the lock. */
    private void advance(Group g) {
        Instant now = Instant.now();
        var it = g.sandboxes.values().iterator();
        while (it.hasNext()) {
            Sandbox s = it.next();
            if (s.state.equals("Deleting")) {
                if (s.goneAt != null && !now.isBefore(s.goneAt)) {
                    it.remove();
                    removeTree(s.fs.getParent());
                    removeEgressDir(s);
                }
                continue;
            }
            if (s.runningAt != null && !now.isBefore(s.runningAt)) {
                s.state = s.pendingTarget == null ? "Running" : s.pendingTarget;
                s.pendingTarget = null;
                s.runningAt = null;
                if (s.state.equals("Running")) {
                    s.stoppedReason = null;
                    thawGuest(s);
                } else {
                    suspendGuest(s);
                }
            }
        }
    }

    private Sandbox sandbox(String gp, String id) {
        Group g = group(gp);
        advance(g);
        Sandbox s = g.sandboxes.get(id);
        if (s == null) {
            throw new HttpError(404, "SandboxNotFound", "sandbox " + id + " not found");
        }
        return s;
    }

    private Map<String, Object> create(String gp, Map<String, Object> b) throws IOException {
        Object src = b.get("sourcesRef");
        Object preset = b.get("presetSandboxType");
        synchronized (lock) {
            Group g = group(gp);
            advance(g);
            if (src == null && preset == null) {
                throw new HttpError(400, "InvalidRequest", "sourcesRef (or presetSandboxType) is required");
            }
            if (src != null) {
                validateSource(g, src);
            }
            Map<String, Object> labels = new LinkedHashMap<>();
            Object lv = b.get("labels");
            if (lv != null) {
                if (!(lv instanceof Map)) {
                    throw new HttpError(400, "InvalidLabel", "labels must be an object");
                }
                for (Map.Entry<?, ?> e : ((Map<?, ?>) lv).entrySet()) {
                    String k = (String) e.getKey();
                    if (!LABEL_KEY.matcher(k).matches()) {
                        throw new HttpError(400, "InvalidLabel", "invalid label key: " + k);
                    }
                    if (!(e.getValue() instanceof String)) {
                        throw new HttpError(400, "InvalidLabel", "label " + k + " must have a string value");
                    }
                    String v = (String) e.getValue();
                    if (v.length() > 63) {
                        throw new HttpError(400, "InvalidLabel", "label " + k + " value is longer than 63 characters");
                    }
                    labels.put(k, v);
                }
            }
            Object egress = b.get("egressPolicy");
            if (egress != null) {
                validateEgress(egress);
            }
            Sandbox s = new Sandbox();
            s.id = UUID.randomUUID().toString();
            s.state = "Creating";
            s.labels = labels;
            s.egressPolicy = egress;
            s.sourcesRef = src != null ? src : Json.obj("presetSandboxType", preset);
            s.resources = b.containsKey("resources") ? b.get("resources") : Json.obj("cpu", "1000m", "memory", "2048Mi");
            s.lifecycle = b.containsKey("lifecycle") ? b.get("lifecycle")
                    : Json.obj("autoSuspendPolicy", Json.obj("enabled", true, "interval", 300L, "mode", "Memory"));
            for (String k : List.of("environment", "connections", "volumes", "ports", "entrypoint", "cmd",
                    "skipEgressProxy", "customerVnetConnectionName", "vmmType")) {
                if (b.containsKey(k)) {
                    s.extras.put(k, b.get(k));
                }
            }
            s.createdTime = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
            Path dir = stateDir.resolve("sandboxes").resolve(s.id);
            s.fs = Files.createDirectories(dir.resolve("fs"));
            guestLayout(s.fs);
            Files.setPosixFilePermissions(s.fs, EnumSet.of(PosixFilePermission.OWNER_READ,
                    PosixFilePermission.OWNER_WRITE, PosixFilePermission.OWNER_EXECUTE,
                    PosixFilePermission.GROUP_READ, PosixFilePermission.GROUP_EXECUTE,
                    PosixFilePermission.OTHERS_READ, PosixFilePermission.OTHERS_EXECUTE));
            // Running from the first read after the create answer on (latency 0), never in the answer itself.
            s.runningAt = Instant.now().plus(creationLatency);
            g.sandboxes.put(s.id, s);
            Map<String, Object> v = view(s);
            v.put("state", "Creating");
            return v;
        }
    }

    private void validateSource(Group g, Object src) {
        if (!(src instanceof Map) || ((Map<?, ?>) src).size() != 1) {
            throw new HttpError(400, "InvalidRequest", "sourcesRef must hold exactly one of diskImage, snapshot");
        }
        Map<?, ?> m = (Map<?, ?>) src;
        if (m.containsKey("snapshot")) {
            throw new HttpError(400, "InvalidRequest", "snapshot not found");
        }
        Object di = m.get("diskImage");
        if (!(di instanceof Map)) {
            throw new HttpError(400, "InvalidRequest", "sourcesRef.diskImage must be an object");
        }
        Map<?, ?> d = (Map<?, ?>) di;
        if (d.get("id") instanceof String) {
            DiskImage img = g.images.get((String) d.get("id"));
            if (img == null) {
                throw new HttpError(400, "InvalidRequest", "disk image " + d.get("id") + " not found");
            }
            if (Instant.now().isBefore(img.readyAt)) {
                throw new HttpError(400, "InvalidRequest", "disk image " + d.get("id") + " is not ready");
            }
            return;
        }
        if (d.get("name") instanceof String && Boolean.TRUE.equals(d.get("isPublic"))) {
            String name = (String) d.get("name");
            for (Map<String, Object> e : publicCatalogue) {
                if (e.get("name").equals(name)) {
                    return;
                }
            }
            throw new HttpError(400, "InvalidRequest", "public disk image " + name + " not found");
        }
        throw new HttpError(400, "InvalidRequest", "sourcesRef.diskImage needs {id} or {name, isPublic:true}");
    }

    /**
     * The policy's shape (ASSUMED: the service's validation is not established), then what the emulator enforces:
     * a Deny default with Allow host rules, each pattern a host name, {@code *.suffix} or an IP address, or an Allow
     * default (also what an absent {@code defaultAction} or an absent policy means: 3P-aca-rs, "the data plane's own
     * default is Allow"). Deny host rules and request {@code rules} are refused with 501 {@code NotEmulated} rather
     * than stored unenforced: an emulator that says it allows less than it does would make a refusal probe pass.
     */
    private static void validateEgress(Object p) {
        if (!(p instanceof Map)) {
            throw new HttpError(400, "InvalidRequest", "egressPolicy must be an object");
        }
        Map<?, ?> m = (Map<?, ?>) p;
        Object da = m.get("defaultAction");
        if (da != null && !Set.of("Allow", "Deny").contains(da)) {
            throw new HttpError(400, "InvalidRequest", "defaultAction must be Allow or Deny");
        }
        Object ti = m.get("trafficInspection");
        if (ti != null && !Set.of("Full", "Partial", "None", "Legacy").contains(ti)) {
            throw new HttpError(400, "InvalidRequest", "trafficInspection must be Full, Partial, None or Legacy");
        }
        Object hr = m.get("hostRules");
        if (hr != null) {
            if (!(hr instanceof List)) {
                throw new HttpError(400, "InvalidRequest", "hostRules must be an array");
            }
            for (Object r : (List<?>) hr) {
                if (!(r instanceof Map) || !(((Map<?, ?>) r).get("pattern") instanceof String)
                        || ((String) ((Map<?, ?>) r).get("pattern")).isEmpty()
                        || !Set.of("Allow", "Deny").contains(((Map<?, ?>) r).get("action"))) {
                    throw new HttpError(400, "InvalidRequest", "each host rule needs a pattern and action Allow|Deny");
                }
                String pattern = (String) ((Map<?, ?>) r).get("pattern");
                if (!isHostPattern(pattern)) {
                    throw new HttpError(400, "InvalidRequest", "host rule pattern '" + pattern + "' is not a host "
                            + "name, *.suffix or IP address");
                }
                if (!"Allow".equals(((Map<?, ?>) r).get("action"))) {
                    throw notEmulated("host rules with action Deny");
                }
            }
        }
        if (m.get("rules") instanceof List<?> rules && !rules.isEmpty()) {
            throw notEmulated("request rules ('rules')");
        }
    }

    /** A host name, {@code *.suffix} or IP address: no port, pin, scheme or path. */
    private static boolean isHostPattern(String pattern) {
        try {
            EgressRule rule = EgressRule.parse(pattern);
            return rule.pin().isEmpty() && rule.ports().equals(EgressRule.DEFAULT_PORTS);
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    private static HttpError notEmulated(String what) {
        return new HttpError(501, "NotEmulated", "the emulator enforces only a Deny default with Allow host rules; it "
                + "does not emulate " + what);
    }

    private Map<String, Object> view(Sandbox s) {
        Map<String, Object> v = new LinkedHashMap<>();
        v.put("id", s.id);
        v.put("state", s.state);
        v.put("labels", s.labels);
        v.put("stateDetails", s.stoppedReason == null ? Json.obj() : Json.obj("stoppedReason", s.stoppedReason));
        if (s.egressPolicy != null) {
            v.put("egressPolicy", s.egressPolicy);
        }
        v.put("lifecycle", s.lifecycle);
        v.put("sourcesRef", s.sourcesRef);
        v.put("resources", s.resources);
        v.putAll(s.extras);
        v.put("createdTime", s.createdTime);
        return v;
    }

    private Map<String, Object> list(String gp, Map<String, String> q, String selfUrl) {
        Map<String, String> filter = new LinkedHashMap<>();
        String lf = q.get("labels");
        if (lf != null && !lf.isEmpty()) {
            for (String pair : lf.split(",", -1)) {
                int eq = pair.indexOf('=');
                if (eq <= 0) {
                    throw new HttpError(400, "InvalidRequest", "labels filter must be k1=v1,k2=v2");
                }
                filter.put(pair.substring(0, eq), pair.substring(eq + 1));
            }
        }
        synchronized (lock) {
            Group g = group(gp);
            advance(g);
            List<Map<String, Object>> all = new ArrayList<>();
            for (Sandbox s : g.sandboxes.values()) {
                boolean match = true;
                for (Map.Entry<String, String> f : filter.entrySet()) {
                    if (!f.getValue().equals(s.labels.get(f.getKey()))) {
                        match = false;
                        break;
                    }
                }
                if (match) {
                    all.add(view(s));
                }
            }
            if (pageSize <= 0) {
                return Json.obj("value", all);
            }
            int skip = 0;
            if (q.get("skipToken") != null) {
                try {
                    skip = Integer.parseInt(q.get("skipToken"));
                } catch (NumberFormatException e) {
                    throw new HttpError(400, "InvalidRequest", "bad skipToken");
                }
            }
            int end = Math.min(all.size(), skip + pageSize);
            Map<String, Object> out = Json.obj("value", skip >= all.size() ? List.of() : all.subList(skip, end));
            if (end < all.size()) {
                StringBuilder next = new StringBuilder(selfUrl).append("?api-version=").append(API_VERSION);
                if (lf != null) {
                    next.append("&labels=").append(URLEncoder.encode(lf, StandardCharsets.UTF_8));
                }
                next.append("&skipToken=").append(end);
                out.put("nextLink", next.toString());
            }
            return out;
        }
    }

    private void lifecycleAction(String gp, String id, String action) {
        synchronized (lock) {
            Sandbox s = sandbox(gp, id);
            Instant now = Instant.now();
            switch (action) {
                case "stop":
                    if (s.state.equals("Stopped") || s.state.equals("Stopping")) {
                        return;
                    }
                    if (!s.state.equals("Running") && !ACTIVE_STOPPED.contains(s.state)) {
                        throw new HttpError(409, "Conflict", "sandbox " + id + " cannot be stopped while " + s.state);
                    }
                    s.state = "Stopping";
                    s.stoppedReason = "UserRequested";
                    s.pendingTarget = "Stopped";
                    s.runningAt = now.plus(stopLatency);
                    advance(group(gp));
                    return;
                case "resume":
                    if (s.state.equals("Running") || s.state.equals(RESUMING)) {
                        return;
                    }
                    if (!ACTIVE_STOPPED.contains(s.state)) {
                        throw new HttpError(409, "Conflict", "sandbox " + id + " cannot be resumed while " + s.state);
                    }
                    if ("Disabled".equals(s.stoppedReason)) {
                        throw new HttpError(409, "Conflict", "sandbox " + id + " is disabled; POST /enable first");
                    }
                    if (s.runningAt == null) {
                        s.pendingTarget = null;
                        s.state = RESUMING;
                        s.runningAt = now.plus(resumeLatency);
                    }
                    advance(group(gp));
                    return;
                case "enable":
                    if ("Disabled".equals(s.stoppedReason)) {
                        s.stoppedReason = "UserRequested";
                    }
                    return;
                default:
                    throw new IllegalStateException(action);
            }
        }
    }

    private Object setLifecycle(String gp, String id, Map<String, Object> b) {
        synchronized (lock) {
            Sandbox s = sandbox(gp, id);
            if (s.state.equals("Deleting")) {
                throw new HttpError(409, "Conflict", "sandbox " + id + " is being deleted");
            }
            Map<String, Object> lc = new LinkedHashMap<>();
            for (String k : List.of("autoSuspendPolicy", "autoDeletePolicy")) {
                if (b.containsKey(k)) {
                    if (!(b.get(k) instanceof Map)) {
                        throw new HttpError(400, "InvalidRequest", k + " must be an object");
                    }
                    lc.put(k, b.get(k));
                }
            }
            if (lc.isEmpty()) {
                throw new HttpError(400, "InvalidRequest", "lifecycle needs autoSuspendPolicy and/or autoDeletePolicy");
            }
            s.lifecycle = lc;
            return lc;
        }
    }

    private Object setEgress(String gp, String id, Map<String, Object> b) throws IOException {
        synchronized (lock) {
            Sandbox s = sandbox(gp, id);
            requireRunning(s);
            validateEgress(b);
            s.egressPolicy = b;
            if (s.init != null && s.init.isAlive()) {
                // The guest keeps its mount of the socket directory; a new proxy on the same path takes over.
                stopEgress(s);
                startEgress(s);
            }
            return b;
        }
    }

    private static void requireRunning(Sandbox s) {
        if (!s.state.equals("Running")) {
            throw new HttpError(409, "SandboxNotRunning", "sandbox " + s.id + " is " + s.state + ", not Running");
        }
    }

    private Path runningFs(String gp, String id) {
        synchronized (lock) {
            Sandbox s = sandbox(gp, id);
            requireRunning(s);
            return s.fs;
        }
    }

    // -------------------------------------------------------------------------------------------------------- exec

    private void exec(HttpExchange ex, String gp, String id, Map<String, Object> b) throws IOException {
        Object cmd = b.get("command");
        if (!(cmd instanceof String)) {
            throw new HttpError(400, "InvalidRequest", "body needs a string 'command'");
        }
        Object wdv = b.get("workingDirectory");
        if (wdv != null && !(wdv instanceof String)) {
            throw new HttpError(400, "InvalidRequest", "workingDirectory must be a string");
        }
        Path fs;
        long initPid;
        synchronized (lock) {
            Sandbox s = sandbox(gp, id);
            requireRunning(s);
            fs = s.fs;
            initPid = guestInit(s);
        }
        String wd = wdv == null || ((String) wdv).isEmpty() ? "/" : guestPath((String) wdv);
        if (!wd.equals("/") && !Files.isDirectory(resolve(fs, wd, true))) {
            throw new HttpError(400, "InvalidRequest", "workingDirectory does not exist: " + wd);
        }
        Path out = Files.createTempFile(stateDir, "exec-", ".out");
        Path err = Files.createTempFile(stateDir, "exec-", ".err");
        try {
            // Enter the sandbox's long-lived namespaces (so what one exec starts in the background outlives it, as on
            // the service) as the guest user, no new privileges, no capabilities left after the exec of sh.
            List<String> argv = new ArrayList<>(List.of("/usr/bin/setpriv", "--no-new-privs", "/usr/bin/nsenter", "-t",
                    Long.toString(initPid), "-U", "-m", "-p", "-n", "-i", "-u", "-S", "65534", "-G", "65534", "-r",
                    "-W", wd, "--", "/usr/bin/env", "-i", "PATH=/usr/bin:/bin", "HOME=/"));
            // No proxy setting: the platform's filter outside the guest carries or refuses every connection.
            argv.addAll(List.of("sh", "-c", (String) cmd));
            long t0 = System.nanoTime();
            Process p = new ProcessBuilder(inCgroups(id, argv)).redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                    .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
            boolean done;
            try {
                done = p.waitFor(execTimeout.toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException ie) {
                kill(p.toHandle());
                Thread.currentThread().interrupt();
                throw new HttpError(503, "ServiceUnavailable", "emulator shutting down");
            }
            if (!done) {
                kill(p.toHandle());
                try {
                    p.waitFor(5, TimeUnit.SECONDS);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                }
                throw new HttpError(504, "GatewayTimeout", "command exceeded " + execTimeout.toMillis() + " ms");
            }
            long ms = (System.nanoTime() - t0) / 1_000_000;
            sendJson(ex, 200, Json.obj("exitCode", (long) p.exitValue(), "stdout", utf8(Files.readAllBytes(out)),
                    "stderr", utf8(Files.readAllBytes(err)), "executionTimeMs", ms));
        } finally {
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
        }
    }

    /** Kills a process and every descendant it still has (what left the tree by double-forking is not reached). */
    private static void kill(ProcessHandle h) {
        List<ProcessHandle> all = new ArrayList<>(h.descendants().toList());
        h.destroyForcibly();
        all.forEach(ProcessHandle::destroyForcibly);
    }

    /** The guest's one long-lived command; its appearance means bubblewrap has finished setting the guest up. */
    private static final List<String> GUEST_HOLDER = List.of("sleep", "infinity");
    /** In the sandbox's egress directory (host side only, never mounted into the guest): the proxy's socket. */
    private static final String EGRESS_SOCKET = "sock";
    /** ... the platform gateway's socket, which the relay in the guest's network namespace connects to. */
    private static final String GATE_SOCKET = "gate";
    /** ... the guest's resolver configuration, bound read-only at /etc/resolv.conf. */
    private static final String RESOLV_CONF = "resolv.conf";
    private static final String RELAY_READY = "relay-ready";
    private static final String PYTHON = "/usr/bin/python3";

    /**
     * The host pid of a process inside the sandbox's guest, starting the guest if it is not up: bubblewrap with the
     * guest root bound as {@code /}, host {@code /usr} read-only over it, fresh /proc, /dev, /tmp and /run, every
     * namespace unshared, uid/gid 65534, no capabilities, cleared environment, then given a NIC behind the platform's
     * filter ({@link #guestNetwork}) and its transparent egress ({@link PlatformEgress}); its resolver is the
     * platform's. Caller holds the lock.
     */
    private long guestInit(Sandbox s) throws IOException {
        if (s.init != null && s.init.isAlive() && s.initPid > 0) {
            thawGuest(s);
            return s.initPid;
        }
        stopGuest(s);
        guestLayout(s.fs);
        makeCgroups(s);
        startEgress(s);
        List<String> bwrap = new ArrayList<>(List.of(BWRAP, "--bind", s.fs.toString(), "/", "--unshare-all",
                "--die-with-parent", "--new-session", "--unshare-user", "--uid", "65534", "--gid", "65534",
                "--cap-drop", "ALL", "--ro-bind", "/usr", "/usr", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
                "--tmpfs", "/run"));
        Path resolvConf = s.egressDir.resolve(RESOLV_CONF);
        Files.writeString(resolvConf, "nameserver " + PlatformEgress.DNS_ADDRESS + "\noptions attempts:1 timeout:2\n");
        bwrap.addAll(List.of("--ro-bind", resolvConf.toString(), "/etc/resolv.conf"));
        bwrap.addAll(List.of("--clearenv", "--setenv", "PATH", "/usr/bin:/bin", "--chdir", "/", "--"));
        bwrap.addAll(GUEST_HOLDER);
        Process p = new ProcessBuilder(inCgroups(s.id, bwrap))
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(stateDir.resolve("sandboxes").resolve(s.id).resolve("init.err").toFile()).start();
        s.init = p;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (System.nanoTime() < deadline && p.isAlive()) {
            // Not bubblewrap's own first child, which exists before its user map, mounts and root are in place (an
            // nsenter into it then fails to setgid, or lands on the host's root): the command it runs once they are.
            long holder = p.toHandle().descendants().mapToLong(ProcessHandle::pid).filter(AcaEmulator::isGuestHolder)
                    .findFirst().orElse(0);
            if (holder > 0) {
                s.initPid = holder;
                if (!guestNetwork(holder) || !startPlatformEgress(s, holder)) {
                    break;
                }
                return holder;
            }
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        stopGuest(s);
        throw new HttpError(500, "InternalServerError", "emulator: the sandbox's guest did not start");
    }

    /**
     * Starts the platform's egress proxy for the sandbox's stored policy when that allows any host; a policy that
     * allows none leaves the guest with no way out at all. Caller holds the lock.
     */
    private void startEgress(Sandbox s) throws IOException {
        if (s.egressDir == null) {
            s.egressDir = Files.createDirectory(egressRoot.resolve(Integer.toString(++egressDirs)));
        }
        Optional<EgressPolicy> policy = enforced(s.egressPolicy);
        if (policy.isEmpty()) {
            return;
        }
        Path socket = s.egressDir.resolve(EGRESS_SOCKET);
        Files.deleteIfExists(socket);
        try {
            s.proxy = EgressProxy.start(socket, policy.get(), EgressProxy.Settings.defaults()
                    .withResolver(egressResolver));
        } catch (RuntimeException e) {
            throw new HttpError(500, "InternalServerError", "emulator: the egress proxy did not start: " + e);
        }
    }

    /**
     * The gateway on the host and its relay in the guest's network namespace (run as host root, outside the guest's
     * pid, mount and user namespaces: the guest can neither see nor signal it). False when the relay did not come up.
     */
    private static boolean startPlatformEgress(Sandbox s, long holder) throws IOException {
        Path ready = s.egressDir.resolve(RELAY_READY);
        Files.deleteIfExists(ready);
        s.platform = PlatformEgress.start(s.egressDir.resolve(GATE_SOCKET),
                () -> Optional.ofNullable(s.proxy).map(EgressProxy::socket));
        s.relay = new ProcessBuilder("/usr/bin/nsenter", "--net=/proc/" + holder + "/ns/net", "--", PYTHON, "-c",
                PlatformEgress.HELPER_SCRIPT, Integer.toString(PlatformEgress.REDIRECT_PORT),
                s.egressDir.resolve(GATE_SOCKET).toString(), PlatformEgress.DNS_ADDRESS, ready.toString(),
                Long.toString(holder))
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(s.egressDir.resolve("relay.err").toFile()).start();
        long deadline = System.nanoTime() + FREEZE_BOUND.toNanos();
        while (System.nanoTime() < deadline && s.relay.isAlive()) {
            if (Files.exists(ready)) {
                return true;
            }
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return false;
    }

    private static void stopPlatformEgress(Sandbox s) {
        if (s.relay != null) {
            s.relay.destroyForcibly();
            try {
                s.relay.waitFor(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            s.relay = null;
        }
        if (s.platform != null) {
            s.platform.close();
            s.platform = null;
        }
    }

    private static void removeEgressDir(Sandbox s) {
        if (s.egressDir != null) {
            removeTree(s.egressDir);
            s.egressDir = null;
        }
    }

    private static void stopEgress(Sandbox s) {
        if (s.proxy != null) {
            s.proxy.close();
            s.proxy = null;
        }
    }

    /**
     * A stored Deny-default policy as the proxy enforces it: one allowlist entry per Allow host rule, or empty when
     * there is none. A pattern naming a {@link #publicHost} is pinned to its loopback server and port; any other
     * admits ports 80 and 443 (ASSUMED: the service's rules name hosts, not ports) at what the resolver answers.
     * Caller holds the lock; the policy passed {@link #validateEgress}.
     */
    private Optional<EgressPolicy> enforced(Object stored) {
        if (!(stored instanceof Map<?, ?> policy) || !"Deny".equals(policy.get("defaultAction"))) {
            // No policy, or an Allow default: open, which here is the whole emulated internet (every public host).
            List<String> open = new ArrayList<>();
            publicHosts.forEach((name, server) -> open.add(pinned(name, server)));
            return open.isEmpty() ? Optional.empty() : Optional.of(EgressPolicy.parse(open));
        }
        if (!(policy.get("hostRules") instanceof List<?> rules)) {
            return Optional.empty();
        }
        List<String> entries = new ArrayList<>();
        for (Object item : rules) {
            Map<?, ?> rule = (Map<?, ?>) item;
            if ("Allow".equals(rule.get("action"))) {
                String pattern = (String) rule.get("pattern");
                InetSocketAddress server = publicHosts.get(pattern.toLowerCase(Locale.ROOT));
                entries.add(server == null ? pattern : pinned(pattern, server));
            }
        }
        return entries.isEmpty() ? Optional.empty() : Optional.of(EgressPolicy.parse(entries));
    }

    /** The allowlist entry that sends {@code name} to its loopback stand-in, that port only. */
    private static String pinned(String name, InetSocketAddress server) {
        return name + ":" + server.getPort() + "=" + literal(server.getAddress());
    }

    private static String literal(InetAddress address) {
        return address instanceof Inet6Address ? "[" + address.getHostAddress() + "]" : address.getHostAddress();
    }

    /** The guest's address: 100.96.0.0/24 (shared address space), never a private range a test could reach. */
    public static final String GUEST_ADDRESS = "100.96.0.2/24";
    static final String GUEST_GATEWAY = "100.96.0.1";
    /** The guest's NIC, and its veth peer, which stays in the guest's own namespace (nothing is behind it). */
    public static final String GUEST_NIC = "eth0";
    static final String NIC_PEER = "veth-platform";

    /**
     * Gives the guest's network namespace what a microVM's looks like (a NIC with an address and a default route) and
     * the platform's filter on it, set as host root from outside the guest (which holds no capability to undo it):
     * every TCP connection that would leave by anything but {@code lo} is redirected to the platform's relay
     * ({@link PlatformEgress}), and every other packet that would leave is dropped (TCP the redirect did not take
     * included). False, and the guest is not used, when any step
     * fails: no NIC goes unfiltered.
     */
    private static boolean guestNetwork(long holder) {
        List<String> enter = List.of("/usr/bin/nsenter", "--net=/proc/" + holder + "/ns/net", "--");
        List<List<String>> steps = List.of(
                List.of("/usr/sbin/iptables", "-A", "OUTPUT", "!", "-o", "lo", "!", "-p", "tcp", "-j", "DROP"),
                // The filter sees a redirected connection still bound for its original device: what passes is TCP
                // that the redirect below took (conntrack DNAT), and nothing else.
                List.of("/usr/sbin/iptables", "-A", "OUTPUT", "!", "-o", "lo", "-p", "tcp", "-m", "conntrack", "!",
                        "--ctstate", "DNAT", "-j", "DROP"),
                List.of("/usr/sbin/iptables", "-t", "nat", "-A", "OUTPUT", "!", "-o", "lo", "-p", "tcp", "-j",
                        "REDIRECT", "--to-ports", Integer.toString(PlatformEgress.REDIRECT_PORT)),
                List.of("/usr/sbin/ip6tables", "-A", "OUTPUT", "!", "-o", "lo", "-j", "DROP"),
                List.of("/usr/sbin/ip", "link", "add", GUEST_NIC, "type", "veth", "peer", "name", NIC_PEER),
                List.of("/usr/sbin/ip", "address", "add", GUEST_ADDRESS, "dev", GUEST_NIC),
                List.of("/usr/sbin/ip", "link", "set", NIC_PEER, "up"),
                List.of("/usr/sbin/ip", "link", "set", GUEST_NIC, "up"),
                List.of("/usr/sbin/ip", "route", "add", "default", "via", GUEST_GATEWAY, "dev", GUEST_NIC));
        for (List<String> step : steps) {
            List<String> argv = new ArrayList<>(enter);
            argv.addAll(step);
            if (!run(argv)) {
                return false;
            }
        }
        return true;
    }

    /** Whether {@code pid} runs {@link #GUEST_HOLDER} in a pid namespace other than ours. */
    private static boolean isGuestHolder(long pid) {
        try {
            Path proc = Path.of("/proc", Long.toString(pid));
            String cmdline = new String(Files.readAllBytes(proc.resolve("cmdline")), StandardCharsets.UTF_8);
            return cmdline.equals(String.join("\0", GUEST_HOLDER) + "\0")
                    && !Files.readSymbolicLink(proc.resolve("ns/pid")).equals(Files.readSymbolicLink(
                            Path.of("/proc/self/ns/pid")));
        } catch (IOException gone) {
            return false;
        }
    }

    /**
     * Suspends the sandbox's guest as the service suspends its VM: every process kept, frozen, memory intact (the v1
     * freezer where the host has one, else SIGSTOP of every process in the guest's pid namespace). An auto-suspend of a
     * sandbox whose lifecycle asks for Disk mode ends the guest instead ("VM restarts fresh"). Caller holds the lock.
     */
    private static void suspendGuest(Sandbox s) {
        if ("AutoSuspend".equals(s.stoppedReason) && diskMode(s.lifecycle)) {
            stopGuest(s);
            return;
        }
        if (s.init != null && s.init.isAlive() && !s.frozen) {
            signalGuest(s, true);
            s.frozen = true;
        }
    }

    /** Lets a suspended guest run on where it stopped. Caller holds the lock. */
    private static void thawGuest(Sandbox s) {
        if (s.frozen) {
            signalGuest(s, false);
            s.frozen = false;
        }
    }

    /** Whether the lifecycle's autoSuspendPolicy says {@code mode: Disk}. */
    private static boolean diskMode(Object lifecycle) {
        return lifecycle instanceof Map<?, ?> lc && lc.get("autoSuspendPolicy") instanceof Map<?, ?> policy
                && "Disk".equals(policy.get("mode"));
    }

    private static final Duration FREEZE_BOUND = Duration.ofSeconds(5);

    /** Freezes ({@code freeze}) or thaws every process of the guest. */
    private static void signalGuest(Sandbox s, boolean freeze) {
        Path freezer = CGROUP_V1.resolve(FREEZER).resolve("sandbox4j-aca-" + s.id);
        if (Files.isDirectory(freezer)) {
            try {
                Files.writeString(freezer.resolve("freezer.state"), freeze ? "FROZEN" : "THAWED");
                long deadline = System.nanoTime() + FREEZE_BOUND.toNanos();
                while (freeze && !Files.readString(freezer.resolve("freezer.state")).strip().equals("FROZEN")
                        && System.nanoTime() < deadline) {
                    Thread.sleep(10);
                }
                return;
            } catch (IOException | InterruptedException e) {
                if (e instanceof InterruptedException) {
                    Thread.currentThread().interrupt();
                }
                // fall through to signals
            }
        }
        List<String> argv = new ArrayList<>(List.of("/bin/kill", freeze ? "-STOP" : "-CONT", "--"));
        guestPids(s).forEach(pid -> argv.add(Long.toString(pid)));
        if (argv.size() > 3) {
            run(argv);
        }
    }

    /** Every process in the guest's pid namespace, by host pid. */
    private static List<Long> guestPids(Sandbox s) {
        List<Long> pids = new ArrayList<>();
        try {
            Path ns = Files.readSymbolicLink(Path.of("/proc", Long.toString(s.initPid), "ns", "pid"));
            try (Stream<Path> all = Files.list(Path.of("/proc"))) {
                for (Path proc : all.toList()) {
                    String name = proc.getFileName().toString();
                    if (name.chars().allMatch(Character::isDigit)) {
                        try {
                            if (Files.readSymbolicLink(proc.resolve("ns/pid")).equals(ns)) {
                                pids.add(Long.parseLong(name));
                            }
                        } catch (IOException gone) {
                            // exited meanwhile
                        }
                    }
                }
            }
        } catch (IOException gone) {
            // the guest is gone: nothing to signal
        }
        return pids;
    }

    /** Runs a host command (argv, never a shell line), bounded; true when it exited 0. */
    private static boolean run(List<String> argv) {
        try {
            Process p = new ProcessBuilder(argv).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
            if (!p.waitFor(HOST_COMMAND_BOUND.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                return false;
            }
            return p.exitValue() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private static final Duration HOST_COMMAND_BOUND = Duration.ofSeconds(10);

    /** Ends the sandbox's guest: its init and so (pid namespace) every process in it; /tmp goes with it. */
    private static void stopGuest(Sandbox s) {
        // A frozen task cannot die: thaw first.
        thawGuest(s);
        if (s.init != null) {
            kill(s.init.toHandle());
            try {
                s.init.waitFor(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        s.init = null;
        s.initPid = 0;
        stopPlatformEgress(s);
        stopEgress(s);
        removeCgroups(s.id);
    }

    private static final Path CGROUP_V1 = Path.of("/sys/fs/cgroup");
    private static final String FREEZER = "freezer";
    /** The guest's process limit (ASSUMED: the service's VM has one; its value is not established). */
    public static final long GUEST_PIDS_MAX = 1024;

    private static List<Path> cgroups(String id) {
        List<Path> out = new ArrayList<>();
        for (String controller : List.of("pids", "memory", FREEZER)) {
            Path root = CGROUP_V1.resolve(controller);
            if (Files.isWritable(root.resolve("cgroup.procs"))) {
                out.add(root.resolve("sandbox4j-aca-" + id));
            }
        }
        return out;
    }

    /** v1 pids (limit {@link #GUEST_PIDS_MAX}) and memory (the sandbox's resources.memory) groups, where writable. */
    private static void makeCgroups(Sandbox s) {
        for (Path g : cgroups(s.id)) {
            try {
                Files.createDirectories(g);
                String controller = g.getParent().getFileName().toString();
                if (controller.equals("pids")) {
                    Files.writeString(g.resolve("pids.max"), Long.toString(GUEST_PIDS_MAX));
                } else if (controller.equals("memory")) {
                    Files.writeString(g.resolve("memory.limit_in_bytes"), Long.toString(memoryBytes(s.resources)));
                }
            } catch (IOException e) {
                // a host without v1 controllers runs the guest unlimited
            }
        }
    }

    /** resources.memory such as "2048Mi" / "2Gi" in bytes; the SDK default 2048Mi otherwise. */
    static long memoryBytes(Object resources) {
        long fallback = 2048L << 20;
        if (!(resources instanceof Map) || !(((Map<?, ?>) resources).get("memory") instanceof String m)) {
            return fallback;
        }
        try {
            if (m.endsWith("Gi")) {
                return Long.parseLong(m.substring(0, m.length() - 2)) << 30;
            }
            if (m.endsWith("Mi")) {
                return Long.parseLong(m.substring(0, m.length() - 2)) << 20;
            }
            return Long.parseLong(m);
        } catch (NumberFormatException e) {
            return fallback;
        }
    }

    /** Runs argv through a host shell that first moves itself into the sandbox's cgroups. */
    private static List<String> inCgroups(String id, List<String> argv) {
        List<Path> groups = cgroups(id).stream().filter(Files::isDirectory).toList();
        if (groups.isEmpty()) {
            return argv;
        }
        StringBuilder script = new StringBuilder();
        for (int k = 0; k < groups.size(); k++) {
            script.append("echo $$ > \"$").append(k + 1).append("\" || exit 125; ");
        }
        script.append("shift ").append(groups.size()).append("; exec \"$@\"");
        List<String> out = new ArrayList<>(List.of("/bin/sh", "-c", script.toString(), "sh"));
        groups.forEach(g -> out.add(g.resolve("cgroup.procs").toString()));
        out.addAll(argv);
        return out;
    }

    private static void removeCgroups(String id) {
        for (Path g : cgroups(id)) {
            for (int attempt = 0; attempt < 50 && Files.isDirectory(g); attempt++) {
                try {
                    Files.delete(g);
                } catch (IOException e) {
                    try {
                        String procs = Files.readString(g.resolve("cgroup.procs")).trim();
                        for (String pid : procs.isEmpty() ? new String[0] : procs.split("\\s+")) {
                            ProcessHandle.of(Long.parseLong(pid)).ifPresent(ProcessHandle::destroyForcibly);
                        }
                        Thread.sleep(20);
                    } catch (IOException | InterruptedException | NumberFormatException ignored) {
                        // retry
                    }
                }
            }
        }
    }

    /**
     * The guest root is bound as {@code /}, so bwrap's mount points and the {@code /bin}, {@code /lib}, {@code /lib64},
     * {@code /sbin} links live in it (as in an image) rather than being made at every exec (bwrap refuses an existing
     * link). Repaired from the host side before each exec in case the guest removed or replaced one.
     */
    private static void guestLayout(Path fs) throws IOException {
        synchronized (AcaEmulator.class) {
            for (String d : List.of("usr", "proc", "dev", "tmp", "run", "etc")) {
                Path h = fs.resolve(d);
                if (Files.exists(h, LinkOption.NOFOLLOW_LINKS) && !Files.isDirectory(h, LinkOption.NOFOLLOW_LINKS)) {
                    Files.delete(h);
                }
                if (!Files.isDirectory(h, LinkOption.NOFOLLOW_LINKS)) {
                    Files.createDirectory(h);
                    if (d.equals("etc")) {
                        // An image's account file (readable, never executable), made once with its /etc.
                        Files.writeString(h.resolve("passwd"), "root:x:0:0:root:/root:/bin/sh\n"
                                + "nobody:x:65534:65534:nobody:/:/usr/sbin/nologin\n", StandardOpenOption.CREATE_NEW,
                                StandardOpenOption.WRITE);
                    }
                }
            }
            for (String[] l : new String[][] {{"bin", "usr/bin"}, {"lib", "usr/lib"}, {"lib64", "usr/lib64"},
                {"sbin", "usr/sbin"}}) {
                Path h = fs.resolve(l[0]);
                if (Files.isSymbolicLink(h) && Files.readSymbolicLink(h).toString().equals(l[1])) {
                    continue;
                }
                if (Files.isDirectory(h, LinkOption.NOFOLLOW_LINKS)) {
                    removeTree(h);
                } else {
                    Files.deleteIfExists(h);
                }
                Files.createSymbolicLink(h, Path.of(l[1]));
            }
        }
    }

    private static String utf8(byte[] b) {
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPLACE)
                    .onUnmappableCharacter(CodingErrorAction.REPLACE).decode(java.nio.ByteBuffer.wrap(b)).toString();
        } catch (CharacterCodingException e) {
            throw new IllegalStateException(e);
        }
    }

    // ------------------------------------------------------------------------------------------------------- files

    private void files(HttpExchange ex, String method, String gp, String id, Map<String, String> q, byte[] body)
            throws IOException {
        Path fs = runningFs(gp, id);
        String p = guestPath(q.get("path"));
        switch (method) {
            case "GET": {
                Path h = resolve(fs, p, true);
                if (!Files.exists(h, LinkOption.NOFOLLOW_LINKS)) {
                    throw new HttpError(404, "PathNotFound", "no such file: " + p);
                }
                if (Files.isDirectory(h, LinkOption.NOFOLLOW_LINKS)) {
                    throw new HttpError(400, "PathIsDirectory", "is a directory: " + p);
                }
                if (!Files.isRegularFile(h, LinkOption.NOFOLLOW_LINKS)) {
                    // A FIFO (or other special file) read never returns on the service; here it blocks until the
                    // per-request cap and then answers 504, so a client's read timeout is what ends it.
                    try {
                        Thread.sleep(execTimeout.toMillis());
                    } catch (InterruptedException ie) {
                        Thread.currentThread().interrupt();
                    }
                    throw new HttpError(504, "GatewayTimeout", "read of a special file did not complete: " + p);
                }
                byte[] data = Files.readAllBytes(h);
                ex.getResponseHeaders().add("Content-Type", "application/octet-stream");
                ex.sendResponseHeaders(200, data.length == 0 ? -1 : data.length);
                try (OutputStream o = ex.getResponseBody()) {
                    o.write(data);
                }
                return;
            }
            case "PUT": {
                if (p.equals("/")) {
                    throw new HttpError(400, "PathIsDirectory", "is a directory: /");
                }
                boolean createDirs = "true".equalsIgnoreCase(q.get("createDirs"));
                int mode = 0644;
                if (q.get("mode") != null) {
                    try {
                        mode = Integer.parseInt(q.get("mode"), 8) & 07777;
                    } catch (NumberFormatException e) {
                        throw new HttpError(400, "InvalidRequest", "mode must be octal digits");
                    }
                }
                String parent = parentOf(p);
                Path hp = resolve(fs, parent, true);
                if (!Files.isDirectory(hp)) {
                    if (!createDirs || Files.exists(hp, LinkOption.NOFOLLOW_LINKS)) {
                        throw new HttpError(404, "PathNotFound", "parent directory does not exist: " + parent);
                    }
                    mkdirs(fs, parent);
                }
                Path h = resolve(fs, p, true);
                if (Files.isDirectory(h, LinkOption.NOFOLLOW_LINKS)) {
                    throw new HttpError(400, "PathIsDirectory", "is a directory: " + p);
                }
                boolean existed = Files.exists(h, LinkOption.NOFOLLOW_LINKS);
                Files.write(h, body, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                        StandardOpenOption.WRITE);
                Files.setPosixFilePermissions(h, perms(mode));
                sendJson(ex, existed ? 200 : 201, entry(h, p));
                return;
            }
            case "DELETE": {
                if (p.equals("/")) {
                    throw new HttpError(400, "InvalidRequest", "refusing to delete /");
                }
                Path h = resolve(fs, p, false);
                if (!Files.exists(h, LinkOption.NOFOLLOW_LINKS)) {
                    throw new HttpError(404, "PathNotFound", "no such file or directory: " + p);
                }
                boolean recursive = "true".equalsIgnoreCase(q.get("recursive"));
                if (Files.isDirectory(h, LinkOption.NOFOLLOW_LINKS) && recursive) {
                    removeTree(h);
                } else {
                    try {
                        Files.delete(h);
                    } catch (DirectoryNotEmptyException e) {
                        throw new HttpError(409, "Conflict", "directory not empty: " + p);
                    }
                }
                sendEmpty(ex, 204);
                return;
            }
            default:
                throw methodNotAllowed(method);
        }
    }

    private static Set<PosixFilePermission> perms(int mode) {
        Set<PosixFilePermission> s = EnumSet.noneOf(PosixFilePermission.class);
        PosixFilePermission[] order = {PosixFilePermission.OTHERS_EXECUTE, PosixFilePermission.OTHERS_WRITE,
            PosixFilePermission.OTHERS_READ, PosixFilePermission.GROUP_EXECUTE, PosixFilePermission.GROUP_WRITE,
            PosixFilePermission.GROUP_READ, PosixFilePermission.OWNER_EXECUTE, PosixFilePermission.OWNER_WRITE,
            PosixFilePermission.OWNER_READ};
        for (int k = 0; k < order.length; k++) {
            if ((mode & (1 << k)) != 0) {
                s.add(order[k]);
            }
        }
        return s;
    }

    private static String parentOf(String p) {
        int k = p.lastIndexOf('/');
        return k <= 0 ? "/" : p.substring(0, k);
    }

    /** mkdir -p of a guest directory, each component resolved inside the guest root. */
    private static void mkdirs(Path fs, String guestDir) throws IOException {
        String cur = "";
        for (String c : guestDir.split("/")) {
            if (c.isEmpty()) {
                continue;
            }
            cur = cur + "/" + c;
            Path h = resolve(fs, cur, true);
            if (Files.isDirectory(h)) {
                continue;
            }
            if (Files.exists(h, LinkOption.NOFOLLOW_LINKS)) {
                throw new HttpError(400, "InvalidRequest", "not a directory: " + cur);
            }
            try {
                Files.createDirectory(h);
            } catch (FileAlreadyExistsException e) {
                // raced; fine if it is a directory now
                if (!Files.isDirectory(h)) {
                    throw new HttpError(400, "InvalidRequest", "not a directory: " + cur);
                }
            }
        }
    }

    /** The stat/list entry of a host path {@code h} that is the guest path {@code guest}; never follows a link. */
    private static Map<String, Object> entry(Path h, String guest) throws IOException {
        BasicFileAttributes a = Files.readAttributes(h, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        int mode = ((Number) Files.getAttribute(h, "unix:mode", LinkOption.NOFOLLOW_LINKS)).intValue() & 0777;
        Map<String, Object> e = new LinkedHashMap<>();
        String name = guest.equals("/") ? "/" : guest.substring(guest.lastIndexOf('/') + 1);
        e.put("name", name);
        e.put("path", guest);
        e.put("size", a.size());
        e.put("mode", (long) mode);
        e.put("isDir", a.isDirectory());
        e.put("isSymlink", a.isSymbolicLink());
        if (a.isSymbolicLink()) {
            e.put("symlinkTarget", Files.readSymbolicLink(h).toString());
        }
        e.put("modifiedTime", a.lastModifiedTime().toInstant().truncatedTo(ChronoUnit.SECONDS).toString());
        return e;
    }

    /** Validates and normalises a guest path from the wire: absolute, no NUL, no backslash, no '..'. */
    private static String guestPath(String p) {
        if (p == null || p.isEmpty()) {
            throw new HttpError(400, "InvalidRequest", "query parameter 'path' is required");
        }
        if (!p.startsWith("/") || p.indexOf('\0') >= 0 || p.indexOf('\\') >= 0) {
            throw new HttpError(400, "InvalidRequest", "path must be absolute: " + p);
        }
        List<String> parts = new ArrayList<>();
        for (String c : p.split("/")) {
            if (c.isEmpty() || c.equals(".")) {
                continue;
            }
            if (c.equals("..")) {
                throw new HttpError(400, "InvalidRequest", "path must not contain '..': " + p);
            }
            parts.add(c);
        }
        return "/" + String.join("/", parts);
    }

    /**
     * Resolves a normalised guest path to a host path inside the guest root {@code fs}, following links the way the
     * guest kernel would (absolute targets restart at the guest root, never the host's), the leaf only if asked.
     */
    static Path resolve(Path fs, String guest, boolean followLeaf) throws IOException {
        List<String> todo = new ArrayList<>();
        Collections.addAll(todo, guest.split("/"));
        List<String> done = new ArrayList<>();
        int hops = 0;
        while (!todo.isEmpty()) {
            String c = todo.remove(0);
            if (c.isEmpty() || c.equals(".")) {
                continue;
            }
            if (c.equals("..")) {
                if (!done.isEmpty()) {
                    done.remove(done.size() - 1);
                }
                continue;
            }
            Path h = host(fs, done).resolve(c);
            boolean leaf = todo.stream().allMatch(t -> t.isEmpty() || t.equals("."));
            if (Files.isSymbolicLink(h) && (!leaf || followLeaf)) {
                if (++hops > 40) {
                    throw new HttpError(400, "InvalidRequest", "too many levels of symbolic links: " + guest);
                }
                String target = Files.readSymbolicLink(h).toString();
                if (target.startsWith("/")) {
                    done.clear();
                }
                List<String> expanded = new ArrayList<>();
                Collections.addAll(expanded, target.split("/"));
                expanded.addAll(todo);
                todo = expanded;
                continue;
            }
            done.add(c);
        }
        return host(fs, done);
    }

    private static Path host(Path fs, List<String> parts) {
        Path h = fs;
        for (String s : parts) {
            h = h.resolve(s);
        }
        return h;
    }

    /** As the service removes a sandbox's disk: whole, however deep its guest made it, never following a link. */
    private static void removeTree(Path root) {
        try {
            org.sandbox4j.core.spi.TreeRemoval.remove(root, org.sandbox4j.core.spi.TreeRemoval.Mode.PROCESSES_STOPPED,
                    org.sandbox4j.core.spi.TreeRemoval.DEFAULT_DEADLINE);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    // ------------------------------------------------------------------------------------------------- disk images

    private void diskImages(HttpExchange ex, String method, String gp, List<String> rest, byte[] body)
            throws IOException {
        synchronized (lock) {
            Group g = group(gp);
            if (rest.size() == 1) {
                switch (method) {
                    case "GET": {
                        List<Map<String, Object>> all = new ArrayList<>();
                        for (DiskImage d : g.images.values()) {
                            all.add(imageView(d));
                        }
                        sendJson(ex, 200, Json.obj("value", all));
                        return;
                    }
                    case "PUT":
                    case "POST": {
                        Map<String, Object> b = jsonBody(body);
                        Object img = b.get("image");
                        if (!(img instanceof Map) || !(((Map<?, ?>) img).get("base") instanceof String)) {
                            throw new HttpError(400, "InvalidRequest", "image.base is required");
                        }
                        @SuppressWarnings("unchecked")
                        Map<String, Object> image = new LinkedHashMap<>((Map<String, Object>) img);
                        DiskImage d = new DiskImage();
                        d.id = UUID.randomUUID().toString();
                        d.image = image;
                        Object lv = b.get("labels");
                        @SuppressWarnings("unchecked")
                        Map<String, Object> labels = lv instanceof Map ? new LinkedHashMap<>((Map<String, Object>) lv)
                                : new LinkedHashMap<>();
                        d.labels = labels;
                        d.name = labels.get("name") instanceof String ? (String) labels.get("name")
                                : diskName((String) image.get("base"));
                        d.extraIdentity = b.get("managedIdentityResourceId") instanceof String
                                ? (String) b.get("managedIdentityResourceId") : null;
                        d.readyAt = Instant.now().plus(importLatency);
                        g.images.put(d.id, d);
                        Map<String, Object> v = imageView(d);
                        v.put("status", Json.obj("state", "Creating"));
                        sendJson(ex, 201, v);
                        return;
                    }
                    default:
                        throw methodNotAllowed(method);
                }
            }
            if (rest.get(1).equals("public")) {
                requireMethod(method, "GET");
                if (rest.size() == 2) {
                    sendJson(ex, 200, Json.obj("value", publicCatalogue));
                    return;
                }
                if (rest.size() == 3) {
                    for (Map<String, Object> e : publicCatalogue) {
                        if (e.get("name").equals(rest.get(2))) {
                            sendJson(ex, 200, e);
                            return;
                        }
                    }
                    throw new HttpError(404, "NotFound", "no public disk image " + rest.get(2));
                }
                throw notFound(String.join("/", rest));
            }
            if (rest.size() == 2) {
                DiskImage d = g.images.get(rest.get(1));
                if (d == null) {
                    throw new HttpError(404, "NotFound", "no disk image " + rest.get(1));
                }
                switch (method) {
                    case "GET":
                        sendJson(ex, 200, imageView(d));
                        return;
                    case "DELETE":
                        g.images.remove(d.id);
                        sendEmpty(ex, 204);
                        return;
                    default:
                        throw methodNotAllowed(method);
                }
            }
            throw notFound(String.join("/", rest));
        }
    }

    private static Map<String, Object> imageView(DiskImage d) {
        Map<String, Object> v = new LinkedHashMap<>();
        v.put("id", d.id);
        v.put("name", d.name);
        v.put("image", d.image);
        v.put("status", Json.obj("state", Instant.now().isBefore(d.readyAt) ? "Creating" : "Ready"));
        v.put("labels", d.labels);
        if (d.extraIdentity != null) {
            v.put("managedIdentityResourceId", d.extraIdentity);
        }
        return v;
    }

    /** The operator script's disk name: image tail with ':' and '@' as '-', at most 60 chars. */
    static String diskName(String base) {
        String tail = base.substring(base.lastIndexOf('/') + 1).replace(':', '-').replace('@', '-');
        return tail.length() > 60 ? tail.substring(0, 60) : tail;
    }

    // ------------------------------------------------------------------------------------------------------ helpers

    private static Map<String, Object> jsonBody(byte[] body) {
        if (body.length == 0) {
            return new LinkedHashMap<>();
        }
        try {
            return Json.parseObject(new String(body, StandardCharsets.UTF_8));
        } catch (IllegalArgumentException e) {
            throw new HttpError(400, "InvalidRequest", "body is not a JSON object: " + e.getMessage());
        }
    }

    private static Map<String, String> query(String raw) {
        Map<String, String> q = new LinkedHashMap<>();
        if (raw == null || raw.isEmpty()) {
            return q;
        }
        for (String kv : raw.split("&")) {
            int eq = kv.indexOf('=');
            String k = URLDecoder.decode(eq < 0 ? kv : kv.substring(0, eq), StandardCharsets.UTF_8);
            String v = eq < 0 ? "" : URLDecoder.decode(kv.substring(eq + 1), StandardCharsets.UTF_8);
            q.putIfAbsent(k, v);
        }
        return q;
    }

    private static List<String> segments(String rawPath) {
        List<String> out = new ArrayList<>();
        for (String s : rawPath.split("/")) {
            if (s.isEmpty()) {
                continue;
            }
            String d = URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
            if (d.contains("/") || d.contains("\\") || d.equals("..") || d.contains("..") || d.indexOf('\0') >= 0) {
                throw new HttpError(400, "InvalidRequest", "invalid path segment: " + s);
            }
            out.add(d);
        }
        return out;
    }

    private static void sendJson(HttpExchange ex, int status, Object body) throws IOException {
        byte[] b = Json.write(body).getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", "application/json; charset=utf-8");
        ex.sendResponseHeaders(status, b.length);
        try (OutputStream o = ex.getResponseBody()) {
            o.write(b);
        }
    }

    private static void sendEmpty(HttpExchange ex, int status) throws IOException {
        ex.sendResponseHeaders(status, -1);
    }
}
