package org.sandbox4j.docker;

import com.github.dockerjava.api.command.CreateContainerResponse;
import com.github.dockerjava.api.command.InspectContainerResponse;
import com.github.dockerjava.api.command.InspectVolumeResponse;
import com.github.dockerjava.api.command.PullImageResultCallback;
import com.github.dockerjava.api.model.Container;
import com.github.dockerjava.api.model.HostConfig;
import com.github.dockerjava.api.model.Info;
import com.github.dockerjava.api.model.Mount;
import com.github.dockerjava.api.model.MountType;
import com.github.dockerjava.api.model.Ulimit;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.sandbox4j.core.BackendDeclarations;
import org.sandbox4j.core.Capability;
import org.sandbox4j.core.Egress;
import org.sandbox4j.core.spi.EgressRefusals;
import org.sandbox4j.core.spi.ErrorDetail;
import org.sandbox4j.core.spi.GuestPaths;
import org.sandbox4j.core.Isolation;
import org.sandbox4j.core.spi.KeyDigest;
import org.sandbox4j.core.OsFamily;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.core.SandboxEgressNotEnforced;
import org.sandbox4j.core.spi.Disposals;
import org.sandbox4j.core.SandboxDisposed;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxInterrupted;
import org.sandbox4j.core.SandboxInventory;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxListing;
import org.sandbox4j.core.SandboxQuery;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.spi.KeyedLocks;
import org.sandbox4j.egress.EgressPolicy;
import org.sandbox4j.egress.EgressProxy;
import org.sandbox4j.egress.GuestBridge;
import org.sandbox4j.egress.GuestProxyEnvironment;
import org.sandbox4j.core.spi.GuestEnvironment;
import org.sandbox4j.core.SandboxImageNotUsable;
import org.sandbox4j.egress.ProxySockets;
import org.sandbox4j.core.spi.BackendNames;

/**
 * Runs each sandbox in a container of a Docker Engine API endpoint: Docker itself, or Podman's
 * compatible service. The rung follows the OCI runtime the engine will use: {@code runc} (or
 * {@code crun}, {@code youki}) gives {@link Isolation#CONTAINER}, gVisor's {@code runsc}
 * {@link Isolation#HARDENED_CONTAINER}; the runtime must be registered with the engine, which
 * {@code /info} says at construction.
 *
 * <p>Every container is created hardened: no network ({@code --network none}, always), every
 * capability dropped, {@code no-new-privileges}, memory, CPU and process limits, a non-root user,
 * a read-only root file system, a private {@code /tmp} tmpfs, and the work area (the parent of the
 * spec's work dir) on a tmpfs volume of its own, which the archive endpoints reach. Its name is a
 * digest of (backend, scope, thread, agent dir, kind, work area, image, runtime, limits, egress),
 * its labels carry the same key (values hashed when they would not pass intact), so any process
 * derives the name, adopts the container on a name conflict, and finds a conversation's
 * containers by label to dispose of them.
 *
 * <p>With {@link Egress#ALLOWLIST}, the JVM runs {@code sandbox4j-egress}'s proxy on a unix
 * socket in a directory bind-mounted into the guest, where a bridge (socat or python3) listens on
 * {@code 127.0.0.1:3128} and the guest's environment points every client at it; the engine and
 * this JVM must therefore share a host (a {@code unix://} endpoint).
 */
public final class DockerBackend implements SandboxBackend, SandboxInventory, AutoCloseable {

    /** The backend's name unless the builder gives another. */
    public static final String DEFAULT_NAME = "docker";
    /** The OCI runtime unless the builder names another. */
    public static final String DEFAULT_RUNTIME = "runc";
    /** uid:gid the guest runs as: nobody, present in most images and harmless where absent. */
    public static final String DEFAULT_USER = "65534:65534";
    /** Where the engine is when neither the builder nor {@code DOCKER_HOST} says. */
    public static final String DEFAULT_HOST = "unix:///var/run/docker.sock";
    /** The environment variable that names the engine, as the docker CLI reads it. */
    public static final String HOST_VARIABLE = "DOCKER_HOST";
    public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(5);
    /** Bound on each control call (create, inspect, archive, remove); exec has its own. */
    public static final Duration DEFAULT_COMMAND_TIMEOUT = Duration.ofSeconds(60);
    public static final Duration DEFAULT_PULL_TIMEOUT = Duration.ofMinutes(10);
    /** The guest directory where an allowlisting sandbox finds its proxy socket. */
    public static final String GUEST_EGRESS_DIRECTORY = "/run/sandbox4j-egress";
    /** The runtimes whose rung is known; any other is refused rather than guessed. */
    static final Map<String, Isolation> RUNTIME_RUNGS = Map.of(
            "runc", Isolation.CONTAINER,
            "crun", Isolation.CONTAINER,
            "youki", Isolation.CONTAINER,
            "io.containerd.runc.v2", Isolation.CONTAINER,
            "runsc", Isolation.HARDENED_CONTAINER,
            "io.containerd.runsc.v1", Isolation.HARDENED_CONTAINER);

    /** The PATH the engine gives an exec when the image sets none (Docker's and Podman's default). */
    static final String ENGINE_DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
    private static final String RETIRED_INFIX = "-retired-";
    private static final int RETIRED_HEX = 8;
    private static final String WORK_AREA_MODE = "0755";
    /** tmpfs counts nr_blocks in pages; 4 KiB on the platforms engines run on (a larger page only loosens the cap). */
    static final long TMPFS_BLOCK_BYTES = 4096;
    /**
     * Under gVisor the engine's process limit counts the sandbox's host tasks: the gVisor kernel's
     * own threads and a stub process per guest address space. The limit given to the engine is
     * then this many host tasks per guest process, plus {@link #RUNSC_KERNEL_TASKS}: a backstop
     * the guest never reaches, because gVisor's kernel refuses the guest's fork at
     * {@link DockerLimits#processes()} first (RLIMIT_NPROC, which it enforces per sandbox). Were the
     * host limit hit first, gVisor could not start a stub, would panic, and take the container
     * and its work area down with it.
     */
    // Measured on gVisor 20221219 (ptrace platform): about 8 host tasks per live guest process at a
    // burst's peak, and threads of finished processes are kept, so twice that, and a kernel margin.
    static final long RUNSC_TASKS_PER_PROCESS = 16;
    static final long RUNSC_KERNEL_TASKS = 1024;
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final System.Logger LOG = System.getLogger(DockerBackend.class.getName());

