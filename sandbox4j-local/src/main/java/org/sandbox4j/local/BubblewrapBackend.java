package org.sandbox4j.local;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.sandbox4j.agent.AgentBinaries;
import org.sandbox4j.agent.AgentConnection;
import org.sandbox4j.core.BackendDeclarations;
import org.sandbox4j.core.Capability;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.Egress;
import org.sandbox4j.core.spi.EgressRefusals;
import org.sandbox4j.core.spi.ErrorDetail;
import org.sandbox4j.core.spi.PassedHostChecks;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.spi.GuestPaths;
import org.sandbox4j.core.Isolation;
import org.sandbox4j.core.spi.KeyDigest;
import org.sandbox4j.core.OsFamily;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxDisposed;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.egress.EgressPolicy;
import org.sandbox4j.egress.EgressProxy;
import org.sandbox4j.core.spi.GuestEnvironment;
import org.sandbox4j.core.spi.GuestText;
import org.sandbox4j.core.SandboxImageNotUsable;
import org.sandbox4j.egress.GuestBridge;
import org.sandbox4j.egress.GuestProxyEnvironment;
import org.sandbox4j.egress.ProxySockets;

/**
 * Runs each sandbox in Linux namespaces through the {@code bwrap} binary (bubblewrap): no daemon,
 * no image, no root needed. Declares {@link Isolation#CONTAINER} (but {@link Isolation#OS_PROCESS}
 * as root with no writable cgroup, where nothing bounds a guest's processes), POSIX guests, egress
 * {@link Egress#CLOSED} and {@link Egress#ALLOWLIST}, and EXEC plus every file capability.
 *
 * <p>A sandbox is a private workspace directory under the state root (default
 * {@code $XDG_STATE_HOME/sandbox4j}, never the temp directory) and a {@link SandboxRecord} beside
 * it. Every exec runs a fresh {@code bwrap}: every namespace unshared (no network device but
 * loopback), a new session, {@code --die-with-parent}, uid/gid 65534 in a user namespace with
 * every capability dropped and {@code no_new_privs} set (bwrap always sets it), the host's /usr
 * (or a root file system the host names) read-only, private /proc, /dev and /tmp, the workspace
 * bound at the parent of the spec's work dir, and a cleared environment. Each launch starts in a
 * PID namespace of its own whose init is the outer {@code bwrap} ({@code unshare --pid --fork
 * --kill-child}): killing it ends every process the command started, so a timeout does, and its
 * exit reaps the sandbox's own pid 1, which bwrap would otherwise leave to the host's init.
 *
 * <p>With {@link Egress#ALLOWLIST}, the sandbox also gets a host-side allowlisting proxy (from
 * {@code sandbox4j-egress}) on a unix socket mounted into the guest, a bridge from
 * {@code 127.0.0.1:3128} to it, and the environment that points curl, pip, npm and the JVM at it.
 *
 * <p>Limits ({@link LocalLimits}) are enforced per sandbox with cgroups (v2, or v1 plus a v2
 * {@code cgroup.kill}) where the host lets this user write them, else with rlimits set in a user
 * namespace of each launch's own (the process bound then covers one exec, whatever else the user
 * runs); {@link #diagnostics()} says which, and what each bound covers.
 */
public final class BubblewrapBackend extends LocalBackend {

    /** The backend's name unless the builder gives another. */
    public static final String DEFAULT_NAME = "bubblewrap";
    /** How long an owner vouches for its sandboxes; a crashed owner's sandboxes are reaped after it. */
    public static final Duration DEFAULT_LEASE = Duration.ofMinutes(10);
    /** Where cgroup file systems are mounted on Linux. */
    public static final Path DEFAULT_CGROUP_ROOT = Path.of("/sys/fs/cgroup");
    /** The guest directory where an allowlisting sandbox finds its proxy socket. */
    public static final String GUEST_EGRESS_DIRECTORY = "/run/sandbox4j-egress";
    /** The directory inside a sandbox directory that holds the proxy's socket and is mounted into the guest. */
    static final String EGRESS_DIRECTORY = "egress";
    /** The proxy's audit log inside a sandbox directory (outside what the guest sees). */
    static final String EGRESS_AUDIT_FILE = "egress-audit.jsonl";
    static final String TYPE = "bubblewrap";
    private static final String INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; "
            + "Fedora: dnf install bubblewrap; Arch: pacman -S bubblewrap) or name the binary with "
            + "BubblewrapBackend.builder().bwrap(path)";
    private static final Duration HOST_CHECK_TIMEOUT = Duration.ofSeconds(30);
    /** Single digits: a POSIX sh (dash) reads {@code 10<file} as a command named 10, not a redirection. */
    private static final String NO_FIFO_FD = "8";
    private static final String HOST_FILTER_FD = "9";
    private static final String STATUS_FD = "7";
    /**
     * Opens the no-FIFO filter ($1) and the host's own filter ($2, or "-") for bwrap, and the
     * launch's report ($3, or "-") for bwrap's JSON status, then runs the rest. Fixed text.
     */
    private static final String OPEN_FILTERS = "exec " + NO_FIFO_FD + "<\"$1\" || exit 125; if [ \"$2\" != - ]; then "
            + "exec " + HOST_FILTER_FD + "<\"$2\" || exit 125; fi; if [ \"$3\" != - ]; then exec " + STATUS_FD
            + ">\"$3\" || exit 125; fi; shift 3; exec \"$@\"";
    private static final String NO_FIFO_FILE = "no-fifo.bpf";


