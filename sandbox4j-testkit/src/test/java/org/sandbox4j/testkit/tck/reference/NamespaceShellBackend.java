package org.sandbox4j.testkit.tck.reference;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.sandbox4j.core.BackendDeclarations;
import org.sandbox4j.core.Capability;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.Egress;
import org.sandbox4j.core.spi.ErrorDetail;
import org.sandbox4j.core.spi.GuestPaths;
import org.sandbox4j.core.spi.GuestText;
import org.sandbox4j.core.Isolation;
import org.sandbox4j.core.OsFamily;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxSpec;

/**
 * A real backend for the TCK's own tests: every command runs through {@code unshare(1)} in fresh
 * mount, PID and network namespaces, with a private per-sandbox storage directory bind-mounted at
 * the work base, so the guest sees its own files there and the host's directory stays empty.
 * Ownership is recorded on disk under the state root, so a second instance over the same root
 * (another replica, a restarted JVM) finds and disposes of what the first created.
 *
 * <p><b>Not a boundary.</b> The guest sees the host's root file system (only the work base is
 * private). When this JVM is root, the guest runs as the unprivileged {@link GuestUser} with no
 * capabilities and {@code no_new_privs}, so it can write only what any unprivileged user can
 * (world-writable directories such as {@code /tmp}) and what its own storage holds; otherwise it
 * is the invoking user, mapped to root in a user namespace. Where the host allows it, a cgroup
 * {@code pids} limit
 * ({@value ProcessLimit#MAX_PROCESSES} processes per sandbox) keeps a fork bomb from taking the
 * machine down; it is a safety net, never declared. It declares {@code interactive_exec}: a started
 * command runs below a starter that is its namespace's init, in a session of its own, on the kit's
 * {@code GuestProcess} and {@code HostProcess}; disposing of a sandbox kills what it started. It exists to prove that the conformance probes
 * pass on an honest backend and fail on deliberately broken ones ({@link Flaw}); it declares
 * {@link Isolation#NONE} unless a test makes it lie.
 */
public final class NamespaceShellBackend implements SandboxBackend {

    /** The deliberate breakages the TCK's own tests use to prove that probes can fail. */
    public enum Flaw {
        /** File methods skip the ancestor walk and follow links: writes through {@code link-dir} land outside. */
        FOLLOWS_SYMLINKS,
        /** Commands inherit the JVM's environment instead of a cleared one. */
        LEAKS_HOST_ENVIRONMENT,
        /** No PID namespace: a timeout kills the direct child only, and double-forked children survive. */
        KILLS_ONLY_DIRECT_CHILD,
        /** {@code dispose} and {@code disposeScope} answer from this instance's memory, not the on-disk record. */
        REMEMBERS_IN_MEMORY_ONLY,
        /** No network namespace: the guest shares the host's network. */
        SHARES_HOST_NETWORK,
        /**
         * A root JVM's guest keeps root with every capability and without {@code no_new_privs}: only
         * for proving the capability probes can fail. Run nothing against it that could write
         * outside its storage: it can write the whole host.
         */
        RUNS_AS_HOST_ROOT,
        /** {@code acquire} leaves the spec's work dir unmade: the first exec in it fails until something writes there. */
        LEAVES_WORK_DIR_UNMADE,
        /** {@code start} holds stdin until it is closed, then runs an exec and replays its output: nothing interactive. */
        REPLAYS_EXEC,
        /**
         * {@code start} reads the command's stdout eagerly into a host buffer far larger than the window
         * (bounded at {@link EagerOutput#BUFFER_BYTES}, so the test host survives the probe that shows it).
         */
        BUFFERS_WITHOUT_BOUND
    }

    /** The name of an honest instance; a flawed one appends its flaws. */
    public static final String BASE_NAME = "namespace-shell";

