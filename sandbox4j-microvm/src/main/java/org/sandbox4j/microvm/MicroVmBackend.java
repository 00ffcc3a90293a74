package org.sandbox4j.microvm;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.LinkOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.io.UncheckedIOException;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.sandbox4j.core.BackendDeclarations;
import org.sandbox4j.core.Capability;
import org.sandbox4j.core.Egress;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.Isolation;
import org.sandbox4j.core.OsFamily;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxInventory;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxListing;
import org.sandbox4j.core.SandboxQuery;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.spi.BackendNames;
import org.sandbox4j.core.spi.ErrorDetail;
import org.sandbox4j.core.spi.GuestEnvironment;
import org.sandbox4j.core.spi.GuestPaths;
import org.sandbox4j.core.spi.GuestText;
import org.sandbox4j.core.spi.KeyDigest;
import org.sandbox4j.core.spi.KeyedLocks;
import org.sandbox4j.agent.AgentConnection;
import org.sandbox4j.agent.EgressConnector;
import org.sandbox4j.egress.EgressPolicy;
import org.sandbox4j.egress.EgressProxy;
import org.sandbox4j.egress.ProxySockets;
import org.sandbox4j.core.spi.TreeRemoval;

/**
 * One QEMU microVM per sandbox: the guest runs its own Linux kernel, so the boundary is the
 * hypervisor's ({@link Isolation#MICROVM}), with KVM where the host really has it and TCG
 * otherwise ({@link #accelerator()} says which and why). Declares POSIX guests, EXEC and every
 * file capability, and egress {@link Egress#CLOSED} (the guest has no network device at all) and
 * {@link Egress#ALLOWLIST}: such a guest gets a second virtio-serial port, over which its agent
 * tunnels every connection to {@code 127.0.0.1:3128} to a {@code sandbox4j-egress} proxy of the
 * host's, on a unix socket in the guest's host directory, with the guest environment pointing
 * every common client there ({@code JAVA_TOOL_OPTIONS} included).
 *
 * <h2>Sandboxes</h2>
 * A sandbox is a guest booted for one (conversation, key, kind). Its host directory under the
 * state root ({@code vm-<random>}) holds a {@link SandboxRecord} (the key's labels as digests, as
 * the local backends keep them, the kind, when it was made and last acquired, the JVM that owns it
 * and its lease) and QEMU's pid file, both written by this host user alone, and QEMU's own
 * directory for its sockets (the only place QEMU's user may write: a compromised QEMU can forge
 * nothing the host reads, and the host checks who serves each socket before it speaks). Every
 * instance, in any process, finds guests there, reuses a live one (reconnecting to its agent) and
 * ends them on {@code dispose}; as a {@link SandboxInventory} it lists and disposes of them by
 * scope or conversation from those records alone, which is how {@code sandbox4j ls} and
 * {@code purge} see another JVM's guests. Nothing the guest does reaches that directory: its
 * commands and files go through the guest agent over a virtio-serial port, and its whole writable
 * file system is an overlay in guest memory.
 *
 * <h2>Fast acquire</h2>
 * A new guest is restored from a snapshot of a booted, idle guest rather than booted (under TCG
 * here: ~0.1 s to the agent's answer instead of ~2.5 s). The snapshot is made once per launch (the
 * whole QEMU command line but the sandbox's own paths) under {@code <stateRoot>/snapshots} and
 * shared by every instance and process on the state root; each restored guest gets fresh
 * randomness and the host's clock before anything runs in it. When no snapshot can be made or a
 * restore fails, the guest boots cold and {@link #diagnostics()} says why;
 * {@link Builder#snapshots(boolean)} turns it off. With {@link Builder#warmPool(int)}, the backend
 * also keeps a few restored guests idle for each launch in use (one background thread refills
 * them) and an acquire claims one: its record is rewritten to the key, and it gets fresh
 * randomness and the clock again; when none is idle, the acquire restores as before.
 *
 * <h2>Lifetime</h2>
 * A guest lives until it is disposed of, or until the backend that owns it is closed. Its owner
 * vouches for it for a lease ({@link Builder#lease(Duration)}), renewed every third of it by one
 * daemon thread while the owner lives, in the record and in the guest. A guest nobody renewed ends:
 * every backend built on the same state root ends guests whose owner died or whose lease ran out
 * (when it is built, and on acquires, at most every 5 s), and the guest's agent powers the guest off by itself once
 * its lease runs out, so a QEMU whose host vanished ends even if no backend ever starts again.
 */
public final class MicroVmBackend implements SandboxBackend, SandboxInventory, AutoCloseable {

    /** Guest RAM when the builder is not told otherwise: what a guest's commands may hold together. */
    public static final int DEFAULT_MEMORY_MIB = 256;

    /** The name unless the builder sets one. */
    public static final String DEFAULT_NAME = "microvm";
    /** How long an owner vouches for its guests unless the builder says: the local backends' default too. */
    public static final Duration DEFAULT_LEASE = Duration.ofMinutes(10);
    /** The shortest lease: the guest counts it in whole seconds. */
    public static final Duration MIN_LEASE = Duration.ofSeconds(1);
    /** The longest lease the guest's agent arms. */
    public static final Duration MAX_LEASE = AgentConnection.MAX_LEASE;
    /** The most idle guests {@link Builder#warmPool(int)} keeps per launch. */
    public static final int MAX_WARM_POOL = WarmPool.MAX_SIZE;
    private static final String LEASE_RANGE = MIN_LEASE.toSeconds() + " s to " + MAX_LEASE.toDays() + " days";