    private static final ResourceLimiter.Programs PROGRAMS = ResourceLimiter.Programs.fromPath();

    private final Path bwrap;
    private final LocalSandboxes sandboxes;
    private final BwrapLayout layout;
    private final ResourceLimiter limiter;
    /** Host checks that passed before, so a short-lived JVM does not launch its probe sandboxes again. */
    private final PassedHostChecks checks;
    private final BackendDeclarations declarations;
    private final Optional<Path> seccompFilter;
    /** The filter every guest runs under: no FIFO can be made, so no host open of the workspace can block. */
    private final Path noFifoFilter;
    private final Optional<String> imageName;
    /** Proxies this process runs, by sandbox id. */
    private final ProxySockets proxies;
    /** Which bridge the guest has ("socat", "python3" or ""), probed once. */
    private volatile String guestBridge;
    /** How commands run: through a resident agent per sandbox, or one bwrap each, and why. */
    private final Commands commands;
    /** The resident agents this JVM runs for the backend's sandboxes. */
    private final ResidentAgents agents;
    /** Whether the agent is told to bound each command's temporary directories (false only in tests). */
    /** What a probe agent said, by its command line: a host is probed once per JVM. */
    private static final Map<List<String>, Optional<String>> AGENT_PROBES = new ConcurrentHashMap<>();
    private static final Duration AGENT_PROBE_TIMEOUT = Duration.ofSeconds(10);
    /** How the agent begins the line it prints for options it does not know. */
    private static final String AGENT_USAGE = "usage: s4j-agent";

    /**
     * How a backend runs commands, decided at construction.
     *
     * @param agent       the agent binary on this host, when commands go through resident agents
     * @param description one line for {@link #diagnostics()}
     */
    private record Commands(Optional<Path> agent, String description) {
        static Commands perCommand(String why) {
            return new Commands(Optional.empty(), "one bwrap per command (" + why + ")");
        }
    }

    private BubblewrapBackend(Builder builder) {
        super(builder.name);
        this.bwrap = HostPrograms.find(builder.bwrap).orElseThrow(() -> new SandboxException("backend '"
                + builder.name + "' cannot find the bwrap binary '" + builder.bwrap + "': " + INSTALL_HINT));
        LocalStore store = LocalStore.open(builder.stateRoot, TYPE, name);
        try {
            this.layout = BwrapLayout.of(builder.rootFilesystem, builder.readOnlyBinds,
                    store.root().resolve(LocalStore.GUEST_ETC), builder.limits.tmpBytes());
        } catch (IOException e) {
            throw new SandboxException("backend '" + name + "' could not prepare the guest's file system: "
                    + ErrorDetail.of(e), e);
        }
        // bwrap returns as soon as its command does, before the sandbox's own pid 1 is gone: a PID
        // namespace per launch reaps that (and everything else left) instead of the host's init.
        this.checks = store.hostChecks();
        this.limiter = ResourceLimiter.detect(builder.cgroupRoot, builder.limits, PROGRAMS,
                ResourceLimiter.Launches.IN_A_KEEPER, checks);
        this.declarations = declarationsFor(limiter.mechanism());
        this.seccompFilter = builder.seccompFilter;
        this.noFifoFilter = writeNoFifoFilter(store.root().resolve(LocalStore.GUEST_ETC));
        this.imageName = builder.imageName;
        this.proxies = new ProxySockets(name, builder.egressSettings, ProxySockets.Access.OWNER,
                "use a shorter state root");
        this.sandboxes = new LocalSandboxes(store, limiter, builder.lease, name, proxies::stop);
        this.agents = new ResidentAgents(name);
        checkHost();
        this.commands = commands(builder.residentAgent);
        reapAbandoned();
    }