    private final String name;
    private final Engine engine;
    private final String runtime;
    private final String image;
    private final String imageId;
    private final int uid;
    private final int gid;
    private final String user;
    private final DockerLimits limits;
    private final boolean readOnlyRoot;
    /** Containers this process is removing right now. */
    private final Disposals disposals = new Disposals();
    private final PullPolicy pullPolicy;
    private final Duration pullTimeout;
    private final Path egressRoot;
    private final BackendDeclarations declarations;
    private final KeyedLocks<String> locks = new KeyedLocks<>();
    /** Image references this instance has checked (and pulled, where the policy says), to their ids. */
    private final Map<String, String> images = new ConcurrentHashMap<>();
    /** Which bridge each image has ("socat", "python3" or ""), probed once per image. */
    private final Map<String, String> bridges = new ConcurrentHashMap<>();
    /** Beside each allowlisting container's egress directory: its proxy's audit log. */
    private static final String AUDIT_SUFFIX = "-audit.jsonl";
    /** Proxies this process runs, by container name. */
    private final ProxySockets proxies;
    /** The guest agent mounted into the containers this instance creates, or why none is. */
    private final AgentBinary agentBinary;
    /** Why the engine refused a container with the agent mounted; null while it has not. */
    private volatile String agentMountRefused;
    /** Each container's resident agent in this instance, by container id. */
    private final Map<String, AgentSlot> agents = new ConcurrentHashMap<>();
    /** Serialises an agent's start per container id (acquires keep their own locks, by name). */
    private final KeyedLocks<String> agentLocks = new KeyedLocks<>();

    private DockerBackend(Builder builder) {
        this.name = builder.name;
        this.runtime = builder.runtime;
        this.image = builder.image;
        this.user = builder.uid + ":" + builder.gid;
        this.uid = builder.uid;
        this.gid = builder.gid;
        this.limits = builder.limits;
        this.readOnlyRoot = builder.readOnlyRoot;
        this.pullPolicy = builder.pullPolicy;
        this.pullTimeout = builder.pullTimeout;
        this.egressRoot = builder.egressRoot;
        this.proxies = new ProxySockets(name, builder.egressSettings, ProxySockets.Access.EVERY_UID,
                "use a shorter egress directory");
        this.engine = Engine.connect(builder.host, builder.connectTimeout, builder.commandTimeout);
        this.agentBinary = AgentBinary.find(builder.guestAgent, engine);
        try {
            ping();
            Isolation rung = checkRuntime();
            this.imageId = ensureImage(image);
            this.declarations = BackendDeclarations.builder(rung)
                    .capabilities(Capability.EXEC, Capability.FILES_IN, Capability.FILES_OUT, Capability.FILES_LIST,
                            Capability.FILES_DELETE, Capability.INTERACTIVE_EXEC)
                    .egressModes(ProxySockets.MODES)
                    .osFamilies(OsFamily.POSIX)
                    .build();
        } catch (RuntimeException failure) {
            engine.close();
            throw failure;
        }
    }

    public static Builder builder() {
        return new Builder();
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public BackendDeclarations declarations() {
        return declarations;
    }

    /** The engine endpoint this backend talks to. */
    public URI host() {
        return engine.host();
    }

    /** The OCI runtime every container of this backend runs under. */
    public String runtime() {
        return runtime;
    }

    /** {@code doctor}-style lines: the engine, the runtime and rung, the image, the limits. */
    public List<String> diagnostics() {
        return List.of(
                "backend: " + name + " (docker, isolation " + declarations.isolation().wire() + ")",
                "engine: " + engine.host(),
                "runtime: " + runtime,
                "image: " + image + " (" + imageId + "), pull policy " + pullPolicy.name().toLowerCase(Locale.ROOT),
                "user: " + user + ", read-only root: " + readOnlyRoot,
                "limits: " + limits,
                "guest agent: " + agentBinary.describe(agentMountRefused),
                "egress proxies: " + (engine.isLocal() ? egressRoot.toString()
                        : "none (the engine is not local: allowlisting is refused)"));
    }

    /**
     * {@code doctor}-style lines about one sandbox: its container, and which way its commands and
     * file calls go: through the container's resident guest agent, or through the engine's exec and
     * archive API (a container created without the agent, or one where it could not start).
     *
     * @throws IllegalArgumentException when {@code sandbox} is not one of this backend's
     */
    public List<String> diagnostics(Sandbox sandbox) {
        DockerSandbox docker = own(sandbox);
        return List.of("container: " + docker.containerName(), "commands and files: " + docker.route());
    }

    /**
     * The engine's name for a sandbox's container: for diagnostics, and for benchmarks that
     * compare the backend against {@code docker exec} on the same container.
     *
     * @throws IllegalArgumentException when {@code sandbox} is not one of this backend's
     */
    public String containerName(Sandbox sandbox) {
        return own(sandbox).containerName();
    }

    private DockerSandbox own(Sandbox sandbox) {
        if (!(sandbox instanceof DockerSandbox docker) || docker.backend() != this) {
            throw new IllegalArgumentException("not a sandbox of backend '" + name + "': " + sandbox);
        }
        return docker;
    }

    // ---------------------------------------------------------------- acquire

    @Override
    public Sandbox acquire(SandboxKey key, SandboxSpec spec) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(spec, "spec");
        String workDir = checkedWorkDir(spec.workDir());
        String workArea = GuestPaths.parent(workDir);
        String reference = spec.imageId().or(spec::image).orElse(image);
        String resolvedImage = ensureImage(reference);
        Optional<EgressPolicy> policy = egressPolicy(spec);
        String fingerprint = fingerprint(resolvedImage, spec);
        ContainerIdentity identity = ContainerIdentity.of(name, key, spec.kind(), workArea, fingerprint);
        Optional<Path> egressDirectory = policy.map(allowed -> egressRoot.resolve(identity.name()));
        return locks.withLock(identity.name(), () -> {
            policy.ifPresent(allowed -> proxies.ensure(identity.name(), egressDirectory.get(),
                    egressRoot.resolve(identity.name() + AUDIT_SUFFIX), allowed));
            Placed container = ensureContainer(identity, reference, resolvedImage, workArea, egressDirectory);
            DockerSandbox sandbox = new DockerSandbox(this, engine, container.id(), identity.name(), workDir,
                    egressDirectory.map(ignored -> GUEST_EGRESS_DIRECTORY + "/" + ProxySockets.SOCKET_NAME), spec,
                    container.agentMounted());
            sandbox.ensureWorkDir();
            if (policy.isPresent()) {
                checkBridge(resolvedImage, sandbox);
            }
            return sandbox;
        });
    }