    private static final BackendDeclarations DECLARATIONS = BackendDeclarations.builder(Isolation.MICROVM)
            .capabilities(Capability.EXEC, Capability.FILES_IN, Capability.FILES_OUT, Capability.FILES_LIST,
                    Capability.FILES_DELETE)
            .egressModes(ProxySockets.MODES)
            .osFamilies(OsFamily.POSIX)
            .build();
    private static final String DIRECTORY_PREFIX = "vm-";
    /** A snapshot template's directory: as long as a sandbox's, so its sockets fit too. */
    private static final String TEMPLATE_PREFIX = "vs-";
    private static final int DIRECTORY_RANDOM_BYTES = 6;
    private static final Duration WORK_DIR_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration RESTORE_DEADLINE = Duration.ofSeconds(20);
    /** The guest's end of the egress tunnel looks at its port every 50 ms: it answers well within this. */
    private static final Duration EGRESS_DEADLINE = Duration.ofSeconds(10);
    static final String EGRESS_DIRECTORY = "egress";
    static final String EGRESS_AUDIT_FILE = "egress-audit.jsonl";
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rwx------");
    private static final Set<PosixFilePermission> PASSABLE = PosixFilePermissions.fromString("rwx--x--x");
    private static final System.Logger LOG = System.getLogger(MicroVmBackend.class.getName());
    /** Every guest this JVM is connected to, by directory: instances over one state root share them. */
    private static final Map<Path, MicroVm> CONNECTED = new ConcurrentHashMap<>();
    /** One template at a time per snapshot file in this JVM; other processes may make the same one, harmlessly. */
    private static final KeyedLocks<Path> MAKING = new KeyedLocks<>();
    /**
     * One change at a time to a guest directory in this JVM: a renewal, an acquire or a claim of its
     * record, or its removal (so a renewal never writes into a directory being removed).
     */
    private static final KeyedLocks<Path> DIRECTORY_CHANGES = new KeyedLocks<>();
    /** How long an idle guest's warm-up command may take. */
    private static final Duration WARM_UP_TIMEOUT = Duration.ofSeconds(30);
    /** How old a guest directory with no readable record must be before a reaper ends it. */
    private static final Duration UNRECORDED_GRACE = Duration.ofMinutes(1);
    /** How often acquires look for guests nobody vouches for any more. */
    private static final Duration REAP_INTERVAL = Duration.ofSeconds(5);
    /** A lease is renewed this many times within its length: two renewals may fail before it runs out. */
    private static final int RENEWALS_PER_LEASE = 3;

    private final String name;
    private final Path stateRoot;
    private final GuestImage guest;
    private final Path qemu;
    private final int memoryMib;
    private final int cpus;
    private final int overlayMib;
    private final int processes;
    private final Duration bootDeadline;
    private final Duration lease;
    /** Who QEMU runs as, and why ({@link #diagnostics()}). */
    private final UnprivilegedQemu qemuUser;
    /** Empty when snapshots are off, for {@link #snapshotsOff}. */
    private final Optional<GuestSnapshots> snapshots;
    private final String snapshotsOff;
    private final KeyedLocks<String> acquiring = new KeyedLocks<>();
    /** The allowlisting proxies of this process's guests, one per guest directory. */
    private final ProxySockets proxies;
    private final AtomicLong restores = new AtomicLong();
    private final AtomicLong coldBoots = new AtomicLong();
    /** When ({@link System#nanoTime()}) an acquire next looks for abandoned guests. */
    private final AtomicLong nextReap = new AtomicLong(System.nanoTime());
    /** Why the last guest booted cold instead of being restored; empty while none has. */
    private volatile Optional<String> coldBootReason = Optional.empty();
    /** Why a snapshot could not be made, by its file: this instance does not try that one again. */
    private final Map<Path, String> snapshotFailures = new ConcurrentHashMap<>();
    /** The directories of the guests (and snapshot templates) this instance owns: renewed, and ended on close. */
    private final Set<Path> held = ConcurrentHashMap.newKeySet();
    /** The one thread that renews the leases of what this instance holds. */
    private final ScheduledExecutorService renewer;
    /** Empty when the pool is off, for {@link #poolOff}. */
    private final Optional<WarmPool> pool;
    private final String poolOff;
    /** Why guests are not bounded by a lease in themselves (their agent predates leases); empty while they are. */
    private volatile Optional<String> unleased = Optional.empty();
    private volatile Accelerator.Choice accelerator;
    /** Once closed, a restore that fails was cut short by the close: its snapshot is kept. */
    private volatile boolean closed;

    private MicroVmBackend(Builder builder) {
        this.name = builder.name;
        this.stateRoot = builder.stateRoot.toAbsolutePath().normalize();
        this.guest = builder.guest;
        this.qemu = builder.qemu;
        this.memoryMib = builder.memoryMib;
        this.cpus = builder.cpus;
        this.overlayMib = builder.overlayMib;
        this.processes = builder.processes;
        this.bootDeadline = builder.bootDeadline;
        this.lease = builder.lease;
        this.proxies = new ProxySockets(name, builder.egressSettings, ProxySockets.Access.OWNER,
                "choose a shorter state root with MicroVmBackend.builder().stateRoot(path)");
        try {
            Files.createDirectories(stateRoot);
        } catch (IOException e) {
            throw new IllegalArgumentException("backend '" + name + "' cannot make its state root " + stateRoot + ": "
                    + ErrorDetail.of(e) + "; choose another with MicroVmBackend.builder().stateRoot(path)", e);
        }
        this.qemuUser = UnprivilegedQemu.decide(stateRoot, guest);
        Optional<String> unsupported = builder.snapshots ? GuestSnapshots.unsupported(qemu)
                : Optional.of("snapshots(false)");
        this.snapshotsOff = unsupported.orElse("");
        this.snapshots = unsupported.isPresent() ? Optional.empty() : Optional.of(new GuestSnapshots(stateRoot,
                qemuUser.setpriv().map(setpriv -> UnprivilegedQemu.GUEST_GROUP)));
        this.accelerator = builder.accelerator.map(chosen -> new Accelerator.Choice(chosen, chosen + ": as configured"))
                .orElseGet(Accelerator::probeHost);
        QemuLaunch.requireSocketRoom(stateRoot.resolve(DIRECTORY_PREFIX + "0".repeat(DIRECTORY_RANDOM_BYTES * 2)),
                name);
        guest.problem().ifPresent(problem -> {
            throw new IllegalArgumentException("backend '" + name + "': " + problem);
        });
        this.poolOff = builder.warmPool == 0 ? "warmPool(0)" : "it keeps restored guests, and snapshots are off: "
                + snapshotsOff;
        this.pool = builder.warmPool > 0 && snapshots.isPresent()
                ? Optional.of(new WarmPool(builder.warmPool, name, this::restoreIdle, vm -> remove(vm.directory())))
                : Optional.empty();

        reapAbandoned();
        snapshots.ifPresent(GuestSnapshots::removeStalePartials);
        this.renewer = Executors.newSingleThreadScheduledExecutor(task -> {
            Thread thread = new Thread(task, "sandbox4j-microvm-lease-" + name);
            thread.setDaemon(true);
            return thread;
        });
        long period = renewalPeriod().toMillis();
        renewer.scheduleWithFixedDelay(this::renewLeases, period, period, TimeUnit.MILLISECONDS);
    }

