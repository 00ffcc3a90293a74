package org.sandbox4j.aca;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;
import org.sandbox4j.core.BackendDeclarations;
import org.sandbox4j.core.Capability;
import org.sandbox4j.core.Egress;
import org.sandbox4j.core.spi.EgressRefusals;
import org.sandbox4j.core.spi.ErrorDetail;
import org.sandbox4j.core.spi.GuestText;
import org.sandbox4j.core.Isolation;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.core.SandboxEgressNotEnforced;
import org.sandbox4j.core.spi.Disposals;
import org.sandbox4j.core.SandboxDisposed;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxLimits;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.TransferLimits;
import org.sandbox4j.core.spi.KeyedLocks;

/**
 * Azure Container Apps Sandboxes (hardware-isolated microVMs) over the REST data plane, as
 * pinned in {@code ACA-PROTOCOL.md}. Declares {@link Isolation#MICROVM}, egress
 * {@link Egress#ALLOWLIST} and {@link Egress#DENY_ALL} (the service's egress proxy sits outside a
 * microVM that has a NIC, so never {@link Egress#CLOSED}; never unrestricted), EXEC, FILES_IN,
 * FILES_OUT, FILES_LIST, FILES_DELETE (beyond the reference, which withholds it: removal here is
 * POSIX {@code rm} in the guest, which never follows a link) and HOST_TOOLS (a process started by
 * one exec outlives it on the service), and the reference's limits: 32 MiB per file, 128 MiB in
 * total, 128 files, both ways.
 *
 * <h2>Acquire</h2>
 * Creates carry no client-chosen name, so get-or-create is serialised per
 * {@code (scope, thread, agent, kind)} in this process. A sandbox this process made for that
 * slot is resumed when suspended or stopped (warm path; a sandbox gone or disabled falls through
 * to a cold create). A cold create resolves the image (a pinned {@code imageId}; a prebuilt
 * catalogue name, one without {@code /} or {@code :}; else an imported disk image whose
 * {@code image.base} equals the reference qualified with the configured registry), creates the
 * sandbox with its labels and the spec's egress policy (always sent: the service's own default is
 * Allow; Deny by default with Full inspection, one Allow rule per allowlisted host), waits for Running, registers it, then sends the whole lifecycle policy.
 *
 * <h2>Ownership</h2>
 * Every sandbox is labelled {@code scope}, {@code thread}, {@code agent}, {@code kind} (values
 * hashed, never truncated, when they do not fit; {@link AcaLabels}). {@link #dispose} and
 * {@link #disposeScope} ask the service for every sandbox with the key's or the conversation's
 * labels, so a replica that never created a sandbox deletes it; this process's own record is
 * added for a listing that lags.
 *
 * <h2>Credentials</h2>
 * The token supplier is called on the host for each request; no token, credential or host
 * environment ever reaches a guest.
 */
public final class AcaBackend implements SandboxBackend {

    /** 32 MiB: the service's SDK buffers whole bodies. */
    public static final long MAX_BYTES_PER_FILE = 32L * 1024 * 1024;
    /** 128 MiB. */
    public static final long MAX_TOTAL_BYTES = 128L * 1024 * 1024;
    /** 128 files. */
    public static final int MAX_FILES = 128;
    /** The ACA transfer ceilings, the same in both directions. */
    public static final TransferLimits TRANSFER_LIMITS = new TransferLimits(MAX_BYTES_PER_FILE, MAX_TOTAL_BYTES,
            MAX_FILES);