    /**
     * A running container: its id, and whether the guest agent is mounted in it (as the engine's own
     * record of its mounts says: a container adopted from an older backend or another replica may
     * lack it, and then its calls keep the engine's path).
     */
    private record Placed(String id, boolean agentMounted) {
    }

    /** Returns the running container for {@code identity}: adopted, restarted or created. */
    private Placed ensureContainer(ContainerIdentity identity, String reference, String resolvedImage, String workArea,
            Optional<Path> egressDirectory) {
        Optional<InspectContainerResponse> found = inspect(identity.name());
        if (found.isPresent()) {
            Optional<String> adopted = adopt(found.get());
            if (adopted.isPresent()) {
                return new Placed(adopted.get(), agentMounted(found.get()));
            }
        }
        createVolume(identity);
        Placed created;
        try {
            created = create(identity, resolvedImage, workArea, egressDirectory);
        } catch (RuntimeException failure) {
            if (!Engine.isConflict(failure)) {
                throw engineFailure("create a container from image '" + reference + "'", failure);
            }
            // Another process created it between our inspect and create: adopt the winner.
            InspectContainerResponse winner = inspect(identity.name()).orElseThrow(() -> engineFailure(
                    "adopt container " + identity.name() + " after a name conflict", failure));
            String adopted = adopt(winner).orElseThrow(() -> new SandboxException("backend '" + name + "' found "
                    + "container " + identity.name() + " made by another process but could not start it"));
            return new Placed(adopted, agentMounted(winner));
        }
        String id = created.id();
        try {
            engine.control().startContainerCmd(id).exec();
        } catch (RuntimeException failure) {
            if (!Engine.isNotModified(failure)) {
                removeQuietly(id);
                removeVolumeQuietly(identity.volumeName());
                throw engineFailure("start a container (runtime '" + runtime + "', image '" + reference + "')", failure);
            }
        }
        return created;
    }

    /**
     * Whether the engine's record of the container's mounts holds this backend's agent mount: a
     * read-only bind at {@link ContainerAgent#GUEST_PATH}. Never guessed from how the container was named.
     */
    private boolean agentMounted(InspectContainerResponse container) {
        if (agentBinary.path().isEmpty() || container.getMounts() == null) {
            return false;
        }
        return container.getMounts().stream().anyMatch(mount -> mount.getDestination() != null
                && ContainerAgent.GUEST_PATH.equals(mount.getDestination().getPath())
                && Boolean.FALSE.equals(mount.getRW()));
    }

    /**
     * A running container is used as is; a stopped one is started, or removed when it will not
     * start; a retired one (another process's record says so, its rename having failed) is
     * removed.
     */
    private Optional<String> adopt(InspectContainerResponse container) {
        if (isRetired(container.getId())) {
            LOG.log(Level.INFO, () -> "backend '" + name + "': container " + container.getName() + " was retired; "
                    + "replacing it");
            removeQuietly(container.getId());
            return Optional.empty();
        }
        if (Boolean.TRUE.equals(container.getState().getRunning())) {
            return Optional.of(container.getId());
        }
        try {
            engine.control().startContainerCmd(container.getId()).exec();
            return Optional.of(container.getId());
        } catch (RuntimeException failure) {
            if (Engine.isNotModified(failure)) {
                return Optional.of(container.getId());
            }
            LOG.log(Level.INFO, () -> "backend '" + name + "': container " + container.getName() + " would not start ("
                    + Engine.detail(failure) + "); replacing it");
            removeQuietly(container.getId());
            return Optional.empty();
        }
    }

    /**
     * Creates the container with the guest agent mounted where this backend has one; should the
     * engine refuse the mount (its host is not this one, or the file went: the engine says it cannot
     * find it), once more without it, and every later container without it too, as
     * {@link #diagnostics()} then says.
     */
    private Placed create(ContainerIdentity identity, String resolvedImage, String workArea,
            Optional<Path> egressDirectory) {
        Optional<Path> agent = agentMountRefused == null ? agentBinary.path() : Optional.empty();
        if (agent.isEmpty()) {
            return new Placed(create(identity, resolvedImage, workArea, egressDirectory, Optional.empty()), false);
        }
        try {
            return new Placed(create(identity, resolvedImage, workArea, egressDirectory, agent), true);
        } catch (RuntimeException failure) {
            // Only a refusal that names the agent's file is the mount's (Docker: "bind source path does not
            // exist: PATH", Podman: "statfs PATH: ..."); any other failure is the container's own.
            if (Engine.isConflict(failure) || !Engine.detail(failure).contains(agent.get().toString())) {
                throw failure;
            }
            agentMountRefused = ErrorText.bounded(Engine.detail(failure));
            LOG.log(Level.WARNING, () -> "backend '" + name + "': the engine refused a container with the guest agent "
                    + "mounted (" + agentMountRefused + "); this and later containers run commands through the engine");
            return new Placed(create(identity, resolvedImage, workArea, egressDirectory, Optional.empty()), false);
        }
    }