    /** A builder holding every default. */
    public static Builder builder() {
        return new Builder();
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public BackendDeclarations declarations() {
        return DECLARATIONS;
    }

    /** The accelerator guests boot under, and why: KVM is confirmed by the first guest that comes up. */
    public Accelerator.Choice accelerator() {
        return accelerator;
    }

    /**
     * What {@code doctor} shows: the accelerator and why, the guest, what each guest may use, how
     * guests start (restored from a snapshot, or booted cold and why), the warm pool (its size, its
     * claims and misses) and the lease.
     */
    public List<String> diagnostics() {
        return List.of(accelerator.reason(), qemuUser.reason(),
                "guest kernel: " + guest.kernel(), "guest root: " + guest.root(),
                "per guest: " + memoryMib + " MiB of memory, " + cpus + " vCPU(s), " + processes + " processes, "
                        + overlayMib + " MiB of writable storage (in guest memory)",
                fastAcquire(), pool.map(WarmPool::describe).orElse("warm pool: off (" + poolOff + ")"), leaseLine());
    }

    private String leaseLine() {
        return "lease: " + describe(lease) + ", renewed every " + describe(renewalPeriod()) + " while this process "
                + "lives" + unleased.map(why -> "; guests do not end themselves when it runs out: " + why)
                .orElse("; a guest not renewed within it powers itself off");
    }

    private Duration renewalPeriod() {
        return lease.dividedBy(RENEWALS_PER_LEASE);
    }

    private static String describe(Duration duration) {
        return duration.toMillis() % 1000 == 0 ? duration.toSeconds() + " s" : duration.toMillis() + " ms";
    }

    private String fastAcquire() {
        String counts = restores.get() + " guest(s) restored from a snapshot, " + coldBoots.get() + " booted cold";
        if (snapshots.isEmpty()) {
            return "fast acquire: off (" + snapshotsOff + "); " + counts;
        }
        return "fast acquire: snapshots under " + stateRoot.resolve(GuestSnapshots.DIRECTORY) + "; " + counts
                + coldBootReason.map(reason -> "; the last cold boot because " + reason).orElse("");
    }

    /** How each guest is bounded, in one line. */
    public String limits() {
        return memoryMib + " MiB guest RAM, " + cpus + " vCPU, " + processes + " processes, " + overlayMib
                + " MiB writable";
    }

    @Override
    public Sandbox acquire(SandboxKey key, SandboxSpec spec) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(spec, "spec");
        Optional<EgressPolicy> policy = ProxySockets.policyFor(spec, name, "a guest has no network device at all: "
                + "its one way out is the allowlisting proxy, through the agent");
        SandboxRecord record = SandboxRecord.of(key, spec.kind(), identity(spec), lease);
        String workDir = GuestPaths.normalize(spec.workDir());
        reapAbandonedNowAndThen();
        String sandboxName = record.scopeHash() + record.threadHash() + record.agentHash() + record.fingerprint();
        return acquiring.withLock(sandboxName, () -> {
            Optional<MicroVm> warm = warm(record);
            boolean egress = policy.isPresent();
            MicroVm vm = warm.or(() -> claim(record, egress)).orElseGet(() -> boot(record, egress));
            policy.ifPresent(allowed -> serveEgress(vm, allowed));
            MicroVmSandbox sandbox = new MicroVmSandbox(vm, spec, policy.isPresent(), name);
            // The work dir exists by the time acquire returns, on a fresh guest and a warm one alike; a guest
            // just restored has the default one already (its snapshot's template made it), and one exec less.
            if (warm.isPresent() || !vm.restored() || !workDir.equals(GuestSnapshots.WORK_DIR)) {
                sandbox.makeWorkDir(workDir, WORK_DIR_TIMEOUT);
            }
            return sandbox;
        });
    }

    /** What fixes a guest's identity beside its key: its kind and its egress (a guest has the egress port or not). */
    private static String identity(SandboxSpec spec) {
        List<String> parts = new ArrayList<>(List.of(spec.kind(), "egress=" + spec.egress().wire()));
        parts.addAll(new java.util.TreeSet<>(spec.egressAllow()));
        return KeyDigest.ofParts(parts);
    }

    /**
     * Makes sure the guest's egress reaches an allowlisting proxy of this process: the proxy on a
     * unix socket in the guest's directory (only this host user's), the tunnel on its egress port.
     */
    private void serveEgress(MicroVm vm, EgressPolicy policy) {
        Path directory = vm.directory();
        Path proxyDirectory = proxies.ensure(directory.getFileName().toString(), directory.resolve(EGRESS_DIRECTORY),
                directory.resolve(EGRESS_AUDIT_FILE), policy);
        vm.openEgress(QemuLaunch.qemuDirectory(directory).resolve(QemuLaunch.EGRESS_SOCKET),
                EgressConnector.unixSocket(proxyDirectory.resolve(ProxySockets.SOCKET_NAME)), EGRESS_DEADLINE, name);
    }