    private static final System.Logger LOG = System.getLogger(NamespaceShellBackend.class.getName());
    private static final String SANDBOXES = "sandboxes";
    private static final String PRIVATE_DIRECTORY = "rwx------";
    /** A bound on making the work dir at acquire: a hang guard, not a performance bound. */
    private static final Duration WORK_DIR_BOUND = Duration.ofSeconds(30);
    private static final Set<Capability> CAPABILITIES = Collections.unmodifiableSet(EnumSet.of(
            Capability.EXEC, Capability.FILES_IN, Capability.FILES_OUT, Capability.FILES_LIST, Capability.FILES_DELETE,
            Capability.INTERACTIVE_EXEC));

    private final String name;
    private final Path sandboxesRoot;
    private final String workBase;
    private final BackendDeclarations declarations;
    private final Set<Flaw> flaws;
    private final NamespaceLauncher launcher;
    /** Who the guest runs as and owns its storage, when it must drop from root. */
    private final Optional<GuestUser> guestUser;
    private final Map<String, Object> locksById = new ConcurrentHashMap<>();
    /** Only consulted with {@link Flaw#REMEMBERS_IN_MEMORY_ONLY}: what this instance created, by id. */
    private final Map<String, SandboxKey> createdHere = new ConcurrentHashMap<>();
    /**
     * The launchers of the processes each sandbox started through this instance, killed when it is
     * disposed of (the process limit's group does that too, where this host has one).
     */
    private final Map<String, Set<Process>> startedById = new ConcurrentHashMap<>();

    /**
     * @param stateRoot         the host directory holding every sandbox's storage and ownership record
     * @param workBase          the guest work base: an absolute host directory that stays empty on the
     *                          host and is where each sandbox's storage is mounted in the guest
     * @param declaredIsolation what to declare (set it higher than {@link Isolation#NONE} to make a lying backend)
     * @param egressModes       the egress modes to declare
     * @param flaws             the deliberate breakages, none for an honest backend
     * @throws SandboxException when {@code unshare} is not installed or the state root cannot be prepared
     */
    public NamespaceShellBackend(Path stateRoot, String workBase, Isolation declaredIsolation, Set<Egress> egressModes,
            Set<Flaw> flaws) {
        Objects.requireNonNull(stateRoot, "stateRoot");
        Objects.requireNonNull(workBase, "workBase");
        if (!workBase.startsWith("/") || !GuestPaths.normalize(workBase).equals(workBase) || workBase.equals("/")) {
            throw new IllegalArgumentException("the work base must be a normalised absolute directory below the root, not '"
                    + workBase + "'");
        }
        this.flaws = flaws.isEmpty() ? Collections.unmodifiableSet(EnumSet.noneOf(Flaw.class))
                : Collections.unmodifiableSet(EnumSet.copyOf(flaws));
        this.name = nameFor(this.flaws);
        this.sandboxesRoot = stateRoot.toAbsolutePath().resolve(SANDBOXES);
        this.workBase = workBase;
        this.declarations = BackendDeclarations.builder(Objects.requireNonNull(declaredIsolation, "declaredIsolation"))
                .capabilities(CAPABILITIES)
                .egressModes(egressModes)
                .osFamilies(OsFamily.POSIX)
                .build();
        this.guestUser = GuestUser.forGuestWith(this.flaws);
        this.launcher = new NamespaceLauncher(name, workBase, this.flaws, guestUser);
        try {
            Files.createDirectories(sandboxesRoot);
            // Guests share one uid: none may reach another's storage through the host path.
            Files.setPosixFilePermissions(sandboxesRoot, PosixFilePermissions.fromString(PRIVATE_DIRECTORY));
            // The mount point must exist on the host; it stays empty there.
            Files.createDirectories(Path.of(workBase));
        } catch (IOException e) {
            throw new SandboxException("backend '" + name + "' could not prepare its state directory: " + ErrorDetail.of(e), e);
        }
        if (guestUser.isPresent()) {
            refuseUnsearchableAncestors(Path.of(workBase));
        }
    }