    public static Builder builder() {
        return new Builder();
    }

    @Override
    public BackendDeclarations declarations() {
        return declarations;
    }

    /**
     * A container, unless nothing bounds the guest's processes (root with no writable cgroup): a
     * guest that can exhaust the host's process table is not one, so the backend then declares
     * {@code os_process} and a router whose floor is higher refuses it at construction.
     */
    private static BackendDeclarations declarationsFor(LimitMechanism mechanism) {
        return BackendDeclarations.builder(mechanism.boundsProcesses() ? Isolation.CONTAINER : Isolation.OS_PROCESS)
                .capabilities(Capability.EXEC, Capability.FILES_IN, Capability.FILES_OUT, Capability.FILES_LIST,
                        Capability.FILES_DELETE, Capability.INTERACTIVE_EXEC)
                .egressModes(ProxySockets.MODES)
                .osFamilies(OsFamily.POSIX)
                .build();
    }

    /** The directory this backend keeps its sandboxes in. */
    public Path stateDirectory() {
        return sandboxes.store().root();
    }

    /**
     * {@code doctor}-style lines: what runs sandboxes here, how they are limited and confined,
     * and what an allowlisting sandbox would use as its bridge.
     */
    public List<String> diagnostics() {
        List<String> lines = new ArrayList<>();
        lines.add("backend: " + name + " (" + TYPE + ", isolation " + declarations.isolation().wire()
                + (limiter.mechanism().boundsProcesses() ? ")" : ": as root with no writable cgroup nothing bounds a "
                + "guest's processes, so it is no container; run the JVM as another user, or where a cgroup is "
                + "writable, for isolation container)"));
        lines.add("bwrap: " + bwrap + " (user namespaces work: checked at construction)");
        lines.add("guest file system: " + layout.description());
        lines.add("limits: " + limiter.describe());
        lines.add("storage: each sandbox's workspace is a tmpfs of " + limiter.limits().workspaceBytes() + " bytes held "
                + "by a keeper process (in memory, never on this host's disk; a write past it fails), each exec's "
                + "/tmp and /var/tmp a tmpfs of " + limiter.limits().tmpBytes() + " bytes");
        lines.add("seccomp: " + (NoFifoFilter.coversThisHost() ? "FIFOs cannot be made (mknod of a FIFO fails: the host "
                + "reads the workspace without ever blocking on one)" : "FIFOs are NOT prevented on " + System.getProperty(
                "os.arch") + " (the built-in filter knows x86-64 and AArch64): a guest can block a host file call")
                + "; " + seccompFilter.map(path -> "and the host's filter " + path).orElse(
                "no filter of the host's (give a compiled BPF filter with seccompFilter(path); see the module README)"));
        lines.add("commands: " + commands.description());
        lines.add("state: " + sandboxes.store().root());
        String bridge = guestBridge();
        lines.add("egress bridge in the guest: " + (bridge.isEmpty()
                ? "none (install socat or python3 in the guest, or ALLOWLIST specs are refused)" : bridge));
        return List.copyOf(lines);
    }