    /** How often a create or a resume is polled. */
    static final Duration POLL_INTERVAL = Duration.ofSeconds(3);
    /** The bound on a create reaching Running. */
    static final Duration CREATE_TIMEOUT = Duration.ofSeconds(300);
    /** The bound on a resume reaching Running. */
    static final Duration RESUME_TIMEOUT = Duration.ofSeconds(120);
    static final String LIFECYCLE_MODE = "Memory";
    static final String DENY = "Deny";
    /** The only inspection level that blocks non-HTTP traffic too. */
    static final String FULL_INSPECTION = "Full";
    static final String DISABLED_REASON = "Disabled";
    /** The states a resume applies to (Stopping is resumed once it has settled into one of them). */
    static final java.util.Set<String> RESUMABLE = java.util.Set.of("stopped", "suspended", "idle");
    /** The state the service shows while it wakes a sandbox ("Waking from suspended or idle state"): wait, ask nothing. */
    static final String RESUMING = "resuming";
    /**
     * What one host rule's pattern can say: a name (or IPv4 address) or a {@code *.} wildcard over one. A spec entry
     * with a port, an address pin, a scheme or a path (which sandbox4j's own proxy understands) cannot be expressed,
     * so it is refused rather than sent for the service to misread.
     */
    static final Pattern HOST_PATTERN = Pattern.compile("(\\*\\.)?[A-Za-z0-9_-]+(\\.[A-Za-z0-9_-]+)*\\.?");

    private static final System.Logger LOG = System.getLogger(AcaBackend.class.getName());

    private static final BackendDeclarations DECLARATIONS = BackendDeclarations.builder(Isolation.MICROVM)
            .capabilities(Capability.EXEC, Capability.FILES_IN, Capability.FILES_OUT, Capability.FILES_LIST,
                    Capability.FILES_DELETE, Capability.HOST_TOOLS)
            .egressModes(Egress.ALLOWLIST, Egress.DENY_ALL)
            .limits(new SandboxLimits(TRANSFER_LIMITS, TRANSFER_LIMITS))
            .build();

    /** One get-or-create slot: creates carry no client-chosen name, so this is the identity. */
    record Slot(String scope, String threadId, String agentDir, String kind) {
        static Slot of(SandboxKey key, String kind) {
            return new Slot(key.scope(), key.threadId(), key.agentDir(), kind);
        }

        boolean in(String scope, String threadId) {
            return this.scope.equals(scope) && this.threadId.equals(threadId);
        }
    }

    /** What this process made for a slot: the id, and what fixed it (the spec's image and the egress policy). */
    record Known(String id, String image, Map<String, Object> egressPolicy) {
    }

    private final AcaConfig config;
    private final AcaClient client;
    private final AcaHttp.Sleeper sleeper;
    private final ConcurrentHashMap<Slot, Known> registry = new ConcurrentHashMap<>();
    private final KeyedLocks<Slot> locks = new KeyedLocks<>();
    private final ConcurrentHashMap<String, Map<String, Object>> resolvedImages = new ConcurrentHashMap<>();
    private volatile List<String> publicCatalogue;

    public AcaBackend(AcaConfig config, AcaTokenSupplier tokens) {
        this(config, tokens, duration -> Thread.sleep(duration.toMillis()));
    }

    AcaBackend(AcaConfig config, AcaTokenSupplier tokens, AcaHttp.Sleeper sleeper) {
        this.config = Objects.requireNonNull(config, "config");
        this.sleeper = Objects.requireNonNull(sleeper, "sleeper");
        AcaHttp http = new AcaHttp(config.name(), config.endpoint(), Objects.requireNonNull(tokens, "tokens"),
                config.tokenScope(), duration -> sleeper.sleep(duration));
        this.client = new AcaClient(config, http);
    }

    @Override
    public String name() {
        return config.name();
    }

    @Override
    public BackendDeclarations declarations() {
        return DECLARATIONS;
    }

    public AcaConfig config() {
        return config;
    }

    AcaClient client() {
        return client;
    }

    // ---------------------------------------------------------------- acquire