    private String create(ContainerIdentity identity, String resolvedImage, String workArea,
            Optional<Path> egressDirectory, Optional<Path> agent) {
        List<Mount> mounts = new ArrayList<>();
        agent.ifPresent(binary -> mounts.add(new Mount().withType(MountType.BIND).withSource(binary.toString())
                .withTarget(ContainerAgent.GUEST_PATH).withReadOnly(true)));
        mounts.add(new Mount().withType(MountType.VOLUME).withSource(identity.volumeName()).withTarget(workArea));
        egressDirectory.ifPresent(directory -> mounts.add(new Mount().withType(MountType.BIND)
                .withSource(directory.toString()).withTarget(GUEST_EGRESS_DIRECTORY).withReadOnly(true)));
        HostConfig host = HostConfig.newHostConfig()
                .withRuntime(runtime)
                .withInit(true)
                .withNetworkMode("none")
                .withReadonlyRootfs(readOnlyRoot)
                .withCapDrop(com.github.dockerjava.api.model.Capability.ALL)
                .withSecurityOpts(List.of("no-new-privileges"))
                .withPidsLimit(hostTaskLimit())
                .withUlimits(guestProcessLimit())
                .withMemory(limits.memoryBytes())
                .withMemorySwap(limits.memoryBytes())
                .withNanoCPUs((long) (limits.cpus() * 1_000_000_000L))
                .withTmpFs(Map.of("/tmp", "rw,nosuid,nodev,size=" + limits.tmpBytes() + ",mode=1777"))
                .withMounts(mounts);
        Map<String, String> environment = new LinkedHashMap<>(GuestEnvironment.BASE);
        if (egressDirectory.isPresent()) {
            environment.putAll(GuestProxyEnvironment.variables());
        }
        List<String> env = new ArrayList<>();
        environment.forEach((variable, value) -> env.add(variable + "=" + value));
        List<String> keepAlive = List.of("sh", "-c", GuestScripts.KEEP_ALIVE);
        List<String> command = egressDirectory.isPresent()
                ? GuestBridge.argv(GUEST_EGRESS_DIRECTORY + "/" + ProxySockets.SOCKET_NAME, keepAlive) : keepAlive;
        CreateContainerResponse created = engine.control().createContainerCmd(resolvedImage)
                .withName(identity.name())
                .withLabels(identity.labels())
                .withUser(user)
                .withEnv(env)
                .withEntrypoint(List.of())
                .withCmd(command)
                .withWorkingDir("/")
                .withHostConfig(host)
                .exec();
        return created.getId();
    }

    /** The engine's process limit for one container: the guest's, plus gVisor's own tasks under runsc. */
    private long hostTaskLimit() {
        return declarations.isolation() == Isolation.HARDENED_CONTAINER
                ? limits.processes() * RUNSC_TASKS_PER_PROCESS + RUNSC_KERNEL_TASKS : limits.processes();
    }

    /**
     * Under runsc, the guest's own process limit, which gVisor's kernel enforces inside the
     * sandbox. Not under runc: there RLIMIT_NPROC counts every process of the uid on the host,
     * other containers' included, and the engine's pids cgroup is the limit.
     */
    private List<Ulimit> guestProcessLimit() {
        return declarations.isolation() == Isolation.HARDENED_CONTAINER
                ? List.of(new Ulimit("nproc", limits.processes(), limits.processes())) : List.of();
    }

    /** The work area: a tmpfs the engine mounts on the host side too, so the archive endpoints reach it. */
    private void createVolume(ContainerIdentity identity) {
        // nr_blocks, not size: Podman 4 reads size= as a project quota, which tmpfs has not.
        long blocks = Math.max(1, limits.workAreaBytes() / TMPFS_BLOCK_BYTES);
        Map<String, String> options = Map.of("type", "tmpfs", "device", "tmpfs",
                "o", "nr_blocks=" + blocks + ",uid=" + uid + ",gid=" + gid + ",mode=" + WORK_AREA_MODE);
        try {
            engine.control().createVolumeCmd().withName(identity.volumeName()).withDriver("local")
                    .withDriverOpts(options).withLabels(identity.labels()).exec();
        } catch (RuntimeException failure) {
            if (!Engine.isConflict(failure)) {
                throw engineFailure("create the work-area volume " + identity.volumeName(), failure);
            }
        }
    }

    /** An allowlist needs a bridge in the image; an image without one is refused before any command runs. */
    private void checkBridge(String resolvedImage, DockerSandbox sandbox) {
        String bridge = bridges.computeIfAbsent(resolvedImage, ignored -> {
            try {
                DockerSandbox.Internal probe = sandbox.internal(GuestBridge.PROBE, DockerSandbox.INTERNAL_TIMEOUT);
                return GuestBridge.parseProbe(probe.stdout()).map(tool -> tool.name().toLowerCase(Locale.ROOT))
                        .orElse("");
            } catch (SandboxException failure) {
                return "";
            }
        });
        if (bridge.isEmpty()) {
            bridges.remove(resolvedImage);
            removeQuietly(sandbox.containerId());
            throw EgressRefusals.noBridge(name, "the image", GuestProxyEnvironment.GUEST_BRIDGE_PORT, "in the image");
        }
    }

    private Optional<EgressPolicy> egressPolicy(SandboxSpec spec) {
        Optional<EgressPolicy> policy = ProxySockets.policyFor(spec, name,
                "its containers have no network device but loopback");
        if (policy.isPresent() && !engine.isLocal()) {
            throw new SandboxEgressNotEnforced("backend '" + name + "' cannot enforce an allowlist through the engine "
                    + "at " + engine.host() + ": the egress proxy's unix socket is mounted into the container, so the "
                    + "engine must run on this host (a unix:// endpoint)");
        }
        return policy;
    }

    /** What fixes a container beside its key, kind and work area. */
    private String fingerprint(String resolvedImage, SandboxSpec spec) {
        List<String> parts = new ArrayList<>();
        parts.add("image=" + resolvedImage);
        parts.add("runtime=" + runtime);
        parts.add("user=" + user);
        parts.add("read-only=" + readOnlyRoot);
        parts.add("limits=" + limits);
        parts.add("egress=" + spec.egress().wire());
        parts.addAll(new TreeSet<>(spec.egressAllow()));
        return KeyDigest.ofParts(parts);
    }

    private String checkedWorkDir(String workDir) {
        return GuestPaths.workDirWithItsOwnParent(name, workDir, GuestPaths.SYSTEM_DIRECTORIES);
    }