    @Override
    public Sandbox acquire(SandboxKey key, SandboxSpec spec) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(spec, "spec");
        String workDir = checkedWorkDir(spec.workDir());
        checkImage(spec);
        Optional<EgressPolicy> policy = egressPolicy(spec);
        String fingerprint = fingerprint(spec);
        String id = SandboxRecord.idOf(TYPE, key, spec.kind(), fingerprint);
        String workDirName = GuestPaths.fileName(workDir);
        Path directory = sandboxes.acquire(id, key, spec.kind(), fingerprint,
                (sandbox, made) -> keepWorkspace(sandbox, workDirName));
        WorkspaceKeeper keeper = WorkspaceKeeper.find(directory).orElseThrow(() -> new SandboxDisposed("backend '" + name
                + "': the sandbox was disposed of while it was being acquired; acquire it again"));
        // A proxy whose socket vanished (another process disposed of the sandbox, or adopted it) is replaced.
        Optional<Path> egress = policy.map(allowed -> proxies.ensure(id, directory.resolve(EGRESS_DIRECTORY),
                directory.resolve(EGRESS_AUDIT_FILE), allowed));
        return new BubblewrapSandbox(this, id, directory, GuestPaths.parent(workDir), egress, spec, keeper);
    }

    /**
     * Makes sure the sandbox's workspace is held by a running keeper: one starts with a fresh
     * sandbox, and again (empty) when the last one is gone. A new workspace gets its work dir.
     */
    private void keepWorkspace(Path sandbox, String workDirName) throws IOException {
        if (WorkspaceKeeper.find(sandbox).isPresent()) {
            return;
        }
        WorkspaceKeeper keeper = WorkspaceKeeper.start(sandbox, limiter.limits(), PROGRAMS, HostUser.current(), name);
        // Nothing but this host has seen the fresh tmpfs yet: a plain mkdir cannot meet a guest's link.
        Files.createDirectories(keeper.workspaceSeenByTheHost(sandbox.resolve(LocalStore.WORKSPACE))
                .resolve(workDirName));
    }

    /**
     * Ends the resident agents this process runs (what they run goes with them) and stops its
     * proxies, then lets go of the sandboxes as {@link LocalBackend#close()} says.
     */
    @Override
    public void close() {
        agents.close();
        proxies.close();
        super.close();
    }

    /**
     * The exact argv {@code sandbox.exec(command, options)} would start on the host (the limits
     * launcher, then {@code bwrap} and its arguments), but for the per-exec report file bwrap
     * writes its status to, whose place holds {@code -} (none): for diagnostics, and for
     * benchmarks that compare the backend against the same line launched directly.
     *
     * @throws IllegalArgumentException when {@code sandbox} is not one of this backend's
     */
    public List<String> launchCommand(Sandbox sandbox, Command command, ExecOptions options) {
        if (!(sandbox instanceof BubblewrapSandbox bubblewrap) || bubblewrap.backend() != this) {
            throw new IllegalArgumentException("not a sandbox of backend '" + name + "': " + sandbox);
        }
        return List.copyOf(bubblewrap.commandLine(command, options, Optional.empty()));
    }

    /**
     * The audit log of an allowlisting sandbox: one JSON object per proxy decision (time, method,
     * host, port, verdict, reason, bytes each way), appended when each connection ends, outside
     * what the guest sees. Empty for a sandbox that is not allowlisting.
     *
     * @throws IllegalArgumentException when {@code sandbox} is not one of this backend's
     */
    public Optional<Path> egressAuditLog(Sandbox sandbox) {
        if (!(sandbox instanceof BubblewrapSandbox bubblewrap) || bubblewrap.backend() != this) {
            throw new IllegalArgumentException("not a sandbox of backend '" + name + "': " + sandbox);
        }
        return bubblewrap.egressAuditLog();
    }

    // ---------------------------------------------------------------- what a sandbox asks of its backend

    /**
     * The resident agent of a sandbox, started when none runs; empty when this backend runs one bwrap
     * per command, and for an allowlisting sandbox, whose bridge to its proxy starts with each command.
     */
    Optional<ResidentAgents.Agent> residentAgent(Path directory, String id, String mountPoint, Optional<Path> egress,
            WorkspaceKeeper keeper) {
        if (commands.agent().isEmpty() || egress.isPresent()) {
            return Optional.empty();
        }
        return Optional.of(agents.agentFor(id, directory, keeper,
                () -> agentCommandLine(directory, id, mountPoint, keeper)));
    }

    ResidentAgents agents() {
        return agents;
    }

    /**
     * The host argv of a sandbox's resident agent: the launchers and bwrap layout of a command's own
     * (the sandbox's control group, its keeper's namespaces, a PID namespace, the seccomp filters,
     * the workspace), but the agent as bwrap's uid 0 with {@link BwrapLayout#AGENT_CAPABILITIES}.
     */
    private List<String> agentCommandLine(Path directory, String id, String mountPoint, WorkspaceKeeper keeper) {
        List<String> argv = new ArrayList<>(sandboxes.launchPrefix(id, keeper.enterWords(PROGRAMS)));
        argv.addAll(agentBwrap(commands.agent().orElseThrow(),
                List.of("--bind", directory.resolve(LocalStore.WORKSPACE).toString(), mountPoint)));
        return argv;
    }

    /** bwrap and its arguments up to the agent and its options, with {@code binds} before the agent's own. */
    private List<String> agentBwrap(Path agent, List<String> binds) {
        List<String> argv = new ArrayList<>(filteredBwrap(layout.agentArguments(), seccompFilter, Optional.empty()));
        argv.addAll(binds);
        // The root's and /dev's tmpfs outlive a command here, shared by the next: read-only, nothing written
        // there persists (a fresh bwrap gave each command its own, writable and thrown away).
        argv.addAll(List.of("--ro-bind", agent.toString(), ResidentAgents.GUEST_AGENT, "--remount-ro", "/dev",
                "--remount-ro", "/", "--chdir", "/", "--", ResidentAgents.GUEST_AGENT));
        argv.addAll(ResidentAgents.agentOptions(limiter.limits().tmpBytes()));
        return argv;
    }

    /** A command's environment, as a command's own bwrap gives it: the base, the proxy's, the caller's, then PWD. */
    Map<String, String> environment(Optional<Path> egress, ExecOptions options) {
        Map<String, String> environment = new LinkedHashMap<>(GuestEnvironment.WITH_SYSTEM_PATH);
        egress.ifPresent(hostDirectory -> environment.putAll(GuestProxyEnvironment.variables()));
        environment.putAll(options.environment());
        return environment;
    }

    List<String> commandLine(Path directory, String id, String mountPoint, Optional<Path> egress,
            WorkspaceKeeper keeper, Command command, ExecOptions options, Optional<Path> report) {
        List<String> argv = new ArrayList<>(sandboxes.launchPrefix(id, keeper.enterWords(PROGRAMS)));
        argv.addAll(filteredBwrap(layout.fixedArguments(), seccompFilter, report));
        argv.addAll(List.of("--bind", directory.resolve(LocalStore.WORKSPACE).toString(), mountPoint));
        egress.ifPresent(hostDirectory -> argv.addAll(List.of("--ro-bind", hostDirectory.toString(),
                GUEST_EGRESS_DIRECTORY)));
        argv.addAll(List.of("--chdir", options.workingDirectory()));
        environment(egress, options).forEach((variable, value) -> argv.addAll(List.of("--setenv", variable, value)));
        argv.add("--");
        List<String> words = GuestCommand.words(command);
        // The guest listens on 127.0.0.1:3128 before the command starts.
        argv.addAll(egress.isPresent()
                ? GuestBridge.argv(GUEST_EGRESS_DIRECTORY + "/" + ProxySockets.SOCKET_NAME, words) : words);
        LaunchEncoding.requireEncodable(argv, name);
        return argv;
    }

    ProcessBuilder processBuilder(List<String> argv) {
        ProcessBuilder builder = new ProcessBuilder(argv);
        // The launcher needs no host variable; bwrap clears the guest's environment anyway.
        builder.environment().clear();
        builder.environment().put("PATH", "/usr/bin:/bin:/usr/sbin:/sbin");
        return builder;
    }

    @Override
    LocalSandboxes sandboxes() {
        return sandboxes;
    }

    // ---------------------------------------------------------------- internals

    private String checkedWorkDir(String workDir) {
        return GuestPaths.workDirWithItsOwnParent(name, workDir, GuestPaths.SYSTEM_DIRECTORIES);
    }

    private void checkImage(SandboxSpec spec) {
        Optional<String> asked = spec.imageId().or(spec::image);
        if (asked.isEmpty() || asked.equals(imageName)) {
            return;
        }
        throw new SandboxImageNotUsable("backend '" + name + "' cannot run the image '" + asked.get() + "': it runs "
                + imageName.map(image -> "only the root file system named '" + image + "'")
                        .orElse("the host's own /usr and no image")
                + "; drop the image from the spec, give the backend a root file system under that name "
                + "(rootFilesystem(dir, name)), or use a container backend");
    }

    private Optional<EgressPolicy> egressPolicy(SandboxSpec spec) {
        Optional<EgressPolicy> policy = ProxySockets.policyFor(spec, name, "its guests have a network namespace of "
                + "their own, with loopback alone (use a backend that gives the guest the host's network for more)");
        if (policy.isPresent() && guestBridge().isEmpty()) {
            throw EgressRefusals.noBridge(name, "the guest", GuestProxyEnvironment.GUEST_BRIDGE_PORT,
                    "where the guest's /usr comes from");
        }
        return policy;
    }

    /** What fixes a sandbox's identity beside its key and kind: its file system and its egress. */
    private String fingerprint(SandboxSpec spec) {
        List<String> parts = new ArrayList<>();
        parts.add("fs=" + layout.description());
        parts.add("egress=" + spec.egress().wire());
        parts.addAll(new TreeSet<>(spec.egressAllow()));
        return KeyDigest.ofParts(parts);
    }

    private String guestBridge() {
        String known = guestBridge;
        if (known == null) {
            known = probe(List.of("/bin/sh", "-c", GuestBridge.PROBE_SCRIPT)).strip();
            guestBridge = known;
        }
        return known;
    }

    /** Fails construction with the fix when bwrap cannot make a sandbox on this host. */
    private void checkHost() {
        List<String> argv = new ArrayList<>(limiter.containmentPrefix());
        argv.addAll(filteredBwrap(layout.fixedArguments(), Optional.empty(), Optional.empty()));
        argv.addAll(List.of("--", "/bin/sh", "-c", "exit 0"));
        boolean known = checks.passed(argv);
        Outcome outcome = known ? PASSED : run(argv);
        if (outcome.exitCode() != 0) {
            String said = outcome.stderr().strip();
            String fix = said.contains("namespace") || said.contains("uid map") || said.contains("Operation not "
                    + "permitted") ? "user namespaces look disabled for this user; enable them (sysctl "
                    + "kernel.unprivileged_userns_clone=1, or user.max_user_namespaces > 0; on Ubuntu 24.04+ allow "
                    + "bwrap in AppArmor) or run a container backend" : "run the same bwrap line by hand to see why";
            throw new SandboxException("backend '" + name + "' cannot start a sandbox on this host: " + bwrap
                    + " exited " + outcome.exitCode() + (said.isEmpty() ? "" : " saying '" + said + "'") + "; " + fix);
        }
        if (!known) {
            checks.remember(argv);
        }
        seccompFilter.ifPresent(this::checkSeccompFilter);
    }

    /** A filter the kernel refuses would fail every exec as if the guest had failed: refuse it now instead. */
    private void checkSeccompFilter(Path filter) {
        List<String> argv = new ArrayList<>(limiter.containmentPrefix());
        argv.addAll(filteredBwrap(layout.fixedArguments(), Optional.of(filter), Optional.empty()));
        argv.addAll(List.of("--", "/bin/sh", "-c", "exit 0"));
        boolean known = checks.passed(argv);
        Outcome outcome = known ? PASSED : run(argv);
        if (outcome.exitCode() != 0) {
            throw new SandboxException("backend '" + name + "' cannot apply the seccomp filter " + filter + ": a "
                    + "sandbox under it exited " + outcome.exitCode() + " saying '" + outcome.stderr().strip()
                    + "'; give a BPF program exported by libseccomp (seccomp_export_bpf) for this architecture, "
                    + "one that lets a shell start");
        }
        if (!known) {
            checks.remember(argv);
        }
    }

    /** Runs a command in a throwaway sandbox without a workspace; returns its stdout ("" on failure). */
    private String probe(List<String> command) {
        List<String> argv = new ArrayList<>(limiter.containmentPrefix());
        argv.addAll(filteredBwrap(layout.fixedArguments(), seccompFilter, Optional.empty()));
        argv.add("--");
        argv.addAll(command);
        Outcome outcome = run(argv);
        return outcome.exitCode() == 0 ? outcome.stdout() : "";
    }

    private record Outcome(int exitCode, String stdout, String stderr) {
    }

    /** A host check that passed before (see {@link PassedHostChecks}): not run again. */
    private static final Outcome PASSED = new Outcome(0, "", "");

    /**
     * {@code bwrap} and its fixed arguments behind the shell that opens its seccomp filters (the
     * no-FIFO filter always, the host's own when given) and, when given, the report bwrap writes
     * its JSON status to ({@code {"child-pid": N}} once it cloned its child, {@code {"exit-code": N}}
     * once that child, having reached exec, exited). bwrap keeps the status descriptor from its child.
     */
    private List<String> filteredBwrap(List<String> arguments, Optional<Path> hostFilter, Optional<Path> report) {
        List<String> words = new ArrayList<>(List.of("/bin/sh", "-c", OPEN_FILTERS, "sandbox4j-seccomp",
                noFifoFilter.toString(), hostFilter.map(Path::toString).orElse("-"),
                report.map(Path::toString).orElse("-"), bwrap.toString()));
        words.addAll(arguments);
        words.addAll(List.of("--add-seccomp-fd", NO_FIFO_FD));
        hostFilter.ifPresent(filter -> words.addAll(List.of("--add-seccomp-fd", HOST_FILTER_FD)));
        report.ifPresent(file -> words.addAll(List.of("--json-status-fd", STATUS_FD)));
        return words;
    }

    private Path writeNoFifoFilter(Path directory) {
        Path file = directory.resolve(NO_FIFO_FILE);
        byte[] program = NoFifoFilter.forThisHost();
        try {
            Files.createDirectories(directory);
            if (!Files.isRegularFile(file, java.nio.file.LinkOption.NOFOLLOW_LINKS)
                    || !java.util.Arrays.equals(Files.readAllBytes(file), program)) {
                Path temporary = Files.createTempFile(directory, ".no-fifo-", ".part");
                Files.write(temporary, program);
                Files.move(temporary, file, java.nio.file.StandardCopyOption.ATOMIC_MOVE,
                        java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            }
            return file;
        } catch (IOException e) {
            throw new SandboxException("backend '" + name + "' could not write its seccomp filter to " + file + ": "
                    + ErrorDetail.of(e), e);
        }
    }

    /**
     * Whether commands can go through a resident agent here, and why not: never weaker than one bwrap
     * per command, so the agent is used only where it keeps every bound that gives. A probe agent
     * (the same bwrap layout, no workspace) must start, say it has its mechanisms, and run a command.
     */
    private Commands commands(boolean wanted) {
        if (!wanted) {
            return Commands.perCommand("residentAgent(false)");
        }
        if (limiter.mechanism() != LimitMechanism.CGROUP_V2 && limiter.mechanism() != LimitMechanism.CGROUP_V1) {
            return Commands.perCommand("no writable cgroup here: the rlimits that bound a sandbox instead are set per "
                    + "launch, and a resident agent is one launch for every command");
        }
        Optional<Path> agent;
        try {
            agent = AgentBinaries.packaged();
        } catch (java.io.UncheckedIOException e) {
            return Commands.perCommand("the packaged agent could not be placed: " + ErrorDetail.of(e));
        }
        if (agent.isEmpty()) {
            return Commands.perCommand(AgentBinaries.missingReason());
        }
        List<String> argv = new ArrayList<>(limiter.containmentPrefix());
        argv.addAll(agentBwrap(agent.get(), List.of()));
        Optional<String> refused = AGENT_PROBES.computeIfAbsent(argv, this::probeAgent);
        if (refused.isPresent() && refused.get().contains(AGENT_USAGE)) {
            return Commands.perCommand("the packaged agent cannot bound each command's /tmp, /var/tmp and /dev/shm "
                    + "(it lacks " + ResidentAgents.TMPFS_SIZE_OPTION + "), and unbounded they would be weaker than a "
                    + "bwrap per command");
        }
        if (refused.isPresent()) {
            return Commands.perCommand("a resident agent cannot run here: " + refused.get());
        }
        return new Commands(agent, "resident agent (one s4j-agent per sandbox, the init of a long-lived bwrap "
                + "as its uid 0 with " + BwrapLayout.AGENT_CAPABILITIES + " in bubblewrap's user namespace; each "
                + "command under an init of its own in new PID, mount and user namespaces, as nobody with no "
                + "capability, with its own /proc and empty /tmp, /var/tmp and /dev/shm of "
                + limiter.limits().tmpBytes() + " bytes each"
                + "; allowlisting sandboxes run one bwrap per command); residentAgent(false) runs one bwrap per command");
    }

    /** Empty when a probe agent started with {@code argv} ran {@code true}; else why not, in one line. */
    private Optional<String> probeAgent(List<String> argv) {
        if (checks.passed(argv)) {
            return Optional.empty();
        }
        Optional<String> refused = runProbeAgent(argv);
        if (refused.isEmpty()) {
            checks.remember(argv);
        }
        return refused;
    }

    private Optional<String> runProbeAgent(List<String> argv) {
        try (ResidentAgents.Agent probe = agents.start(argv, Optional.empty(), "a probe")) {
            AgentConnection connection = probe.connection();
            ExecResult result = connection.execEndingTree(List.of("/bin/true"), "/", GuestEnvironment.WITH_SYSTEM_PATH,
                    ExecOptions.in("/", AGENT_PROBE_TIMEOUT), "true");
            return result.exitCode() == 0 ? Optional.empty() : Optional.of("a probe command exited "
                    + result.exitCode() + ": " + GuestText.quote(new String(result.stderr(), StandardCharsets.UTF_8)));
        } catch (SandboxException e) {
            return Optional.of(ErrorDetail.of(e));
        }
    }

    private Outcome run(List<String> argv) {
        try {
            Process process = processBuilder(argv).redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null")
                    .toFile())).start();
            var stdout = process.getInputStream().readAllBytes();
            var stderr = process.getErrorStream().readAllBytes();
            if (!process.waitFor(HOST_CHECK_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                return new Outcome(-1, "", "timed out");
            }
            return new Outcome(process.exitValue(), new String(stdout, StandardCharsets.UTF_8),
                    new String(stderr, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new SandboxException("backend '" + name + "' could not run " + bwrap + ": " + ErrorDetail.of(e)
                    + "; " + INSTALL_HINT, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SandboxException("interrupted while checking bwrap", e);
        }
    }

    /** Configures a {@link BubblewrapBackend}; every setting has a default (its name: {@value #DEFAULT_NAME}). */
    public static final class Builder extends LocalBackendBuilder<Builder> {
        private String bwrap = "bwrap";
        private Optional<Path> rootFilesystem = Optional.empty();
        private Optional<String> imageName = Optional.empty();
        private final List<BwrapLayout.ReadOnlyBind> readOnlyBinds = new ArrayList<>();
        private Optional<Path> seccompFilter = Optional.empty();
        private EgressProxy.Settings egressSettings = EgressProxy.Settings.defaults();
        private boolean residentAgent = true;

        private Builder() {
            super(DEFAULT_NAME);
        }

        @Override
        Builder self() {
            return this;
        }

        /** The bwrap binary: a path, or a name looked up on PATH. Default {@code bwrap}. */
        public Builder bwrap(String value) {
            this.bwrap = Objects.requireNonNull(value, "bwrap");
            return this;
        }

        /**
         * A host directory to use as the guest's root file system (read-only; e.g. a debootstrap
         * tree), served to specs naming {@code image} (or none). Default: the host's own /usr.
         */
        public Builder rootFilesystem(Path directory, String image) {
            if (!Files.isDirectory(directory)) {
                throw new IllegalArgumentException("the root file system " + directory + " is not a directory");
            }
            if (image == null || image.isBlank()) {
                throw new IllegalArgumentException("a root file system needs the image name specs use for it");
            }
            this.rootFilesystem = Optional.of(directory);
            this.imageName = Optional.of(image);
            return this;
        }

        /** Binds one more host path read-only into every sandbox (a JDK, a tool chain). */
        public Builder readOnlyBind(Path host, String guest) {
            this.readOnlyBinds.add(new BwrapLayout.ReadOnlyBind(host, guest));
            return this;
        }

        /**
         * A compiled seccomp BPF program (as libseccomp's {@code seccomp_export_bpf} writes it)
         * applied to every guest through {@code bwrap --seccomp}. Default: none.
         */
        public Builder seccompFilter(Path value) {
            if (!Files.isReadable(value)) {
                throw new IllegalArgumentException("the seccomp filter " + value + " cannot be read");
            }
            this.seccompFilter = Optional.of(value.toAbsolutePath());
            return this;
        }

        /**
         * Whether each sandbox's commands go through one resident agent (default {@code true}), where
         * this host allows it: a long-lived bwrap per sandbox whose init is {@code s4j-agent}, which
         * gives each command its own PID, mount and user namespaces as a fresh bwrap would. Where it
         * cannot run (no packaged agent, no writable cgroup, a bwrap or seccomp filter that refuses it),
         * or with {@code false}, every command runs a bwrap of its own; {@link #diagnostics()} says which.
         */
        public Builder residentAgent(boolean value) {
            this.residentAgent = value;
            return this;
        }

        /** Bounds and resolver of each allowlisting sandbox's egress proxy. */
        public Builder egressSettings(EgressProxy.Settings value) {
            this.egressSettings = Objects.requireNonNull(value, "egressSettings");
            return this;
        }

        /**
         * Checks the host (bwrap present, user namespaces on, state root writable) and reaps what
         * crashed owners left.
         *
         * @throws SandboxException naming what is missing and how to fix it
         */
        public BubblewrapBackend build() {
            return new BubblewrapBackend(this);
        }
    }
}