    /**
     * The audit log of an allowlisting sandbox: one JSON object per proxy decision, appended when each
     * connection ends, in the guest's host directory (which nothing in the guest reaches). Empty for
     * a sandbox that is not allowlisting.
     *
     * @throws IllegalArgumentException when {@code sandbox} is not one of this backend's
     */
    public Optional<Path> egressAuditLog(Sandbox sandbox) {
        if (!(sandbox instanceof MicroVmSandbox guest) || !guest.servedBy(name)) {
            throw new IllegalArgumentException("not a sandbox of backend '" + name + "': " + sandbox);
        }
        return guest.egress() ? Optional.of(guest.directory().resolve(EGRESS_AUDIT_FILE)) : Optional.empty();
    }

    /**
     * A live guest of this record, reconnected if another instance booted it, and its record told
     * of the acquire; dead ones are cleared. A guest another process owned becomes this instance's:
     * it renews its lease from now on, and ends it on close.
     */
    private Optional<MicroVm> warm(SandboxRecord record) {
        for (Path directory : directories(DIRECTORY_PREFIX, record::names)) {
            MicroVm connected = CONNECTED.get(directory);
            if (connected != null && connected.process().isAlive()) {
                acquired(directory, connected);
                return Optional.of(connected);
            }
            forget(directory);
            Optional<MicroVm> attached = MicroVm.attach(directory, accelerator.accelerator(), bootDeadline, name);
            if (attached.isPresent()) {
                CONNECTED.put(directory, attached.get());
                acquired(directory, attached.get());
                return attached;
            }
            remove(directory);
        }
        return Optional.empty();
    }

    private void acquired(Path directory, MicroVm vm) {
        AtomicBoolean adopted = new AtomicBoolean();
        updateRecord(directory, current -> {
            adopted.set(!current.ownedHere());
            return Optional.of(current.acquired(lease));
        });
        if (adopted.get()) {
            held.add(directory);
            arm(vm, false);
        }
    }

    /** A new guest for {@code record}: restored from the snapshot, else booted cold; leased either way. */
    private MicroVm boot(SandboxRecord record, boolean egress) {
        Path directory = newDirectory(DIRECTORY_PREFIX, record);
        MicroVm vm = start(directory, egress);
        try {
            arm(vm, true);
        } catch (RuntimeException e) {
            remove(directory);
            throw e;
        }
        return vm;
    }

    private QemuLaunch launch(Path directory, boolean egress) {
        return new QemuLaunch(qemu, guest, accelerator.accelerator(), memoryMib, cpus, overlayMib, processes,
                directory, qemuUserOf(directory), egress);
    }

    private MicroVm start(Path directory, boolean egress) {
        Accelerator.Choice choice = accelerator;
        QemuLaunch launch = launch(directory, egress);
        Optional<MicroVm> restored = restore(launch);
        if (restored.isPresent()) {
            CONNECTED.put(directory, restored.get());
            return restored.get();
        }
        coldBoots.incrementAndGet();
        MicroVm vm;
        try {
            vm = MicroVm.boot(launch, bootDeadline, name);
        } catch (SandboxException underKvm) {
            if (choice.accelerator() != Accelerator.KVM) {
                remove(directory);
                throw underKvm;
            }
            // A /dev/kvm that opens may still not run a stock kernel (a paravirtual device): fall back, once.
            accelerator = new Accelerator.Choice(Accelerator.TCG, "TCG: a guest did not come up under KVM ("
                    + ErrorDetail.of(underKvm) + ")");
            LOG.log(System.Logger.Level.WARNING, () -> "backend '" + name + "': " + accelerator.reason());
            try {
                vm = MicroVm.boot(launch.with(Accelerator.TCG), bootDeadline, name);
            } catch (SandboxException underTcg) {
                remove(directory);
                throw underTcg;
            }
        }
        CONNECTED.put(directory, vm);
        return vm;
    }

    /**
     * An idle guest of the warm pool, made on its thread: restored from the snapshot (never booted
     * cold: that is no faster than the acquire's own restore), with fresh randomness, the clock and
     * a lease, its record naming no key. Empty when no snapshot restores now.
     */
    private Optional<MicroVm> restoreIdle(boolean egress) {
        Path directory = newDirectory(DIRECTORY_PREFIX, SandboxRecord.unclaimed(lease));
        try {
            Optional<MicroVm> vm = restore(launch(directory, egress));
            if (vm.isEmpty()) {
                remove(directory);
                return vm;
            }
            CONNECTED.put(directory, vm.get());
            arm(vm.get(), true);
            warmUp(vm.get());
            return vm;
        } catch (RuntimeException e) {
            remove(directory);
            throw e;
        }
    }

    /**
     * Runs one command in an idle guest as the sandbox user, so that its QEMU has translated the
     * path every command takes (the agent's fork and exec, the kernel's exec, the dynamic loader)
     * before a claim: under TCG, a restored guest's first command costs ~150 ms of translation,
     * its next ones ~10 ms. Nothing of it stays in the guest.
     */
    private static void warmUp(MicroVm vm) {
        ExecOptions options = ExecOptions.in("/", WARM_UP_TIMEOUT);
        ExecResult result = vm.agent().exec(List.of("/bin/sh", "-c", "exit 0"), "/", GuestEnvironment.WITH_SYSTEM_PATH,
                options, "sh -c 'exit 0'");
        if (result.exitCode() != 0) {
            throw new SandboxException("the warm-up command exited with " + result.exitCode() + ": "
                    + GuestText.quote(result.stderrText()));
        }
    }