    // ---------------------------------------------------------------- dispose and inventory

    @Override
    public void dispose(SandboxKey key) {
        Objects.requireNonNull(key, "key");
        removeMatching(ContainerIdentity.selector(name, key.scope(), key.threadId(), key.agentDir()));
    }

    @Override
    public int disposeScope(String scope, String threadId) {
        Objects.requireNonNull(scope, "scope");
        Objects.requireNonNull(threadId, "threadId");
        return removeMatching(ContainerIdentity.selector(name, scope, threadId, null));
    }

    @Override
    public List<SandboxListing> list(SandboxQuery query) {
        Objects.requireNonNull(query, "query");
        List<Container> containers;
        try {
            containers = listContainers(ContainerIdentity.selector(name, query.scope(), query.threadId().orElse(null),
                    null));
        } catch (RuntimeException failure) {
            throw engineFailure("list containers", failure);
        }
        List<SandboxListing> listings = new ArrayList<>();
        for (Container container : containers) {
            Map<String, String> labels = container.getLabels() == null ? Map.of() : container.getLabels();
            Optional<Instant> created = Optional.ofNullable(container.getCreated()).map(Instant::ofEpochSecond);
            listings.add(new SandboxListing(name, containerName(container),
                    Optional.ofNullable(labels.get(ContainerIdentity.LABEL_KIND)), query.scope(), query.threadId(),
                    labels.getOrDefault(ContainerIdentity.LABEL_THREAD_DIGEST, ""), created, Optional.empty()));
        }
        listings.sort((a, b) -> a.createdAt().orElse(Instant.EPOCH).compareTo(b.createdAt().orElse(Instant.EPOCH)));
        return List.copyOf(listings);
    }

    @Override
    public int dispose(SandboxQuery query) {
        Objects.requireNonNull(query, "query");
        return removeMatching(ContainerIdentity.selector(name, query.scope(), query.threadId().orElse(null), null));
    }

    /** Removes every container (retired ones included) and work-area volume the labels select. Never throws. */
    private int removeMatching(Map<String, String> selector) {
        int removed = 0;
        try {
            for (Container container : listContainers(selector)) {
                String containerName = containerName(container);
                if (removeQuietly(container.getId())) {
                    removed++;
                }
                forgetProxy(baseName(containerName));
            }
            List<String> filters = new ArrayList<>();
            selector.forEach((label, value) -> filters.add(label + "=" + value));
            List<InspectVolumeResponse> volumes = engine.control().listVolumesCmd().withFilter("label", filters).exec()
                    .getVolumes();
            for (InspectVolumeResponse volume : volumes == null ? List.<InspectVolumeResponse>of() : volumes) {
                removeVolumeQuietly(volume.getName());
            }
        } catch (RuntimeException failure) {
            LOG.log(Level.WARNING, () -> "backend '" + name + "' could not finish disposing of " + selector + ": "
                    + Engine.detail(failure));
        }
        return removed;
    }

    private List<Container> listContainers(Map<String, String> selector) {
        List<Container> found = engine.control().listContainersCmd().withShowAll(true).withLabelFilter(selector).exec();
        return found == null ? List.of() : found;
    }

    private static String containerName(Container container) {
        String[] names = container.getNames();
        String first = names == null || names.length == 0 ? container.getId() : names[0];
        return first.startsWith("/") ? first.substring(1) : first;
    }

    /** A retired container's name without its retirement suffix. */
    private static String baseName(String containerName) {
        int retired = containerName.indexOf(RETIRED_INFIX);
        return retired < 0 ? containerName : containerName.substring(0, retired);
    }

    private void forgetProxy(String containerName) {
        proxies.stop(containerName);
        Path directory = egressRoot.resolve(containerName);
        try {
            Files.deleteIfExists(directory.resolve(ProxySockets.SOCKET_NAME));
            Files.deleteIfExists(directory);
        } catch (IOException e) {
            LOG.log(Level.DEBUG, () -> "could not remove " + directory + ": " + ErrorDetail.of(e));
        }
    }

    /**
     * Takes a container out of service when a timed-out command could not be killed inside it.
     * First the record: a labelled volume naming the container (the engine cannot add a label to
     * an existing container), so any process that finds the container under its name replaces it
     * instead of adopting it. Then the rename, which frees the name at once and keeps the
     * container's labels, so a purge still finds it; then its removal, best effort. A purge
     * removes the record with the sandbox's other volumes.
     */
    void retire(DockerSandbox sandbox) {
        String suffix = RETIRED_INFIX + HexFormat.of().formatHex(randomBytes(RETIRED_HEX / 2));
        String retiredName = sandbox.containerName() + suffix;
        recordRetirement(sandbox, sandbox.containerName() + suffix);
        try {
            engine.control().renameContainerCmd(sandbox.containerId()).withName(retiredName).exec();
        } catch (RuntimeException failure) {
            LOG.log(Level.WARNING, () -> "backend '" + name + "' could not retire container " + sandbox.containerName()
                    + ": " + Engine.detail(failure));
        }
        removeQuietly(sandbox.containerId());
    }

    private void recordRetirement(DockerSandbox sandbox, String recordName) {
        try {
            Map<String, String> labels = new LinkedHashMap<>();
            Map<String, String> identity = engine.control().inspectContainerCmd(sandbox.containerId()).exec()
                    .getConfig().getLabels();
            if (identity != null) {
                identity.forEach((label, value) -> {
                    if (label.startsWith(ContainerIdentity.LABEL_PREFIX)) {
                        labels.put(label, value);
                    }
                });
            }
            labels.put(ContainerIdentity.LABEL_RETIRED, sandbox.containerId());
            engine.control().createVolumeCmd().withName(recordName).withLabels(labels).exec();
        } catch (RuntimeException failure) {
            LOG.log(Level.WARNING, () -> "backend '" + name + "' could not record the retirement of container "
                    + sandbox.containerName() + ": " + Engine.detail(failure));
        }
    }