    @Override
    public Sandbox acquire(SandboxKey key, SandboxSpec spec) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(spec, "spec");
        Map<String, Object> egressPolicy = egressPolicy(spec);
        Map<String, String> labels = AcaLabels.forSandbox(key, spec.kind(), spec.labels());
        Slot slot = Slot.of(key, spec.kind());
        return locks.withLock(slot, () -> {
            Known known = registry.get(slot);
            if (known != null) {
                Optional<AcaSandbox> warm = warm(slot, known, spec, egressPolicy);
                if (warm.isPresent()) {
                    warm.get().makeWorkDir(spec.workDir());
                    return warm.get().limitedTo(spec);
                }
            }
            AcaSandbox created = create(slot, spec, labels, egressPolicy);
            created.makeWorkDir(spec.workDir());
            // Every write and read through the handle is held to the spec's per-file caps.
            return created.limitedTo(spec);
        });
    }

    /** Sandboxes this process is deleting right now. */
    private final Disposals disposals = new Disposals();

    /** Whether the service no longer has sandbox {@code id} (or is deleting it). */
    boolean isGone(String id) {
        try {
            // The sandbox object's field is "state" (a "status" read here never matched).
            return client.getSandbox(id).map(sandbox -> state(sandbox).equals("deleting")
                    || state(sandbox).equals("deleted")).orElse(true);
        } catch (RuntimeException unreachable) {
            return false;
        }
    }

    /** The registered sandbox, running again; empty when it is gone or cannot run (then forgotten). */
    private Optional<AcaSandbox> warm(Slot slot, Known known, SandboxSpec spec, Map<String, Object> egressPolicy) {
        if (!known.egressPolicy().equals(egressPolicy) || !known.image().equals(imageOf(spec))) {
            throw new SandboxException("backend '" + name() + "': the sandbox of this conversation, agent and kind was "
                    + "created with another image or egress allowlist; a warm sandbox never changes them: dispose of "
                    + "the key first, or use another kind");
        }
        try {
            ensureRunning(known.id(), RESUME_TIMEOUT);
            LOG.log(Level.INFO, () -> "backend '" + name() + "': reused sandbox " + known.id() + " (kind "
                    + slot.kind() + ")");
            return Optional.of(new AcaSandbox(this, known.id()));
        } catch (org.sandbox4j.core.SandboxInterrupted interrupted) {
            throw interrupted;
        } catch (SandboxException e) {
            // Expected after the service's auto-delete: create afresh.
            LOG.log(Level.INFO, () -> "backend '" + name() + "': sandbox " + known.id() + " cannot be reused ("
                    + ErrorDetail.of(e) + "); creating a new one");
            registry.remove(slot, known);
            return Optional.empty();
        }
    }

    private AcaSandbox create(Slot slot, SandboxSpec spec, Map<String, String> labels, Map<String, Object> egressPolicy) {
        Map<String, Object> source = resolveSource(spec);
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("sourcesRef", source);
        body.put("labels", new LinkedHashMap<>(labels));
        body.put("egressPolicy", egressPolicy);
        Map<String, Object> created = client.createSandbox(body);
        String id = AcaJson.text(created, "id");
        if (id == null || id.isBlank()) {
            throw client.malformed("create a sandbox", "no 'id' in the create answer");
        }
        try {
            awaitRunning(id, CREATE_TIMEOUT, null);
        } catch (RuntimeException failure) {
            deleteQuietly(id);
            throw failure;
        }
        LOG.log(Level.INFO, () -> "backend '" + name() + "': created sandbox " + id + " (kind " + slot.kind()
                + ", image " + spec.imageId().or(spec::image).orElse("") + ")");
        // Registered before configuring: a sandbox whose lifecycle call fails is still found and disposed.
        registry.put(slot, new Known(id, imageOf(spec), egressPolicy));
        try {
            client.lifecycle(id, lifecyclePolicy());
        } catch (SandboxException e) {
            LOG.log(Level.WARNING, () -> "backend '" + name() + "': sandbox " + id + " keeps the service's default "
                    + "lifecycle (its own timers reclaim it): " + ErrorDetail.of(e));
        }
        return new AcaSandbox(this, id);
    }

    /** The policy sent whole: the service replaces the stored policy, so a half left out is dropped. */
    Map<String, Object> lifecyclePolicy() {
        Map<String, Object> suspend = new LinkedHashMap<>();
        suspend.put("enabled", Boolean.TRUE);
        suspend.put("interval", config.autoSuspend().toSeconds());
        suspend.put("mode", LIFECYCLE_MODE);
        Map<String, Object> delete = new LinkedHashMap<>();
        delete.put("enabled", Boolean.TRUE);
        delete.put("deleteIntervalInSeconds", config.autoDelete().toSeconds());
        Map<String, Object> policy = new LinkedHashMap<>();
        policy.put("autoSuspendPolicy", suspend);
        policy.put("autoDeletePolicy", delete);
        return policy;
    }

    /**
     * The policy every create sends, whatever the mode: the data plane's own default is Allow, so a create without one
     * would make an open sandbox. Deny by default with Full inspection (the only level that also blocks non-HTTP
     * traffic), one Allow rule per allowlisted host (verbatim, wildcards kept); none for {@link Egress#DENY_ALL}.
     */
    Map<String, Object> egressPolicy(SandboxSpec spec) {
        if (spec.egress() != Egress.ALLOWLIST && spec.egress() != Egress.DENY_ALL) {
            throw EgressRefusals.modeNotEnforced(name(), spec.egress(), spec.egress() == Egress.UNRESTRICTED
                    ? "it never creates a sandbox with unrestricted egress"
                    : "each sandbox is a microVM with a network device, filtered by the service's egress proxy "
                            + "outside it, so it is never without a device beyond loopback", DECLARATIONS.egressModes());
        }
        List<Object> rules = new ArrayList<>();
        for (String host : spec.egressAllow()) {
            if (host == null || host.isBlank()) {
                throw new IllegalArgumentException("the egress allowlist holds a blank host; name each host");
            }
            if (!HOST_PATTERN.matcher(host).matches()) {
                throw new SandboxEgressNotEnforced("backend '" + name() + "' cannot enforce the allowlist entry "
                        + GuestText.quote(host) + ": the service's host rules match a host name, a *.suffix or an "
                        + "IPv4 address, with no port, address pin, scheme or path; write the host alone");
            }
            Map<String, Object> rule = new LinkedHashMap<>();
            rule.put("pattern", host);
            rule.put("action", "Allow");
            rules.add(rule);
        }
        Map<String, Object> policy = new LinkedHashMap<>();
        policy.put("defaultAction", DENY);
        policy.put("trafficInspection", FULL_INSPECTION);
        policy.put("hostRules", rules);
        return policy;
    }

    // ---------------------------------------------------------------- images

    /** A spec's pinned disk image id, when it names one. */
    private static Optional<String> pinnedImage(SandboxSpec spec) {
        return spec.imageId().map(String::strip).filter(id -> !id.isEmpty());
    }

    /** What fixes a sandbox's image: the pinned id, else the image reference as written. */
    private static String imageOf(SandboxSpec spec) {
        return pinnedImage(spec).map(id -> "id:" + id).orElse("image:" + spec.image().map(String::strip).orElse(""));
    }

    /** The create's {@code sourcesRef}: a pinned id, a prebuilt name, or an imported disk image. */
    Map<String, Object> resolveSource(SandboxSpec spec) {
        Optional<String> pinned = pinnedImage(spec);
        if (pinned.isPresent()) {
            return Map.of("diskImage", Map.of("id", pinned.get()));
        }
        String image = spec.image().map(String::strip).orElse("");
        if (image.isEmpty()) {
            throw new IllegalArgumentException("backend '" + name() + "' needs an image: set the spec's imageId (a "
                    + "disk image id), or its image to a prebuilt catalogue name (such as ubuntu or python) or a container "
                    + "image imported into the sandbox group as a disk image");
        }
        if (!image.contains("/") && !image.contains(":")) {
            return prebuilt(image);
        }
        String reference = qualify(image, config.registry());
        Map<String, Object> cached = resolvedImages.get(reference);
        if (cached != null) {
            return cached;
        }
        for (Map<String, Object> diskImage : client.diskImages()) {
            Object described = diskImage.get("image");
            String base = described instanceof String text ? text
                    : AcaJson.asObject(described) == null ? null : AcaJson.text(AcaJson.asObject(described), "base");
            String id = AcaJson.text(diskImage, "id");
            if (reference.equals(base) && id != null) {
                Map<String, Object> source = Map.of("diskImage", Map.of("id", id));
                resolvedImages.put(reference, source);
                return source;
            }
        }
        throw new IllegalArgumentException("backend '" + name() + "': no disk image in sandbox group '"
                + config.sandboxGroup() + "' was imported from '" + reference + "'; import it first (PUT "
                + "diskimages with image.base '" + reference + "'), or set the spec's imageId");
    }

    private Map<String, Object> prebuilt(String name) {
        List<String> catalogue = publicCatalogue;
        if (catalogue == null || !catalogue.contains(name)) {
            catalogue = List.copyOf(client.publicImages());
            publicCatalogue = catalogue;
        }
        if (!catalogue.contains(name)) {
            throw new IllegalArgumentException("backend '" + name() + "': '" + name + "' is not a prebuilt image; the "
                    + "catalogue holds " + (catalogue.isEmpty() ? "nothing (it is empty)"
                            : String.join(", ", new TreeSet<>(catalogue)))
                    + ". A container image needs a registry path (with '/' or ':') and an import as a disk image");
        }
        Map<String, Object> diskImage = new LinkedHashMap<>();
        diskImage.put("name", name);
        diskImage.put("isPublic", Boolean.TRUE);
        return Map.of("diskImage", diskImage);
    }

    /**
     * Prefixes the registry unless the reference already names one (a first segment with
     * {@code .} or {@code :}, or {@code localhost}).
     */
    static String qualify(String image, String registry) {
        if (registry.isEmpty()) {
            return image;
        }
        int slash = image.indexOf('/');
        if (slash > 0) {
            String first = image.substring(0, slash);
            if (first.contains(".") || first.contains(":") || first.equals("localhost")) {
                return image;
            }
        }
        return registry + "/" + image;
    }

    // ---------------------------------------------------------------- states

    /** GET; Running is done; a stopped sandbox (not disabled) is resumed and polled. */
    void ensureRunning(String id, Duration bound) {
        Map<String, Object> sandbox = client.getSandbox(id).orElseThrow(() -> gone(id));
        String state = state(sandbox);
        switch (state) {
            case "running":
                return;
            case "deleting":
            case "failed":
                throw new SandboxException("backend '" + name() + "': sandbox " + id + " is " + state);
            case "stopped":
            case "suspended":
            case "idle":
            case "stopping":
                if (DISABLED_REASON.equalsIgnoreCase(stoppedReason(sandbox))) {
                    throw new SandboxException("backend '" + name() + "': sandbox " + id + " is disabled");
                }
                AcaHttp.Response resumed = client.resume(id);
                if (!resumed.ok()) {
                    LOG.log(Level.DEBUG, () -> "backend '" + name() + "': resume of " + id + " answered "
                            + resumed.status() + "; polling anyway");
                }
                awaitRunning(id, bound, state);
                return;
            case RESUMING:
                // Someone (the service, another replica) is already waking it: a second resume could only be refused.
                awaitRunning(id, bound, null);
                return;
            default:
                // Creating, or a state this backend does not know: poll within the bound, never resume blindly.
                awaitRunning(id, bound, null);
        }
    }

    /**
     * Polls GET until Running; Failed, Deleting, a 404 or the bound end it. {@code resumedFrom} is
     * the state a resume was asked in, or null when nothing was resumed (a create).
     */
    private void awaitRunning(String id, Duration bound, String resumedFrom) {
        boolean resuming = resumedFrom != null;
        String previous = resumedFrom;
        long deadline = System.nanoTime() + bound.toNanos();
        while (true) {
            Map<String, Object> sandbox = client.getSandbox(id).orElseThrow(() -> gone(id));
            String state = state(sandbox);
            if (state.equals("running")) {
                return;
            }
            if (resuming && "stopping".equals(previous) && RESUMABLE.contains(state)) {
                // Asked while still Stopping, which a resume may not apply to: ask again now it has settled.
                client.resume(id);
            }
            previous = state;
            if (state.equals("failed") || state.equals("deleting")) {
                LOG.log(Level.WARNING, () -> "backend '" + name() + "': sandbox " + id + " became " + state + " while "
                        + (resuming ? "resuming" : "starting") + ": " + AcaJson.write(sandbox.get("stateDetails")));
                throw new SandboxException("backend '" + name() + "': sandbox " + id + " failed to "
                        + (resuming ? "resume" : "start") + " (details in the log); acquire again");
            }
            if (System.nanoTime() >= deadline) {
                throw new SandboxException("backend '" + name() + "': sandbox " + id + " did not reach Running within "
                        + bound.toSeconds() + " s (still " + state + "); acquire again later");
            }
            try {
                sleeper.sleep(POLL_INTERVAL);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new org.sandbox4j.core.SandboxInterrupted("the thread waiting for sandbox " + id
                        + " to run was interrupted", e);
            }
        }
    }

    static String state(Map<String, Object> sandbox) {
        String state = AcaJson.text(sandbox, "state");
        return state == null ? "" : state.toLowerCase(Locale.ROOT);
    }

    private static String stoppedReason(Map<String, Object> sandbox) {
        Map<String, Object> details = AcaJson.asObject(sandbox.get("stateDetails"));
        return details == null ? null : AcaJson.text(details, "stoppedReason");
    }

    SandboxDisposed gone(String id) {
        return new SandboxDisposed("backend '" + name() + "': sandbox " + id + " no longer exists (it was disposed of, "
                + "here, by another process, or by the service's auto-delete); acquire again for a fresh one");
    }

    // ---------------------------------------------------------------- dispose

    /**
     * Every sandbox of {@code key}, every kind: the service's listing by the {@code scope},
     * {@code thread} and {@code agent} labels, united with this process's record, deleted in sorted
     * order. So a replica that never created them (or a restarted JVM) disposes of them too; the
     * reference asks only its own record. Never throws.
     */
    @Override
    public void dispose(SandboxKey key) {
        if (key == null) {
            return;
        }
        deleteOwned(slot -> slot.in(key.scope(), key.threadId()) && slot.agentDir().equals(key.agentDir()),
                AcaLabels.forKey(key), "the key's");
    }

    /**
     * Every sandbox of one conversation: the service's listing by the {@code scope} and
     * {@code thread} labels, united with this process's record, deleted in sorted order. Never throws.
     */
    @Override
    public int disposeScope(String scope, String threadId) {
        if (scope == null || threadId == null) {
            return 0;
        }
        return deleteOwned(slot -> slot.in(scope, threadId), AcaLabels.conversation(scope, threadId),
                "the conversation's");
    }

    /** Forgets and deletes what this process made for matching slots and what the service lists by {@code labels}. */
    private int deleteOwned(java.util.function.Predicate<Slot> mine, Map<String, String> labels, String whose) {
        TreeSet<String> ids = new TreeSet<>();
        for (Map.Entry<Slot, Known> entry : List.copyOf(registry.entrySet())) {
            if (mine.test(entry.getKey()) && registry.remove(entry.getKey(), entry.getValue())) {
                ids.add(entry.getValue().id());
            }
        }
        try {
            for (Map<String, Object> sandbox : client.listSandboxes(labels)) {
                if (!state(sandbox).equals("deleting")) {
                    ids.add(AcaJson.text(sandbox, "id"));
                }
            }
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, () -> "backend '" + name() + "': could not list " + whose + " sandboxes; only "
                    + "this process's own are deleted: " + ErrorDetail.of(e));
        }
        int deleted = 0;
        for (String id : ids) {
            if (deleteQuietly(id)) {
                deleted++;
                LOG.log(Level.INFO, () -> "backend '" + name() + "': released sandbox " + id);
            }
        }
        return deleted;
    }

    /** DELETE, not awaited (the sandbox may still list briefly); true when the service accepted it. */
    boolean deleteQuietly(String id) {
        boolean[] accepted = {false};
        // Known before the delete, so an exec it ends says so at once (SandboxDisposed), not with a kill's exit code.
        disposals.removing(id, () -> {
            try {
                accepted[0] = client.deleteSandbox(id);
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, () -> "backend '" + name() + "': could not delete sandbox " + id + ": "
                        + ErrorDetail.of(e));
            }
        });
        return accepted[0];
    }

    /** Whether sandbox {@code id} was disposed of, or is being (here, or by another process as the service says). */
    boolean wasDisposedOf(String id) {
        return disposals.wasDisposedOf(id, () -> isGone(id));
    }
}