    /**
     * An idle guest of the warm pool made {@code record}'s: its record rewritten to the key and this
     * owner, its randomness and clock renewed again (it idled since its restore), its lease renewed.
     * Empty when the pool is off or has none idle, or the guest failed its renewal (it is ended).
     */
    private Optional<MicroVm> claim(SandboxRecord record, boolean egress) {
        Optional<MicroVm> idle = pool.flatMap(warmPool -> warmPool.claim(egress));
        if (idle.isEmpty()) {
            return idle;
        }
        MicroVm vm = idle.get();
        try {
            updateRecord(vm.directory(), unclaimed -> Optional.of(record)).orElseThrow(() -> new SandboxException(
                    "the idle guest's record is gone"));
            MicroVm.renew(vm.agent(), name);
            arm(vm, false);
            return idle;
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, () -> "backend '" + name + "': an idle guest of the warm pool could "
                    + "not be claimed (" + ErrorDetail.of(e) + "); restoring one instead");
            remove(vm.directory());
            return Optional.empty();
        }
    }

    /**
     * Bounds a guest by this backend's lease, in the guest itself where its agent can (where it
     * cannot, {@link #diagnostics()} says why). A {@code fresh} guest (just booted or restored) must
     * come up with no lease: one armed in a snapshot's template would end every guest restored from
     * it at once, so such a guest is refused.
     */
    private void arm(MicroVm vm, boolean fresh) {
        Optional<String> unsupported = vm.leaseUnsupported();
        if (unsupported.isPresent()) {
            if (!unleased.equals(unsupported)) {
                LOG.log(System.Logger.Level.WARNING, () -> "backend '" + name + "': guests do not end themselves when "
                        + "their lease runs out: " + unsupported.get());
            }
            unleased = unsupported;
            return;
        }
        Duration inherited = vm.armLease(lease);
        if (fresh && !inherited.isZero()) {
            throw new SandboxException("backend '" + name + "': the guest in " + vm.directory() + " came up with a "
                    + "lease already running (" + inherited.toSeconds() + " s left), which only its snapshot can have "
                    + "held: remove " + stateRoot.resolve(GuestSnapshots.DIRECTORY) + " to have it made again");
        }
    }

    /**
     * The guest restored from the snapshot of {@code launch}, made first when there is none; empty
     * (the caller boots cold) when snapshots are off, none can be made, or the restore fails: a
     * restore is an optimisation, never a reason an acquire fails.
     */
    private Optional<MicroVm> restore(QemuLaunch launch) {
        if (snapshots.isEmpty()) {
            return Optional.empty();
        }
        GuestSnapshots store = snapshots.get();
        Path file = store.fileFor(launch);
        String failed = snapshotFailures.get(file);
        if (failed != null) {
            coldBoot(failed);
            return Optional.empty();
        }
        GuestSnapshots.Snapshot snapshot;
        try {
            snapshot = MAKING.withLock(file, () -> store.existing(launch).orElseGet(() -> makeSnapshot(store, launch)));
        } catch (SandboxException e) {
            String reason = "no snapshot could be made (" + ErrorDetail.of(e) + ")";
            snapshotFailures.put(file, reason);
            coldBoot(reason);
            return Optional.empty();
        }
        try {
            MicroVm vm = MicroVm.restore(launch, snapshot, restoreDeadline(), name);
            restores.incrementAndGet();
            return Optional.of(vm);
        } catch (SandboxException e) {
            if (closed) {
                return Optional.empty();
            }
            // A snapshot that does not restore is replaced: the next acquire makes it again.
            store.discard(snapshot);
            coldBoot("restoring " + snapshot.state() + " failed (" + ErrorDetail.of(e) + "); it was removed");
            return Optional.empty();
        }
    }

    /** A restore takes well under a second: one that stalls is given up long before a boot would be. */
    private Duration restoreDeadline() {
        return bootDeadline.compareTo(RESTORE_DEADLINE) < 0 ? bootDeadline : RESTORE_DEADLINE;
    }

    private GuestSnapshots.Snapshot makeSnapshot(GuestSnapshots store, QemuLaunch launch) {
        // Held (its record renewed) like a guest, but never leased in itself: every restored guest would inherit it.
        Path template = newDirectory(TEMPLATE_PREFIX, SandboxRecord.snapshotTemplate(lease));
        try {
            return store.make(launch.in(template, qemuUserOf(template)), bootDeadline, name);
        } finally {
            remove(template);
        }
    }

    /** Notes why a guest boots cold; logged when the reason changes, so a lasting one is logged once. */
    private void coldBoot(String reason) {
        Optional<String> previous = coldBootReason;
        coldBootReason = Optional.of(reason);
        if (!previous.equals(coldBootReason)) {
            LOG.log(System.Logger.Level.WARNING, () -> "backend '" + name + "': booting cold: " + reason);
        }
    }

    /**
     * A new guest directory, held by this instance: this user's alone, holding the record, and
     * QEMU's directory in it, handed to the guest's own uid where QEMU runs as one. Others may pass through the guest
     * directory (QEMU's user must, to reach its own) but not list or write it.
     */
    private Path newDirectory(String prefix, SandboxRecord record) {
        Path directory = stateRoot.resolve(prefix + HexFormat.of().formatHex(randomBytes()));
        Path qemuDirectory = QemuLaunch.qemuDirectory(directory);
        try {
            Files.createDirectories(stateRoot);
            Files.createDirectory(directory, PosixFilePermissions.asFileAttribute(OWNER_ONLY));
            record.writeTo(directory);
            held.add(directory);
            Files.createDirectory(qemuDirectory, PosixFilePermissions.asFileAttribute(OWNER_ONLY));
            if (qemuUser.setpriv().isPresent()) {
                int uid;
                synchronized (MicroVmBackend.class) {
                    uid = UnprivilegedQemu.freeUid(qemuUidsInUse(), RANDOM);
                    Files.setAttribute(qemuDirectory, "unix:uid", uid);
                }
                Files.setAttribute(qemuDirectory, "unix:gid", UnprivilegedQemu.GUEST_GROUP);
                Files.setPosixFilePermissions(directory, PASSABLE);
            }
        } catch (IOException e) {
            throw new SandboxException("backend '" + name + "' could not make a sandbox directory under " + stateRoot
                    + ": " + ErrorDetail.of(e) + "; check that the state root is writable, or choose another with "
                    + "MicroVmBackend.builder().stateRoot(path)", e);
        }
        return directory;
    }

    /** The uids the QEMUs of this state root's directories run as. */
    private Set<Integer> qemuUidsInUse() {
        Set<Integer> uids = new java.util.HashSet<>();
        try (Stream<Path> entries = Files.list(stateRoot)) {
            entries.forEach(directory -> qemuUid(directory).ifPresent(uids::add));
        } catch (IOException nothingYet) {
            return uids;
        }
        return uids;
    }

    /** The uid a guest directory's QEMU runs as: the owner of its QEMU directory (which only this user can set). */
    private static Optional<Integer> qemuUid(Path directory) {
        try {
            return Optional.of((Integer) Files.getAttribute(QemuLaunch.qemuDirectory(directory), "unix:uid",
                    LinkOption.NOFOLLOW_LINKS));
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    private Optional<QemuLaunch.Unprivileged> qemuUserOf(Path directory) {
        return qemuUid(directory).flatMap(qemuUser::user);
    }

    @Override
    public void dispose(SandboxKey key) {
        Objects.requireNonNull(key, "key");
        directories(DIRECTORY_PREFIX, record -> record.belongsTo(key)).forEach(this::remove);
    }

    /** Answered from the state root, never from this instance's memory. */
    @Override
    public int disposeScope(String scope, String threadId) {
        return dispose(SandboxQuery.conversation(Objects.requireNonNull(scope, "scope"),
                Objects.requireNonNull(threadId, "threadId")));
    }

    /**
     * The guests the records under the state root hold for {@code query}, whichever process made
     * them, oldest first; never this instance's memory. Idle guests of a warm pool and snapshot
     * templates serve no key, and are never listed.
     *
     * @throws SandboxException the state root cannot be read
     */
    @Override
    public List<SandboxListing> list(SandboxQuery query) {
        Objects.requireNonNull(query, "query");
        return guests(DIRECTORY_PREFIX).stream().filter(guest -> guest.record().matches(query))
                .sorted(Comparator.comparing((Guest guest) -> guest.record().createdAt())
                        .thenComparing(guest -> guest.directory().getFileName().toString()))
                .map(guest -> guest.record().listing(name, guest.directory().getFileName().toString(), query))
                .toList();
    }

    /** Ends every guest {@link #list} would return, whichever process owns it. Best effort: never throws. */
    @Override
    public int dispose(SandboxQuery query) {
        Objects.requireNonNull(query, "query");
        List<Path> matching = directories(DIRECTORY_PREFIX, record -> record.matches(query));
        matching.forEach(this::remove);
        return matching.size();
    }

    /**
     * Stops renewing leases and refilling the warm pool, and ends every guest this instance holds:
     * those it booted or restored, those of its pool, and those it took over from another process.
     */
    @Override
    public void close() {
        closed = true;
        renewer.shutdownNow();
        pool.ifPresent(WarmPool::close);
        List.copyOf(held).forEach(this::remove);
        proxies.close();
    }

    /**
     * Ends guests (and snapshot templates) nobody vouches for any more: their owner died without
     * closing its backend, or let their lease run out. Nothing else would end them on the host.
     */
    /**
     * {@link #reapAbandoned()} at most once per {@link #REAP_INTERVAL}: it reads every record under
     * the state root, too much for every warm acquire, and leases are renewed only every third of
     * theirs anyway.
     */
    private void reapAbandonedNowAndThen() {
        long now = System.nanoTime();
        long due = nextReap.get();
        if (now - due >= 0 && nextReap.compareAndSet(due, now + REAP_INTERVAL.toNanos())) {
            reapAbandoned();
        }
    }

    private void reapAbandoned() {
        Instant now = Instant.now();
        List<Guest> abandoned = new ArrayList<>();
        for (String prefix : List.of(DIRECTORY_PREFIX, TEMPLATE_PREFIX)) {
            try {
                guests(prefix).stream().filter(guest -> guest.record().abandoned(now)).forEach(abandoned::add);
            } catch (SandboxException unreadable) {
                LOG.log(System.Logger.Level.WARNING, () -> ErrorDetail.of(unreadable));
            }
        }
        for (Guest guest : abandoned) {
            LOG.log(System.Logger.Level.INFO, () -> "backend '" + name + "': ending the guest in " + guest.directory()
                    + (guest.record().ownerAlive() ? ", whose lease ran out at " + guest.record().leaseUntil()
                    : ", whose owner is gone"));
            remove(guest.directory());
        }
        for (Path directory : unrecorded(now)) {
            LOG.log(System.Logger.Level.INFO, () -> "backend '" + name + "': ending the guest in " + directory
                    + ", which has no record this version reads (an older sandbox4j's, or one never finished)");
            remove(directory);
        }
    }

    /**
     * Guest directories with no record this version can read, made longer than
     * {@link #UNRECORDED_GRACE} ago: an older version's guests (whose QEMU nothing else would end)
     * and directories whose making failed half-way. A directory being made now has its record
     * within milliseconds.
     */
    private List<Path> unrecorded(Instant now) {
        List<Path> found = new ArrayList<>();
        try (Stream<Path> entries = Files.list(stateRoot)) {
            entries.filter(path -> path.getFileName().toString().startsWith(DIRECTORY_PREFIX)
                    || path.getFileName().toString().startsWith(TEMPLATE_PREFIX))
                    .filter(path -> Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS))
                    .filter(path -> SandboxRecord.readFrom(path).isEmpty())
                    .filter(path -> madeBefore(path, now.minus(UNRECORDED_GRACE)))
                    .forEach(found::add);
        } catch (IOException | UncheckedIOException unreadable) {
            return List.of();
        }
        return found;
    }

    private static boolean madeBefore(Path directory, Instant instant) {
        try {
            return Files.getLastModifiedTime(directory, LinkOption.NOFOLLOW_LINKS).toInstant().isBefore(instant);
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * Renews the lease of everything this instance holds: its record first (a host file, quickly),
     * then the guest's own. A guest whose record is gone (disposed of by another process) or that
     * another process took over is let go.
     */
    private void renewLeases() {
        for (Path directory : List.copyOf(held)) {
            try {
                Optional<SandboxRecord> renewed = updateRecord(directory, record -> Optional.of(record)
                        .filter(SandboxRecord::ownedHere).map(ours -> ours.renewed(lease)));
                if (renewed.isEmpty()) {
                    held.remove(directory);
                    forget(directory);
                }
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.DEBUG, () -> "backend '" + name + "' could not renew the record in "
                        + directory + ": " + ErrorDetail.of(e));
            }
        }
        for (Path directory : List.copyOf(held)) {
            MicroVm vm = CONNECTED.get(directory);
            try {
                if (vm != null) {
                    vm.renewLease();
                }
            } catch (RuntimeException e) {
                // A guest that does not answer is dead or dying: the next acquire of its key replaces it.
                LOG.log(System.Logger.Level.DEBUG, () -> "backend '" + name + "' could not renew the lease of the "
                        + "guest in " + directory + ": " + ErrorDetail.of(e));
            }
        }
    }

    /** How many idle guests the warm pool holds now (for tests and benchmarks). */
    int idleGuests() {
        return pool.map(WarmPool::idleGuests).orElse(0);
    }

    /** The guest this JVM is connected to in {@code directory} (for tests). */
    static Optional<MicroVm> connected(Path directory) {
        return Optional.ofNullable(CONNECTED.get(directory));
    }

    /** Stops renewing what this instance holds, as a crashed owner would (for tests). */
    void stopRenewing() {
        renewer.shutdownNow();
    }

    /**
     * Rewrites the record in {@code directory} to what {@code change} makes of it, holding this
     * JVM's lock for that record; {@code change} may decline (empty), and nothing is written.
     *
     * @return the record written; empty when there was none (the guest is gone) or {@code change} declined
     * @throws UncheckedIOException it could not be written
     */
    private static Optional<SandboxRecord> updateRecord(Path directory,
            Function<SandboxRecord, Optional<SandboxRecord>> change) {
        return DIRECTORY_CHANGES.withLock(directory, () -> {
            Optional<SandboxRecord> changed = SandboxRecord.readFrom(directory).flatMap(change);
            if (changed.isPresent()) {
                try {
                    changed.get().writeTo(directory);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
            return changed;
        });
    }

    /** A guest directory under the state root, and what its record says. */
    private record Guest(Path directory, SandboxRecord record) {
    }

    /**
     * The directories named {@code prefix}… under the state root that hold a record.
     *
     * @throws SandboxException the state root exists but cannot be listed
     */
    private List<Guest> guests(String prefix) {
        List<Guest> found = new ArrayList<>();
        try (Stream<Path> entries = Files.list(stateRoot)) {
            entries.filter(path -> path.getFileName().toString().startsWith(prefix))
                    .forEach(path -> SandboxRecord.readFrom(path).ifPresent(record -> found.add(new Guest(path,
                            record))));
        } catch (NoSuchFileException nothingYet) {
            return List.of();
        } catch (IOException | UncheckedIOException e) {
            throw new SandboxException("backend '" + name + "' cannot read its state root " + stateRoot + ": "
                    + ErrorDetail.of(e) + "; check its permissions, or choose another with "
                    + "MicroVmBackend.builder().stateRoot(path)", e);
        }
        return found;
    }

    private List<Path> directories(String prefix, Predicate<SandboxRecord> matching) {
        try {
            return guests(prefix).stream().filter(guest -> matching.test(guest.record())).map(Guest::directory)
                    .toList();
        } catch (SandboxException unreadable) {
            LOG.log(System.Logger.Level.WARNING, () -> ErrorDetail.of(unreadable));
            return List.of();
        }
    }

    private void forget(Path directory) {
        proxies.stop(directory.getFileName().toString());
        MicroVm connected = CONNECTED.remove(directory);
        if (connected != null) {
            connected.close();
        }
    }

    /** Kills the guest (here or as its pid file names it) and removes its directory; gone already is done. */
    private void remove(Path directory) {
        held.remove(directory);
        DIRECTORY_CHANGES.withLock(directory, () -> {
            forget(directory);
            MicroVm.killRecorded(directory);
            try {
                TreeRemoval.remove(directory, TreeRemoval.Mode.PROCESSES_STOPPED, TreeRemoval.DEFAULT_DEADLINE);
            } catch (IOException e) {
                LOG.log(System.Logger.Level.WARNING, () -> "backend '" + name + "' could not remove " + directory
                        + ": " + ErrorDetail.of(e));
            }
        });
    }

    private static byte[] randomBytes() {
        byte[] bytes = new byte[DIRECTORY_RANDOM_BYTES];
        RANDOM.nextBytes(bytes);
        return bytes;
    }

    @Override
    public String toString() {
        return "MicroVmBackend[" + name + ", " + accelerator.accelerator() + ", " + stateRoot + "]";
    }

    /** Mutable, single-use builder. */
    public static final class Builder {

        private String name = DEFAULT_NAME;
        private Path stateRoot = defaultStateRoot();
        private GuestImage guest;
        private Path qemu = Path.of("/usr/bin/qemu-system-x86_64");
        private int memoryMib = DEFAULT_MEMORY_MIB;
        private int cpus = 1;
        private int overlayMib = 128;
        private int processes = 256;
        private Duration bootDeadline = Duration.ofSeconds(60);
        private Optional<Accelerator> accelerator = Optional.empty();
        private boolean snapshots = true;
        private int warmPool;
        private Duration lease = DEFAULT_LEASE;
        private EgressProxy.Settings egressSettings = EgressProxy.Settings.defaults();

        private Builder() {
        }

        /** The name the router and messages use. Default {@value #DEFAULT_NAME}. */
        public Builder name(String value) {
            this.name = BackendNames.require(value);
            return this;
        }

        /**
         * Where each guest's directory (sockets, pid file, record) lives; instances sharing it share
         * the guests. Default {@code $XDG_STATE_HOME/sandbox4j/microvm}, else (root)
         * {@code /var/lib/sandbox4j/microvm}, else {@code ~/.local/state/sandbox4j/microvm}. Unix socket
         * paths must fit 107 bytes.
         */
        public Builder stateRoot(Path value) {
            this.stateRoot = Objects.requireNonNull(value, "stateRoot");
            return this;
        }

        /** What guests boot. Default: {@link GuestImage#installed()}; required when this host has none. */
        public Builder guest(GuestImage value) {
            this.guest = Objects.requireNonNull(value, "guest");
            return this;
        }

        /** The QEMU binary. Default {@code /usr/bin/qemu-system-x86_64}. */
        public Builder qemu(Path value) {
            this.qemu = Objects.requireNonNull(value, "qemu");
            return this;
        }

        /** Guest RAM in MiB, 128 (enough to boot) to 65536. Default 256. */
        public Builder memoryMib(int value) {
            this.memoryMib = within(value, 128, 65536, "a guest's memory in MiB");
            return this;
        }

        /** vCPUs, 1 to 16. Default 1. */
        public Builder cpus(int value) {
            this.cpus = within(value, 1, 16, "a guest's vCPUs");
            return this;
        }

        /** The most, in MiB, the guest's writable file system may hold (it lives in guest memory). Default 128. */
        public Builder overlayMib(int value) {
            this.overlayMib = within(value, 8, 65536, "the writable overlay in MiB");
            return this;
        }

        /** The most processes (and threads) the guest's commands may run at once, 8 to 65536. Default 256. */
        public Builder processes(int value) {
            this.processes = within(value, 8, 65536, "the processes a guest's commands may run");
            return this;
        }

        private static int within(int value, int least, int most, String what) {
            if (value < least || value > most) {
                throw new IllegalArgumentException(what + " must be " + least + " to " + most + ", not " + value);
            }
            return value;
        }

        /** How long a guest may take to boot to its agent's answer. Default 60 s (TCG on a busy host is slow). */
        public Builder bootDeadline(Duration value) {
            if (value == null || value.isNegative() || value.isZero()) {
                throw new IllegalArgumentException("the boot deadline must be positive, not " + value);
            }
            this.bootDeadline = value;
            return this;
        }

        /** Forces an accelerator instead of probing the host (TCG always works; KVM must really work). */
        public Builder accelerator(Accelerator value) {
            this.accelerator = Optional.of(Objects.requireNonNull(value, "accelerator"));
            return this;
        }

        /**
         * Whether a new guest is restored from a snapshot of a booted, idle guest (made once per
         * launch under the state root, and reseeded after every restore) instead of booting cold.
         * A guest whose snapshot cannot be made or restored boots cold, and {@code diagnostics()}
         * says why. Default on.
         */
        public Builder snapshots(boolean value) {
            this.snapshots = value;
            return this;
        }

        /**
         * How many idle guests, restored from the snapshot ahead of need, the backend keeps for each
         * launch in use (a launch: this backend's guest with or without the egress port), 0 to
         * {@value MicroVmBackend#MAX_WARM_POOL}: an acquire claims one when there is one (its record
         * is rewritten to the key, its randomness and clock renewed), and restores as before when
         * there is none. One background daemon thread refills the pool; {@code close()} ends its
         * guests. Needs snapshots. Default 0 (off).
         */
        public Builder warmPool(int value) {
            this.warmPool = within(value, 0, MAX_WARM_POOL, "the warm pool's idle guests per launch");
            return this;
        }

        /**
         * How long an owner vouches for its guests, as the local backends' lease: the owner renews it
         * every third of it while it lives. A guest whose lease ran out is ended by any backend built
         * on the same state root (when it is built, and on acquires, at most every 5 s), and powers
         * itself off, so a guest whose owner vanished never outlives it by much. 1 s to 366 days;
         * default 10 minutes.
         */
        public Builder lease(Duration value) {
            if (value == null || value.compareTo(MIN_LEASE) < 0 || value.compareTo(MAX_LEASE) > 0) {
                throw new IllegalArgumentException("the lease must be " + LEASE_RANGE + ", not " + value);
            }
            this.lease = value;
            return this;
        }

        /** Bounds and resolver of each allowlisting guest's egress proxy. */
        public Builder egressSettings(EgressProxy.Settings value) {
            this.egressSettings = Objects.requireNonNull(value, "egressSettings");
            return this;
        }

        /**
         * The backend: it checks the guest and the state root, ends what owners left there (guests
         * whose owner died or whose lease ran out) and starts renewing leases.
         *
         * @throws IllegalArgumentException no guest is named or installed, a setting contradicts another
         *                                  (a warm pool without snapshots, an overlay beyond the memory),
         *                                  or the state root is unusable; the message names the fix
         */
        public MicroVmBackend build() {
            if (guest == null) {
                guest = GuestImage.installed().orElseThrow(() -> new IllegalArgumentException("backend '" + name
                        + "' needs a guest to boot: name it with MicroVmBackend.builder().guest(GuestImage.at(dir)) "
                        + "or set " + GuestImage.DIRECTORY_VARIABLE + "; none is in " + GuestImage.defaultDirectory()
                        + " (./sandbox4j and scripts/test.sh build one there with "
                        + "sandbox4j-microvm/src/main/guest/build-guest.sh)"));
            }
            if (warmPool > 0 && !snapshots) {
                throw new IllegalArgumentException("backend '" + name + "': a warm pool keeps guests restored from a "
                        + "snapshot: turn snapshots on, or leave warmPool at 0");
            }
            if (overlayMib > memoryMib) {
                throw new IllegalArgumentException("the writable overlay (" + overlayMib + " MiB) lives in guest "
                        + "memory and cannot exceed it (" + memoryMib + " MiB)");
            }
            return new MicroVmBackend(this);
        }

        /** Root's default is under /var/lib, which nobody (who QEMU runs as) may enter; root's home it may not. */
        private static Path defaultStateRoot() {
            String state = System.getenv("XDG_STATE_HOME");
            if (state != null && !state.isBlank()) {
                return Path.of(state, "sandbox4j", "microvm");
            }
            if ("root".equals(System.getProperty("user.name"))) {
                return Path.of("/var/lib/sandbox4j/microvm");
            }
            return Path.of(System.getProperty("user.home"), ".local", "state", "sandbox4j", "microvm");
        }
    }
}