    /** Whether a retirement record names the container. */
    private boolean isRetired(String containerId) {
        try {
            List<InspectVolumeResponse> records = engine.control().listVolumesCmd()
                    .withFilter("label", List.of(ContainerIdentity.LABEL_RETIRED + "=" + containerId)).exec()
                    .getVolumes();
            return records != null && !records.isEmpty();
        } catch (RuntimeException failure) {
            throw engineFailure("look for a retirement record of container " + containerId, failure);
        }
    }

    private boolean removeQuietly(String containerId) {
        boolean[] removed = {false};
        // Known before the kill, so an exec it ends says so at once (SandboxDisposed), not with exit 137.
        disposals.removing(containerId, () -> removed[0] = removeNow(containerId));
        forgetAgent(containerId);
        return removed[0];
    }

    private boolean removeNow(String containerId) {
        try {
            engine.control().removeContainerCmd(containerId).withForce(true).withRemoveVolumes(true).exec();
            return true;
        } catch (RuntimeException failure) {
            if (!Engine.isNotFound(failure)) {
                LOG.log(Level.WARNING, () -> "backend '" + name + "' could not remove container " + containerId + ": "
                        + Engine.detail(failure));
            }
            return false;
        }
    }

    private void removeVolumeQuietly(String volume) {
        try {
            engine.control().removeVolumeCmd(volume).exec();
        } catch (RuntimeException failure) {
            if (!Engine.isNotFound(failure)) {
                LOG.log(Level.DEBUG, () -> "backend '" + name + "' could not remove volume " + volume + ": "
                        + Engine.detail(failure));
            }
        }
    }

    /** Stops the proxies this process runs; the containers stay for the next process to adopt or dispose of. */
    @Override
    public void close() {
        agents.values().forEach(AgentSlot::close);
        agents.clear();
        proxies.close();
        engine.close();
    }

    // ---------------------------------------------------------------- resident agents

    /** Whether containers may get the agent: for a sandbox whose container has the mount. */
    boolean agentAvailable() {
        return agentBinary.path().isPresent();
    }

    /** Why a sandbox whose container lacks the agent mount runs commands through the engine. */
    String noAgentReason() {
        return agentBinary.path().isEmpty() ? agentBinary.describe(agentMountRefused)
                : "its container was created without the guest agent (by an older sandbox4j, a backend with "
                        + "guestAgent(false), or before the engine refused the mount)";
    }

    AgentSlot agentSlot(String containerId) {
        return agents.computeIfAbsent(containerId, id -> new AgentSlot());
    }

    <T> T withAgentLock(String containerId, java.util.function.Supplier<T> body) {
        return agentLocks.withLock(containerId, body);
    }

    /** Ends and forgets this instance's agent in a container that is gone. */
    void forgetAgent(String containerId) {
        AgentSlot slot = agents.remove(containerId);
        if (slot != null) {
            slot.close();
        }
    }

    /** The engine's unix socket, which an agent's stream is taken over from. */
    Path engineSocket() {
        return engine.socketPath().orElseThrow(() -> new IllegalStateException("a resident agent needs a unix:// "
                + "engine, not " + engine.host()));
    }

    Duration commandTimeout() {
        return engine.commandTimeout();
    }

    /**
     * What the engine gives every exec of the container: a default {@code PATH}, {@code HOSTNAME},
     * then the container's configured environment. The agent passes on exactly what it is given, so
     * its commands start from this, as the engine's execs do.
     */
    Map<String, String> execEnvironment(String containerId) {
        InspectContainerResponse container;
        try {
            container = engine.control().inspectContainerCmd(containerId).exec();
        } catch (RuntimeException failure) {
            throw engineFailure("inspect a container", failure);
        }
        Map<String, String> environment = new LinkedHashMap<>();
        environment.put("PATH", ENGINE_DEFAULT_PATH);
        var config = container.getConfig();
        if (config != null && config.getHostName() != null) {
            environment.put("HOSTNAME", config.getHostName());
        }
        for (String entry : config == null || config.getEnv() == null ? new String[0] : config.getEnv()) {
            int equals = entry.indexOf('=');
            if (equals > 0) {
                environment.put(entry.substring(0, equals), entry.substring(equals + 1));
            }
        }
        return environment;
    }

    // ---------------------------------------------------------------- the engine

    private Optional<InspectContainerResponse> inspect(String containerName) {
        try {
            return Optional.of(engine.control().inspectContainerCmd(containerName).exec());
        } catch (RuntimeException failure) {
            if (Engine.isNotFound(failure)) {
                return Optional.empty();
            }
            throw engineFailure("inspect container " + containerName, failure);
        }
    }

    private void ping() {
        try {
            engine.control().pingCmd().exec();
        } catch (RuntimeException failure) {
            throw new SandboxEngineUnreachable("backend '" + name + "' cannot reach a container engine at "
                    + engine.host() + " (" + Engine.detail(failure) + "); start one there (dockerd, or podman system "
                    + "service) or point " + HOST_VARIABLE + " or DockerBackend.builder().host(...) at a running one",
                    failure);
        }
    }

    private Isolation checkRuntime() {
        Info info;
        try {
            info = engine.control().infoCmd().exec();
        } catch (RuntimeException failure) {
            throw engineFailure("read the engine's /info", failure);
        }
        Map<String, ?> registered = info.getRuntimes() == null ? Map.of() : info.getRuntimes();
        if (!registered.containsKey(runtime)) {
            throw new SandboxRuntimeMissing("backend '" + name + "': the engine at " + engine.host() + " has no runtime "
                    + "'" + runtime + "' (it has " + new TreeSet<>(registered.keySet()) + "); register it (dockerd "
                    + "--add-runtime " + runtime + "=/path/to/" + runtime + ", or \"runtimes\" in daemon.json; Podman: "
                    + "[engine.runtimes] in containers.conf) or choose one it has");
        }
        Isolation rung = RUNTIME_RUNGS.get(runtime);
        if (rung == null) {
            throw new SandboxRuntimeMissing("backend '" + name + "' does not know what isolation runtime '" + runtime
                    + "' gives, so it cannot declare a rung; use one of " + new TreeSet<>(RUNTIME_RUNGS.keySet()));
        }
        return rung;
    }

