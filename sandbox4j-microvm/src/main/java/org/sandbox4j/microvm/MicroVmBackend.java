package org.sandbox4j.microvm;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.LinkOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.sandbox4j.core.BackendDeclarations;
import org.sandbox4j.core.Capability;
import org.sandbox4j.core.Egress;
import org.sandbox4j.core.Isolation;
import org.sandbox4j.core.OsFamily;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.spi.BackendNames;
import org.sandbox4j.core.spi.ErrorDetail;
import org.sandbox4j.core.spi.GuestPaths;
import org.sandbox4j.core.spi.KeyDigest;
import org.sandbox4j.core.spi.KeyedLocks;
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
 * state root ({@code vm-<random>}) holds a {@link SandboxRecord} naming the key by digest and the
 * JVM that owns it, and QEMU's pid file, both written by this host user alone, and QEMU's own
 * directory for its sockets (the only place QEMU's user may write: a compromised QEMU can forge
 * nothing the host reads, and the host checks who serves each socket before it speaks). Every
 * instance, in any process, finds guests there, reuses a live one (reconnecting to its agent) and
 * ends them on {@code dispose}. Nothing the guest does reaches that directory: its commands and
 * files go through the guest agent over a virtio-serial port, and its whole writable file system
 * is an overlay in guest memory.
 *
 * <h2>Fast acquire</h2>
 * A new guest is restored from a snapshot of a booted, idle guest rather than booted (under TCG
 * here: ~0.1 s to the agent's answer instead of ~2.5 s). The snapshot is made once per launch (the
 * whole QEMU command line but the sandbox's own paths) under {@code <stateRoot>/snapshots} and
 * shared by every instance and process on the state root; each restored guest gets fresh
 * randomness and the host's clock before anything runs in it. When no snapshot can be made or a
 * restore fails, the guest boots cold and {@link #diagnostics()} says why;
 * {@link Builder#snapshots(boolean)} turns it off.
 *
 * <h2>Lifetime</h2>
 * A guest lives until it is disposed of, or until the backend that booted it is closed. A guest
 * whose owner died without closing is ended by the next backend built on the same state root.
 */
public final class MicroVmBackend implements SandboxBackend, AutoCloseable {

    /** The name unless the builder sets one. */
    public static final String DEFAULT_NAME = "microvm";

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

    private final String name;
    private final Path stateRoot;
    private final GuestImage guest;
    private final Path qemu;
    private final int memoryMib;
    private final int cpus;
    private final int overlayMib;
    private final int processes;
    private final Duration bootDeadline;
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
    /** Why the last guest booted cold instead of being restored; empty while none has. */
    private volatile Optional<String> coldBootReason = Optional.empty();
    /** Why a snapshot could not be made, by its file: this instance does not try that one again. */
    private final Map<Path, String> snapshotFailures = new ConcurrentHashMap<>();
    private final Set<Path> booted = ConcurrentHashMap.newKeySet();
    private volatile Accelerator.Choice accelerator;

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

        reapOrphans();
        snapshots.ifPresent(GuestSnapshots::removeStalePartials);
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
        return DECLARATIONS;
    }

    /** The accelerator guests boot under, and why: KVM is confirmed by the first guest that comes up. */
    public Accelerator.Choice accelerator() {
        return accelerator;
    }

    /**
     * What {@code doctor} shows: the accelerator and why, the guest, what each guest may use, and
     * how guests start (restored from a snapshot, or booted cold and why).
     */
    public List<String> diagnostics() {
        return List.of(accelerator.reason(), qemuUser.reason(),
                "guest kernel: " + guest.kernel(), "guest root: " + guest.root(),
                "per guest: " + memoryMib + " MiB of memory, " + cpus + " vCPU(s), " + processes + " processes, "
                        + overlayMib + " MiB of writable storage (in guest memory)",
                fastAcquire());
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
        SandboxRecord record = SandboxRecord.of(key, identity(spec));
        String workDir = GuestPaths.normalize(spec.workDir());
        return acquiring.withLock(record.conversation() + record.key() + record.kind(), () -> {
            Optional<MicroVm> warm = warm(record);
            MicroVm vm = warm.orElseGet(() -> boot(record, policy.isPresent()));
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

    /** A live guest of this record, reconnected if another instance booted it; dead ones are cleared. */
    private Optional<MicroVm> warm(SandboxRecord record) {
        for (Path directory : directories(record::names)) {
            MicroVm connected = CONNECTED.get(directory);
            if (connected != null && connected.process().isAlive()) {
                return Optional.of(connected);
            }
            forget(directory);
            Optional<MicroVm> attached = MicroVm.attach(directory, accelerator.accelerator(), bootDeadline, name);
            if (attached.isPresent()) {
                CONNECTED.put(directory, attached.get());
                return attached;
            }
            remove(directory);
        }
        return Optional.empty();
    }

    private MicroVm boot(SandboxRecord record, boolean egress) {
        Path directory = newDirectory(DIRECTORY_PREFIX, record);
        booted.add(directory);
        Accelerator.Choice choice = accelerator;
        QemuLaunch launch = new QemuLaunch(qemu, guest, choice.accelerator(), memoryMib, cpus, overlayMib, processes,
                directory, qemuUserOf(directory), egress);
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
        Path template = newDirectory(TEMPLATE_PREFIX, SandboxRecord.snapshotTemplate());
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
     * A new guest directory: this user's alone, holding the record, and QEMU's directory in it,
     * handed to the guest's own uid where QEMU runs as one. Others may pass through the guest
     * directory (QEMU's user must, to reach its own) but not list or write it.
     */
    private Path newDirectory(String prefix, SandboxRecord record) {
        Path directory = stateRoot.resolve(prefix + HexFormat.of().formatHex(randomBytes()));
        Path qemuDirectory = QemuLaunch.qemuDirectory(directory);
        try {
            Files.createDirectories(stateRoot);
            Files.createDirectory(directory, PosixFilePermissions.asFileAttribute(OWNER_ONLY));
            record.writeTo(directory);
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
        String conversation = SandboxRecord.conversation(key.scope(), key.threadId());
        String digest = SandboxRecord.keyDigest(key);
        directories(record -> record.conversation().equals(conversation) && record.key().equals(digest))
                .forEach(this::remove);
    }

    /** Answered from the state root, never from this instance's memory. */
    @Override
    public int disposeScope(String scope, String threadId) {
        String conversation = SandboxRecord.conversation(Objects.requireNonNull(scope, "scope"),
                Objects.requireNonNull(threadId, "threadId"));
        List<Path> matching = directories(record -> record.conversation().equals(conversation));
        matching.forEach(this::remove);
        return matching.size();
    }

    /** Ends every guest this instance booted. */
    @Override
    public void close() {
        List.copyOf(booted).forEach(this::remove);
        proxies.close();
    }

    /** Ends guests whose owner died without closing its backend: nothing would ever end them otherwise. */
    private void reapOrphans() {
        Predicate<SandboxRecord> orphaned = record -> !record.ownerAlive();
        Stream.concat(directories(DIRECTORY_PREFIX, orphaned).stream(),
                directories(TEMPLATE_PREFIX, orphaned).stream()).forEach(directory -> {
            LOG.log(System.Logger.Level.INFO, () -> "backend '" + name + "': ending the guest in " + directory
                    + ", whose owner is gone");
            remove(directory);
        });
    }

    private List<Path> directories(Predicate<SandboxRecord> matching) {
        return directories(DIRECTORY_PREFIX, matching);
    }

    private List<Path> directories(String prefix, Predicate<SandboxRecord> matching) {
        List<Path> found = new ArrayList<>();
        try (Stream<Path> entries = Files.list(stateRoot)) {
            entries.filter(path -> path.getFileName().toString().startsWith(prefix))
                    .filter(path -> SandboxRecord.readFrom(path).filter(matching).isPresent())
                    .forEach(found::add);
        } catch (IOException nothingYet) {
            return List.of();
        }
        return found;
    }

    private void forget(Path directory) {
        proxies.stop(directory.getFileName().toString());
        MicroVm connected = CONNECTED.remove(directory);
        if (connected != null) {
            connected.close();
        }
    }

    /** Kills the guest (here or as its pid file names it) and removes its directory. */
    private void remove(Path directory) {
        forget(directory);
        MicroVm.killRecorded(directory);
        booted.remove(directory);
        try {
            TreeRemoval.remove(directory, TreeRemoval.Mode.PROCESSES_STOPPED, TreeRemoval.DEFAULT_DEADLINE);
        } catch (IOException e) {
            LOG.log(System.Logger.Level.WARNING, () -> "backend '" + name + "' could not remove " + directory + ": "
                    + ErrorDetail.of(e));
        }
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
        private int memoryMib = 256;
        private int cpus = 1;
        private int overlayMib = 128;
        private int processes = 256;
        private Duration bootDeadline = Duration.ofSeconds(60);
        private Optional<Accelerator> accelerator = Optional.empty();
        private boolean snapshots = true;
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

        /** Bounds and resolver of each allowlisting guest's egress proxy. */
        public Builder egressSettings(EgressProxy.Settings value) {
            this.egressSettings = Objects.requireNonNull(value, "egressSettings");
            return this;
        }

        public MicroVmBackend build() {
            if (guest == null) {
                guest = GuestImage.installed().orElseThrow(() -> new IllegalArgumentException("backend '" + name
                        + "' needs a guest to boot: name it with MicroVmBackend.builder().guest(GuestImage.at(dir)) "
                        + "or set " + GuestImage.DIRECTORY_VARIABLE + "; none is in " + GuestImage.defaultDirectory()
                        + " (./sandbox4j and scripts/test.sh build one there with "
                        + "sandbox4j-microvm/src/main/guest/build-guest.sh)"));
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