    /**
     * The unprivileged guest resolves absolute paths under the work base, so every directory above
     * it must let other users search it (the work base itself is covered by the storage's mount).
     */
    private void refuseUnsearchableAncestors(Path workBasePath) {
        for (Path directory = workBasePath.getParent(); directory != null; directory = directory.getParent()) {
            try {
                if (!Files.getPosixFilePermissions(directory, LinkOption.NOFOLLOW_LINKS)
                        .contains(PosixFilePermission.OTHERS_EXECUTE)) {
                    throw new SandboxException("backend '" + name + "' runs its guest as uid " + GuestUser.UNPRIVILEGED_ID
                            + ", which cannot reach the work base " + workBase + " through " + directory
                            + ": let other users search it (chmod o+x) or choose a work base under one they can");
                }
            } catch (IOException e) {
                throw new SandboxException("backend '" + name + "' could not check the work base's ancestors: "
                        + ErrorDetail.of(e), e);
            }
        }
    }

    private static String nameFor(Set<Flaw> flaws) {
        if (flaws.isEmpty()) {
            return BASE_NAME;
        }
        return BASE_NAME + "-" + flaws.stream()
                .map(flaw -> flaw.name().toLowerCase(Locale.ROOT).replace('_', '-'))
                .collect(Collectors.joining("-"));
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public BackendDeclarations declarations() {
        return declarations;
    }

    /** The guest work base every sandbox's storage is mounted at. */
    public String workBase() {
        return workBase;
    }

    /** The flaws this instance was built with. */
    public Set<Flaw> flaws() {
        return flaws;
    }

    /**
     * The sandbox, with the spec's work dir made in it (by the guest, with the guest's own rights, so
     * no host-side call follows a link the guest planted in its storage). The work dir must lie
     * under the work base: nowhere else has this sandbox storage of its own.
     */
    @Override
    public Sandbox acquire(SandboxKey key, SandboxSpec spec) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(spec, "spec");
        String workDir = spec.workDir();
        if (!workDir.equals(workBase) && !workDir.startsWith(workBase + "/")) {
            throw new SandboxException("backend '" + name + "' keeps a sandbox's files only under its work base "
                    + workBase + ", and the spec's work dir " + GuestText.quote(workDir) + " is not there: choose "
                    + "a work dir under it");
        }
        Sandbox sandbox = sandboxFor(key, spec);
        if (!flaws.contains(Flaw.LEAVES_WORK_DIR_UNMADE)) {
            ExecResult made = sandbox.exec(Command.argv("mkdir", "-p", "--", workDir),
                    ExecOptions.in("/", WORK_DIR_BOUND));
            if (made.exitCode() != 0) {
                throw new SandboxException("backend '" + name + "' could not make the work dir "
                        + GuestText.quote(workDir) + " in its sandbox: " + GuestText.quote(made.stderrText()));
            }
        }
        return sandbox;
    }

    private Sandbox sandboxFor(SandboxKey key, SandboxSpec spec) {
        String id = OwnershipRecord.idOf(key, spec.kind());
        Path sandboxDirectory = sandboxesRoot.resolve(id);
        synchronized (locksById.computeIfAbsent(id, ignored -> new Object())) {
            try {
                Path storage = sandboxDirectory.resolve(OwnershipRecord.STORAGE);
                Files.createDirectories(storage);
                // The storage is the guest's work base: it must be the guest's to write in.
                if (guestUser.isPresent()) {
                    guestUser.get().own(storage);
                }
                Path record = sandboxDirectory.resolve(OwnershipRecord.FILE_NAME);
                if (!Files.exists(record)) {
                    OwnershipRecord.of(key, spec.kind()).writeAtomically(record);
                    createdHere.put(id, key);
                }
                Optional<Path> processLimit =
                        ProcessLimit.procsFileFor(OwnershipRecord.processGroupOf(sandboxesRoot, id));
                Set<Process> started = startedById.computeIfAbsent(id, ignored -> ConcurrentHashMap.newKeySet());
                return new NamespaceShellSandbox(id, storage, record, processLimit, workBase, flaws, guestUser, launcher,
                        started);
            } catch (IOException | UncheckedIOException e) {
                throw new SandboxException("backend '" + name + "' could not create its sandbox: " + ErrorDetail.of(e), e);
            }
        }
    }