    /** The image's id, pulling it first where the policy allows. */
    private String ensureImage(String reference) {
        String known = images.get(reference);
        if (known != null) {
            return known;
        }
        if (pullPolicy == PullPolicy.ALWAYS) {
            pull(reference);
        }
        Optional<String> id = imageIdOf(reference);
        if (id.isEmpty() && pullPolicy == PullPolicy.IF_MISSING) {
            pull(reference);
            id = imageIdOf(reference);
        }
        String resolved = id.orElseThrow(() -> new SandboxImageNotUsable("backend '" + name + "': the image '" + reference
                + "' is not in the engine at " + engine.host() + "; build or load it there (docker build -t "
                + reference + " DIR, docker load -i IMAGE.tar, or docker import ROOTFS.tar " + reference
                + "; the same with podman), or allow pulling with pullPolicy(PullPolicy.IF_MISSING)"));
        images.put(reference, resolved);
        return resolved;
    }

    private Optional<String> imageIdOf(String reference) {
        try {
            return Optional.of(engine.control().inspectImageCmd(reference).exec().getId());
        } catch (RuntimeException failure) {
            if (Engine.isNotFound(failure)) {
                return Optional.empty();
            }
            throw engineFailure("inspect image '" + reference + "'", failure);
        }
    }

    private void pull(String reference) {
        try {
            if (!engine.streams().pullImageCmd(reference).exec(new PullImageResultCallback())
                    .awaitCompletion(pullTimeout.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new SandboxImageNotUsable("backend '" + name + "': pulling '" + reference + "' took longer than "
                        + pullTimeout + "; pull it ahead of time or raise pullTimeout");
            }
        } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            throw new SandboxInterrupted("backend '" + name + "': interrupted while pulling '" + reference + "'");
        } catch (RuntimeException failure) {
            if (failure instanceof SandboxException known) {
                throw known;
            }
            throw new SandboxImageNotUsable("backend '" + name + "' could not pull '" + reference + "': "
                    + Engine.detail(failure) + "; check the name and the engine's registry access, or load the "
                    + "image into the engine yourself", failure);
        }
    }

    // ---------------------------------------------------------------- what a sandbox asks of its backend

    SandboxException engineFailure(String what, RuntimeException failure) {
        if (failure instanceof SandboxException known) {
            return known;
        }
        if (Engine.isUnreachable(failure)) {
            return new SandboxEngineUnreachable("backend '" + name + "' lost the container engine at " + engine.host()
                    + " while trying to " + what + " (" + Engine.detail(failure) + "); is it still running?", failure);
        }
        return new SandboxException("backend '" + name + "' could not " + what + ": "
                + ErrorText.bounded(Engine.detail(failure)), failure);
    }

    SandboxDisposed containerGone(String containerName) {
        return new SandboxDisposed("backend '" + name + "': container " + containerName + " is gone (disposed of, by "
                + "this or another process, or retired after a command could not be killed); acquire the sandbox again");
    }

    /** The exec in flight on a container that was disposed of meanwhile: never reported as the command's own exit. */
    SandboxDisposed disposedDuring(String containerName, Throwable cause) {
        return new SandboxDisposed("backend '" + name + "': container " + containerName + " was disposed of while the "
                + "command ran (by this or another process); the command was stopped with everything it started: "
                + "acquire the sandbox again", cause);
    }

    /** Whether the container was disposed of, or is being (here, or by another process as the engine says). */
    boolean wasDisposedOf(String containerId) {
        return disposals.wasDisposedOf(containerId, () -> isGone(containerId));
    }

    /** Whether the container no longer exists, or is being removed. */
    boolean isGone(String containerId) {
        try {
            var state = engine.control().inspectContainerCmd(containerId).exec().getState();
            return Boolean.TRUE.equals(state.getDead()) || "removing".equals(state.getStatus());
        } catch (RuntimeException failure) {
            if (Engine.isNotFound(failure)) {
                return true;
            }
            throw engineFailure("inspect a container", failure);
        }
    }

    Tar.Writer tarWriter() {
        return new Tar.Writer(uid, gid);
    }

    /** Whether the container runs; false when it stopped or is gone. */
    boolean isRunning(String containerId) {
        try {
            return Boolean.TRUE.equals(engine.control().inspectContainerCmd(containerId).exec().getState().getRunning());
        } catch (RuntimeException failure) {
            if (Engine.isNotFound(failure)) {
                return false;
            }
            throw engineFailure("inspect a container", failure);
        }
    }

    /** Starts a sandbox's stopped container again. */
    void restart(DockerSandbox sandbox) {
        locks.withLock(sandbox.containerName(), () -> {
            try {
                engine.control().startContainerCmd(sandbox.containerId()).exec();
                LOG.log(Level.INFO, () -> "backend '" + name + "' started container " + sandbox.containerName()
                        + " again after it stopped");
            } catch (RuntimeException failure) {
                if (Engine.isNotFound(failure)) {
                    throw containerGone(sandbox.containerName());
                }
                if (!Engine.isNotModified(failure)) {
                    throw engineFailure("start container " + sandbox.containerName() + " again", failure);
                }
            }
        });
    }

    private static byte[] randomBytes(int count) {
        byte[] bytes = new byte[count];
        RANDOM.nextBytes(bytes);
        return bytes;
    }

    /** Where a backend keeps its egress sockets unless told otherwise: short, owner-only, per user. */
    static Path defaultEgressRoot() {
        String state = System.getenv("XDG_STATE_HOME");
        Path base = state != null && !state.isBlank() ? Path.of(state)
                : Path.of(System.getProperty("user.home"), ".local", "state");
        return base.resolve("sandbox4j").resolve("docker");
    }

    /** Configures a {@link DockerBackend}; only the image has no default. */
    public static final class Builder {
        private String name = DEFAULT_NAME;
        private URI host = defaultHost();
        private String image;
        private String runtime = DEFAULT_RUNTIME;
        private int uid = 65534;
        private int gid = 65534;
        private DockerLimits limits = DockerLimits.DEFAULT;
        private boolean readOnlyRoot = true;
        private PullPolicy pullPolicy = PullPolicy.NEVER;
        private Duration connectTimeout = DEFAULT_CONNECT_TIMEOUT;
        private Duration commandTimeout = DEFAULT_COMMAND_TIMEOUT;
        private Duration pullTimeout = DEFAULT_PULL_TIMEOUT;
        private Path egressRoot = defaultEgressRoot();
        private EgressProxy.Settings egressSettings = EgressProxy.Settings.defaults();
        private boolean guestAgent = true;

        private Builder() {
        }

        private static URI defaultHost() {
            String fromEnvironment = System.getenv(HOST_VARIABLE);
            return URI.create(fromEnvironment == null || fromEnvironment.isBlank() ? DEFAULT_HOST : fromEnvironment);
        }

        /** The name the router and messages use. Default {@value #DEFAULT_NAME}. */
        public Builder name(String value) {
            this.name = BackendNames.require(value);
            return this;
        }

        /**
         * The engine's endpoint: {@code unix:///path/docker.sock} (Podman: its service's socket) or
         * {@code tcp://host:port}. Default {@code $DOCKER_HOST}, else {@value #DEFAULT_HOST}.
         */
        public Builder host(String value) {
            try {
                URI uri = new URI(Objects.requireNonNull(value, "host"));
                if (uri.getScheme() == null) {
                    throw new IllegalArgumentException("the engine endpoint '" + value + "' has no scheme; write "
                            + "unix:///path/to/docker.sock or tcp://host:2375");
                }
                this.host = uri;
            } catch (URISyntaxException e) {
                throw new IllegalArgumentException("the engine endpoint '" + value + "' is not a URI: " + e.getMessage(), e);
            }
            return this;
        }

        /** The image sandboxes run when a spec names none: a tag or an id. Required. */
        public Builder image(String value) {
            if (value == null || value.isBlank()) {
                throw new IllegalArgumentException("an image reference cannot be blank");
            }
            this.image = value;
            return this;
        }

        /**
         * The OCI runtime: {@code runc} (container) or {@code runsc} (gVisor, hardened_container),
         * registered with the engine under that name. Default {@value #DEFAULT_RUNTIME}.
         */
        public Builder runtime(String value) {
            if (value == null || value.isBlank()) {
                throw new IllegalArgumentException("a runtime name cannot be blank");
            }
            this.runtime = value;
            return this;
        }

        /**
         * The numeric uid and gid the guest runs as (numeric, so the work area can be given to
         * it without reading the image's passwd). Default 65534:65534. Root (0) works but is
         * only root inside the container, with no capabilities.
         */
        public Builder user(int userId, int groupId) {
            if (userId < 0 || groupId < 0) {
                throw new IllegalArgumentException("uid and gid cannot be negative");
            }
            this.uid = userId;
            this.gid = groupId;
            return this;
        }

        public Builder limits(DockerLimits value) {
            this.limits = Objects.requireNonNull(value, "limits");
            return this;
        }

        /** Whether the image's root file system is read-only (the work area and /tmp stay writable). Default true. */
        public Builder readOnlyRoot(boolean value) {
            this.readOnlyRoot = value;
            return this;
        }

        /** When images may be pulled. Default {@link PullPolicy#NEVER}: images are built or loaded ahead. */
        public Builder pullPolicy(PullPolicy value) {
            this.pullPolicy = Objects.requireNonNull(value, "pullPolicy");
            return this;
        }

        public Builder connectTimeout(Duration value) {
            this.connectTimeout = positive(value, "connectTimeout");
            return this;
        }

        /** Bound on each control call to the engine. Default 60 s; a command's own timeout bounds exec. */
        public Builder commandTimeout(Duration value) {
            this.commandTimeout = positive(value, "commandTimeout");
            return this;
        }

        public Builder pullTimeout(Duration value) {
            this.pullTimeout = positive(value, "pullTimeout");
            return this;
        }

        /**
         * The host directory under which allowlisting containers' proxy sockets live (one
         * directory each, mounted into its container). Keep it short: a unix socket path stops at
         * 108 bytes. Default {@code $XDG_STATE_HOME/sandbox4j/docker}.
         */
        public Builder egressRoot(Path value) {
            this.egressRoot = Objects.requireNonNull(value, "egressRoot").toAbsolutePath();
            return this;
        }

        /**
         * Whether the containers this backend creates get the guest agent (sandbox4j-agent's static
         * binary, bind-mounted read-only), through which commands and file calls then go instead of
         * the engine's exec and archive API. Default true; it needs a {@code unix://} engine on this
         * host and an agent in the sandbox4j-agent jar, and without them the engine's path serves.
         * False: no container gets it and no sandbox uses one, even where a container has it.
         */
        public Builder guestAgent(boolean value) {
            this.guestAgent = value;
            return this;
        }

        /** Bounds and resolver of each allowlisting sandbox's egress proxy. */
        public Builder egressSettings(EgressProxy.Settings value) {
            this.egressSettings = Objects.requireNonNull(value, "egressSettings");
            return this;
        }

        /**
         * Connects, checks the runtime against the engine's {@code /info} and the image against its
         * store (pulling only where the policy allows).
         *
         * @throws SandboxEngineUnreachable the engine does not answer
         * @throws SandboxRuntimeMissing    the runtime is not registered, or its rung unknown
         * @throws SandboxImageNotUsable      the image is not there and may not be pulled
         */
        public DockerBackend build() {
            if (image == null) {
                throw new IllegalArgumentException("a Docker backend needs an image: DockerBackend.builder().image(...)");
            }
            prepareEgressRoot(egressRoot);
            return new DockerBackend(this);
        }

        private static void prepareEgressRoot(Path root) {
            try {
                Files.createDirectories(root);
                if (!Files.isDirectory(root, LinkOption.NOFOLLOW_LINKS)) {
                    throw new IllegalArgumentException("the egress root " + root + " is not a directory");
                }
                Files.setPosixFilePermissions(root, PosixFilePermissions.fromString("rwx------"));
            } catch (IOException e) {
                throw new SandboxException("cannot prepare the egress root " + root + ": " + ErrorDetail.of(e), e);
            }
        }

        private static Duration positive(Duration value, String what) {
            if (value == null || value.isNegative() || value.isZero()) {
                throw new IllegalArgumentException(what + " must be positive, not " + value);
            }
            return value;
        }
    }
}