    @Override
    public void dispose(SandboxKey key) {
        try {
            for (Path sandbox : owned(record -> record.belongsTo(key), id -> key.equals(createdHere.get(id)))) {
                delete(sandbox);
            }
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, () -> "backend '" + name + "' failed to dispose: " + ErrorDetail.of(e));
        }
    }

    @Override
    public int disposeScope(String scope, String threadId) {
        try {
            int deleted = 0;
            for (Path sandbox : owned(record -> record.belongsTo(scope, threadId), id -> {
                SandboxKey key = createdHere.get(id);
                return key != null && key.scope().equals(scope) && key.threadId().equals(threadId);
            })) {
                if (delete(sandbox)) {
                    deleted++;
                }
            }
            return deleted;
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, () -> "backend '" + name + "' failed to dispose of a scope: "
                    + ErrorDetail.of(e));
            return 0;
        }
    }

    /**
     * Deletes every sandbox under this state root, whoever created it: test clean-up, so no
     * process-limit group outlives the test.
     *
     * @return how many were deleted
     */
    int disposeEverything() {
        int deleted = 0;
        for (Path sandbox : recorded(record -> true)) {
            if (delete(sandbox)) {
                deleted++;
            }
        }
        return deleted;
    }

    /**
     * The sandbox directories matching: from the on-disk records, or (the flaw) from this
     * instance's memory.
     */
    private List<Path> owned(Predicate<OwnershipRecord> onDisk,
            Predicate<String> inMemory) {
        List<Path> matches = new ArrayList<>();
        if (flaws.contains(Flaw.REMEMBERS_IN_MEMORY_ONLY)) {
            for (String id : createdHere.keySet()) {
                if (inMemory.test(id)) {
                    matches.add(sandboxesRoot.resolve(id));
                }
            }
            return matches;
        }
        return recorded(onDisk);
    }

    /** The sandbox directories whose on-disk record matches. */
    private List<Path> recorded(Predicate<OwnershipRecord> onDisk) {
        List<Path> matches = new ArrayList<>();
        try (Stream<Path> sandboxes = Files.list(sandboxesRoot)) {
            for (Path sandbox : (Iterable<Path>) sandboxes::iterator) {
                if (recordOf(sandbox).filter(onDisk).isPresent()) {
                    matches.add(sandbox);
                }
            }
        } catch (IOException e) {
            LOG.log(System.Logger.Level.WARNING, () -> "backend '" + name + "' could not scan its records: "
                    + ErrorDetail.of(e));
        }
        return matches;
    }

    /** The record in one sandbox directory; empty (and logged) when it is missing or unreadable. */
    private Optional<OwnershipRecord> recordOf(Path sandboxDirectory) {
        try {
            return OwnershipRecord.read(sandboxDirectory.resolve(OwnershipRecord.FILE_NAME));
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, () -> "backend '" + name + "' skipped an unreadable ownership record: "
                    + ErrorDetail.of(e));
            return Optional.empty();
        }
    }

    /** Deletes one sandbox, record first (so it is never found half-deleted). Never follows links. */
    private boolean delete(Path sandboxDirectory) {
        String id = sandboxDirectory.getFileName().toString();
        synchronized (locksById.computeIfAbsent(id, ignored -> new Object())) {
            createdHere.remove(id);
            try {
                boolean existed = Files.deleteIfExists(sandboxDirectory.resolve(OwnershipRecord.FILE_NAME));
                // After the record: a started process killed now finds its sandbox gone, so it ends as disposed of.
                Set<Process> started = startedById.remove(id);
                if (started != null) {
                    started.forEach(Process::destroyForcibly);
                }
                HostTrees.deleteRecursively(sandboxDirectory, false);
                ProcessLimit.remove(OwnershipRecord.processGroupOf(sandboxesRoot, id));
                return existed;
            } catch (IOException e) {
                LOG.log(System.Logger.Level.WARNING, () -> "backend '" + name + "' could not delete a sandbox: "
                        + ErrorDetail.of(e));
                return false;
            }
        }
    }
}
