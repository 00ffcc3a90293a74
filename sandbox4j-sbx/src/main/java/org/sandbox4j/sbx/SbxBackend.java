package org.sandbox4j.sbx;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.sandbox4j.core.BackendDeclarations;
import org.sandbox4j.core.Capability;
import org.sandbox4j.core.Egress;
import org.sandbox4j.core.EntryKind;
import org.sandbox4j.core.spi.EgressRefusals;
import org.sandbox4j.core.spi.ErrorDetail;
import org.sandbox4j.core.spi.GuestPaths;
import org.sandbox4j.core.spi.GuestText;
import org.sandbox4j.core.Isolation;
import org.sandbox4j.core.spi.Json;
import org.sandbox4j.core.OsFamily;
import org.sandbox4j.core.ProcessSignal;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.core.SandboxEntry;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxPathNotConfined;
import org.sandbox4j.core.spi.Disposals;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.spi.TreeRemoval;
import org.sandbox4j.core.spi.WorkspaceFiles;
import org.sandbox4j.core.spi.KeyedLocks;

/**
 * Docker Sandboxes microVMs (one Linux kernel per sandbox) through the {@code sbx} CLI, as
 * pinned in {@code SBX-PROTOCOL.md}. Declares {@link Isolation#MICROVM}, POSIX guests, egress
 * {@link Egress#DENY_ALL} and {@link Egress#ALLOWLIST} (a real guest has a NIC whose every
 * connection ends at Docker's host-side proxy, so {@link Egress#CLOSED} is never claimed), EXEC
 * and every file capability.
 *
 * <h2>Acquire</h2>
 * Every acquire first reads (never writes) the host settings: SSH agent forwarding must be off
 * and no MCP server registered, else {@link SbxHostNotConfined}. A sandbox is named
 * {@code <prefix><conversation>-<key>-<kind>} ({@link SbxNames}); a warm one is reused when its
 * image (the spec's {@code imageId}, else {@code image}, else none: the {@code shell} agent's own)
 * matches the one recorded beside its workspace at create. A new one gets a fresh private host
 * directory {@code <workspace root>/<name>/ws-<random>} as its only mount (the skills store off),
 * is created with {@code --deny-network "**"}, is checked in its own {@code sh} for the
 * {@link SbxScripts#REQUIRED_COMMANDS}, for user namespaces and for a forwarded SSH agent, and has
 * its mount point (the parent of the spec's work dir) made as root; every command then binds the
 * workspace there in a namespace of its own ({@link SbxScripts#WRAPPER}). Two creates racing one
 * name get one sandbox: the loser adopts the winner. Acquires of one name are serialised in this
 * JVM.
 *
 * <h2>Allowlist</h2>
 * An {@link Egress#ALLOWLIST} sandbox gets {@code sbx policy} rules scoped to it alone
 * ({@link SbxEgress}): planned before the create against the host's posture and global allows,
 * set after it, then the create's deny-all lifted; the plan and the rules sbx then lists are
 * recorded beside the workspace ({@value #EGRESS_SUFFIX}). Before every command and at every warm
 * acquire they are checked again; drift retires the sandbox. Disposal puts its deny-all back first.
 *
 * <h2>Retirement</h2>
 * When a timed-out command's process group cannot be killed, the sandbox is retired: a
 * {@value #RETIRED_FILE} file holding its id is written beside its workspace, every handle to that
 * instance refuses further use (in any process sharing the workspace root), and the next acquire
 * replaces it.
 */
public final class SbxBackend implements SandboxBackend {

    /** Recorded beside a workspace for a spec that names no image: the {@code shell} agent's own image. */
    static final String AGENT_IMAGE = "(the shell agent's own image)";
    /** Beside each workspace {@code ws-<random>}: {@code ws-<random>}{@value} holds the image it was created from. */
    static final String IMAGE_SUFFIX = ".image";
    /**
     * Beside each workspace of an {@link Egress#ALLOWLIST} sandbox: {@code ws-<random>}{@value}
     * holds its allowlist, its plan and, once opened, its own rules as sbx listed them.
     */
    static final String EGRESS_SUFFIX = ".egress";
    /** Marks a retired instance beside its workspaces; holds the instance's id. */
    static final String RETIRED_FILE = "retired";
    /** Each create's private workspace directory is this plus random hex. */
    static final String WORKSPACE_PREFIX = "ws-";
    private static final int WORKSPACE_RANDOM_BYTES = 8;
    private static final String CASE_PROBE = ".sandbox4j-case-Probe";
    private static final System.Logger LOG = System.getLogger(SbxBackend.class.getName());
    private static final SecureRandom RANDOM = new SecureRandom();

    private static final BackendDeclarations DECLARATIONS = BackendDeclarations.builder(Isolation.MICROVM)
            .capabilities(Capability.EXEC, Capability.FILES_IN, Capability.FILES_OUT, Capability.FILES_LIST,
                    Capability.FILES_DELETE, Capability.INTERACTIVE_EXEC)
            .egressModes(Egress.DENY_ALL, Egress.ALLOWLIST)
            .osFamilies(OsFamily.POSIX)
            .build();

    private final SbxConfig config;
    private final SbxCli cli;
    private final SbxNames names;
    private final KeyedLocks<String> locks = new KeyedLocks<>();
    /** Whether the workspace root's file system changes names (case-insensitive); probed on first use. */
    private volatile Boolean aliasingHost;

    public SbxBackend(SbxConfig config) {
        this(config, new ProcessSbxRunner(Objects.requireNonNull(config, "config")));
    }

    SbxBackend(SbxConfig config, SbxRunner runner) {
        this.config = Objects.requireNonNull(config, "config");
        this.cli = new SbxCli(Objects.requireNonNull(runner, "runner"), config.name(), config.commandTimeout());
        this.names = new SbxNames(config.namePrefix());
    }

    @Override
    public String name() {
        return config.name();
    }

    @Override
    public BackendDeclarations declarations() {
        return DECLARATIONS;
    }

    public SbxConfig config() {
        return config;
    }

    /** The sbx name this backend gives the sandbox of {@code (key, kind)}. */
    public String sandboxName(SandboxKey key, String kind) {
        return names.name(key, kind);
    }

    // ---------------------------------------------------------------- acquire

    @Override
    public Sandbox acquire(SandboxKey key, SandboxSpec spec) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(spec, "spec");
        // Every write and read through the handle is held to the spec's per-file caps.
        return acquireInstance(key, spec).limitedTo(spec);
    }

    private SbxSandbox acquireInstance(SandboxKey key, SandboxSpec spec) {
        String mountPoint = mountPointOf(spec.workDir());
        Optional<List<String>> allowlist = switch (spec.egress()) {
            case DENY_ALL -> Optional.empty();
            case ALLOWLIST -> Optional.of(SbxEgress.hosts(spec.egressAllow()));
            default -> throw EgressRefusals.modeNotEnforced(name(), spec.egress(), "a guest has a network device "
                    + "whose connections end at Docker's host-side proxy", DECLARATIONS.egressModes());
        };
        Optional<String> image = spec.imageId().or(spec::image);
        if (image.isPresent() && image.get().isBlank()) {
            throw new IllegalArgumentException("backend '" + name() + "' passes the spec's imageId, else its image, to "
                    + "sbx create --template, and it is blank; name an image or leave both unset for the shell "
                    + "agent's own");
        }
        String template = image.orElse(AGENT_IMAGE);
        String sandboxName = names.name(key, spec.kind());
        SbxSandbox sandbox = locks.withLock(sandboxName, () -> {
            checkHost();
            Path record = config.workspaceRoot().resolve(sandboxName);
            Optional<SbxListing> existing = cli.find(sandboxName);
            if (existing.isPresent() && isRetired(sandboxName, existing.get().id())) {
                LOG.log(Level.INFO, () -> "backend '" + name() + "': replacing retired sandbox " + sandboxName);
                Map<String, List<Path>> before = hostRecords(sandboxName);
                if (disposeInstance(sandboxName, existing.get().id())) {
                    deleteAll(before.getOrDefault(sandboxName, List.of()));
                }
                existing = cli.find(sandboxName);
            }
            if (existing.isPresent()) {
                SbxSandbox warm = warm(existing.get(), template, mountPoint, allowlist);
                checkEgress(warm);
                return warm;
            }
            return create(sandboxName, image, mountPoint, record, allowlist);
        });
        sandbox.makeWorkDir(spec.workDir());
        return sandbox;
    }

    private SbxSandbox warm(SbxListing listing, String template, String mountPoint,
            Optional<List<String>> allowlist) {
        Path record = config.workspaceRoot().resolve(listing.name());
        Optional<Path> workspace = listing.workspaces().size() != 1 ? Optional.empty()
                : Optional.of(Path.of(listing.workspaces().get(0)).toAbsolutePath().normalize());
        if (workspace.isEmpty() || !record.equals(workspace.get().getParent())
                || !workspace.get().getFileName().toString().startsWith(WORKSPACE_PREFIX)
                || !Files.isDirectory(workspace.get(), java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            throw new SandboxException("backend '" + name() + "': sandbox " + listing.name() + " mounts "
                    + listing.workspaces() + ", not one workspace under " + record + "; it was made with another "
                    + "workspace root or by hand: dispose of it (sbx rm --force " + listing.name() + ") or configure "
                    + "the same workspace root");
        }
        Optional<String> recorded = recordedImage(workspace.get());
        if (recorded.isEmpty() || !recorded.get().equals(template)) {
            throw new SandboxException("backend '" + name() + "': sandbox " + listing.name() + " was created from "
                    + recorded.map(GuestText::quote).orElse("an image this backend did not record") + " but this spec "
                    + "asks for " + GuestText.quote(template) + "; a warm sandbox never changes its image: dispose of "
                    + "the key first, or use another kind");
        }
        Optional<EgressRecord> egress = EgressRecord.read(egressRecord(workspace.get()));
        Optional<List<String>> made = egress.map(found -> found.plan().hosts());
        if (!made.equals(allowlist)) {
            throw new SandboxException("backend '" + name() + "': sandbox " + listing.name() + " was created with "
                    + made.map(hosts -> "the egress allowlist " + GuestText.quote(String.join(",", hosts)))
                            .orElse("egress '" + Egress.DENY_ALL.wire() + "'")
                    + " but this spec asks for " + allowlist.map(hosts -> "the egress allowlist "
                            + GuestText.quote(String.join(",", hosts))).orElse("egress '" + Egress.DENY_ALL.wire() + "'")
                    + "; a warm sandbox never changes its egress: dispose of the key first, or use another kind");
        }
        if (egress.isPresent() && !egress.get().opened()) {
            throw new SandboxException("backend '" + name() + "': sandbox " + listing.name() + " has no recorded "
                    + "rules yet (another process is opening its allowlist, or that failed); acquire again, or "
                    + "dispose of the key");
        }
        return new SbxSandbox(this, listing.name(), listing.id(), workspace.get(), mountPoint);
    }

    private static Path egressRecord(Path workspace) {
        return workspace.resolveSibling(workspace.getFileName() + EGRESS_SUFFIX);
    }

    private static Path imageRecord(Path workspace) {
        return workspace.resolveSibling(workspace.getFileName() + IMAGE_SUFFIX);
    }

    /** The image recorded beside {@code workspace} (outside it: the guest writes the workspace, never this). */
    private static Optional<String> recordedImage(Path workspace) {
        try {
            return Optional.of(Files.readString(imageRecord(workspace), StandardCharsets.UTF_8));
        } catch (IOException absent) {
            return Optional.empty();
        }
    }

    private SbxSandbox create(String sandboxName, Optional<String> image, String mountPoint, Path record,
            Optional<List<String>> allowlist) {
        String template = image.orElse(AGENT_IMAGE);
        // Planned before the create: a host posture that refuses the allowlist makes no sandbox.
        Optional<SbxEgress.Plan> plan = allowlist.map(hosts -> plan(sandboxName, hosts));
        Path workspace = newWorkspace(record, template, plan);
        SbxCli.Created created;
        try {
            created = cli.create(sandboxName, image, config.cpus(), config.memory(), workspace.toString());
        } catch (RuntimeException failure) {
            deleteWorkspace(workspace);
            throw failure;
        }
        if (created == SbxCli.Created.NAME_TAKEN) {
            // Another process won the race for this name: adopt its sandbox, drop the unused directory.
            deleteWorkspace(workspace);
            SbxListing winner = cli.find(sandboxName).orElseThrow(() -> new SandboxException("backend '" + name()
                    + "': another process created sandbox " + sandboxName + " at the same moment and it is gone "
                    + "again; acquire again"));
            SbxSandbox adopted = warm(winner, template, mountPoint, allowlist);
            checkEgress(adopted);
            return adopted;
        }
        // The create's output is not the id (no source says so): sbx ls names it, as the reference reads it.
        Optional<String> id = cli.find(sandboxName)
                .filter(listing -> listing.workspaces().size() == 1
                        && Path.of(listing.workspaces().get(0)).toAbsolutePath().normalize()
                                .equals(workspace.toAbsolutePath().normalize()))
                .map(SbxListing::id);
        try {
            if (id.isEmpty()) {
                throw new SandboxException("backend '" + name() + "': sbx create " + sandboxName + " succeeded but "
                        + "sbx ls does not list it with workspace " + workspace + "; check the sandbox with 'sbx ls'");
            }
            probe(sandboxName);
            makeMountPoint(sandboxName, mountPoint);
            if (plan.isPresent()) {
                List<String> rules = open(sandboxName, plan.get());
                writeRecord(egressRecord(workspace), new EgressRecord(plan.get(), rules, true).json());
            }
        } catch (RuntimeException failure) {
            try {
                if (id.isPresent() ? disposeInstance(sandboxName, id.get()) : cli.find(sandboxName).isEmpty()) {
                    deleteWorkspace(workspace);
                }
            } catch (RuntimeException cleanup) {
                failure.addSuppressed(cleanup);
            }
            throw failure;
        }
        return new SbxSandbox(this, sandboxName, id.get(), workspace, mountPoint);
    }

    private void deleteWorkspace(Path workspace) {
        deleteTree(workspace);
        deleteTree(imageRecord(workspace));
        deleteTree(egressRecord(workspace));
    }

    private Path newWorkspace(Path record, String template, Optional<SbxEgress.Plan> plan) {
        try {
            Files.createDirectories(config.workspaceRoot());
            if (!Files.isDirectory(record)) {
                try {
                    Files.createDirectory(record, privateDirectory());
                } catch (java.nio.file.FileAlreadyExistsException raced) {
                    // Another process made it first.
                }
            }
            byte[] random = new byte[WORKSPACE_RANDOM_BYTES];
            RANDOM.nextBytes(random);
            Path workspace = Files.createDirectory(record.resolve(WORKSPACE_PREFIX + HexFormat.of().formatHex(random)));
            // Written before the create, so a racing acquire that adopts this sandbox finds it.
            Files.writeString(imageRecord(workspace), template, StandardCharsets.UTF_8);
            if (plan.isPresent()) {
                // The allowlist without rules yet: a racing acquire sees what it was made for, and waits.
                Files.writeString(egressRecord(workspace), new EgressRecord(plan.get(), List.of(), false).json(),
                        StandardCharsets.UTF_8);
            }
            return workspace;
        } catch (IOException e) {
            throw new SandboxException("backend '" + name() + "' could not make a workspace under " + record + ": "
                    + ErrorDetail.of(e) + "; make the workspace root writable or configure another", e);
        }
    }

    private static java.nio.file.attribute.FileAttribute<?>[] privateDirectory() {
        if (!java.nio.file.FileSystems.getDefault().supportedFileAttributeViews().contains("posix")) {
            return new java.nio.file.attribute.FileAttribute<?>[0];
        }
        return new java.nio.file.attribute.FileAttribute<?>[] {
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------"))};
    }

    // ---------------------------------------------------------------- the allowlist

    /**
     * The plan for {@code hosts}: refuses a host posture in the way (governance, secrets, an
     * overlapping global allow) with {@link SbxHostNotConfined} naming the fix. An empty
     * allowlist admits nothing, which the create's deny-all rule already does: no rules.
     */
    private SbxEgress.Plan plan(String sandboxName, List<String> hosts) {
        if (hosts.isEmpty()) {
            return new SbxEgress.Plan(hosts, List.of(), List.of(), Set.of());
        }
        Optional<String> refusal = cli.postureRefusal(hosts, sandboxName);
        if (refusal.isPresent()) {
            throw new SbxHostNotConfined("backend '" + name() + "' cannot give sandbox " + sandboxName + " exactly "
                    + "its allowlist: " + refusal.get());
        }
        try {
            return SbxEgress.plan(hosts, SbxEgress.globalAllows(cli.policyRules(Optional.empty())));
        } catch (SbxEgress.Refused refused) {
            throw new SbxHostNotConfined("backend '" + name() + "' cannot give sandbox " + sandboxName + " exactly "
                    + "its allowlist: " + refused.getMessage());
        }
    }

    /**
     * Sets the plan's rules on a new sandbox, then lifts the create's deny-all (which beat them
     * until then), and returns the sandbox's own rules as sbx lists them afterwards. Rules an
     * earlier sandbox of this name left are removed first; the result must be exactly the plan.
     */
    private List<String> open(String sandboxName, SbxEgress.Plan plan) {
        if (plan.hosts().isEmpty()) {
            return SbxEgress.ownRules(cli.policyRules(Optional.of(sandboxName)), sandboxName);
        }
        TreeSet<String> stale = new TreeSet<>();
        for (SbxEgress.Rule rule : cli.policyRules(Optional.of(sandboxName))) {
            if (rule.ownedBy(sandboxName)) {
                rule.resources().stream().filter(resource -> !resource.equals(SbxEgress.EVERY_HOST)).forEach(stale::add);
            }
        }
        try {
            stale.forEach(SbxEgress::plain);
        } catch (SbxEgress.Refused refused) {
            throw new SbxHostNotConfined("backend '" + name() + "': sandbox " + sandboxName + " has rules left by an "
                    + "earlier sandbox of its name: " + refused.getMessage());
        }
        for (String resource : stale) {
            cli.removeRule(sandboxName, resource);
        }
        if (!plan.denies().isEmpty()) {
            cli.deny(sandboxName, plan.denies());
        }
        cli.allow(sandboxName, plan.allows());
        cli.removeRule(sandboxName, SbxEgress.EVERY_HOST);
        List<SbxEgress.Rule> now = cli.policyRules(Optional.of(sandboxName));
        TreeSet<String> allowed = new TreeSet<>();
        TreeSet<String> denied = new TreeSet<>();
        for (SbxEgress.Rule rule : now) {
            if (rule.ownedBy(sandboxName)) {
                (rule.decision().equals("deny") ? denied : allowed).addAll(rule.resources());
                if (!rule.status().equals("active")) {
                    allowed.add("(an inactive rule)");
                }
            }
        }
        if (!allowed.equals(new TreeSet<>(plan.allows())) || !denied.equals(new TreeSet<>(plan.denies()))) {
            throw new SbxHostNotConfined("backend '" + name() + "': after setting the allowlist of sandbox "
                    + sandboxName + ", sbx lists its own rules as allowing " + GuestText.quote(allowed.toString())
                    + " and denying " + GuestText.quote(denied.toString()) + ", not the plan's "
                    + GuestText.quote(plan.allows().toString()) + " and " + GuestText.quote(plan.denies().toString())
                    + "; another process changed them: acquire again");
        }
        return SbxEgress.ownRules(now, sandboxName);
    }

    /**
     * Before every command of an allowlist sandbox (and at every warm acquire): its own rules are
     * the ones recorded when it opened, no global allow beyond them was added, and governance and
     * stored secrets still leave it exact. Otherwise the sandbox is retired and the call refused.
     */
    void checkEgress(SbxSandbox sandbox) {
        Optional<EgressRecord> egress = EgressRecord.read(egressRecord(sandbox.workspace()));
        if (egress.isEmpty() && !Files.exists(egressRecord(sandbox.workspace()), java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        Optional<String> reason;
        if (egress.isEmpty() || !egress.get().opened()) {
            reason = Optional.of("its egress record beside the workspace is unreadable or incomplete");
        } else if (egress.get().plan().hosts().isEmpty()) {
            return;
        } else {
            SbxEgress.Plan plan = egress.get().plan();
            reason = SbxEgress.drift(plan, egress.get().rules(), cli.policyRules(Optional.of(sandbox.sandboxName())),
                    sandbox.sandboxName()).or(() -> cli.postureRefusal(plan.hosts(), sandbox.sandboxName()));
        }
        if (reason.isPresent()) {
            retire(sandbox);
            throw new SbxHostNotConfined("backend '" + name() + "': sandbox " + sandbox.sandboxName() + " may reach "
                    + "more than its allowlist: " + reason.get() + "; it is retired, and the next acquire replaces "
                    + "it");
        }
    }

    /**
     * Before an allowlist sandbox is removed: its deny-all again (so nothing it ran can widen in
     * between), then every other rule of its own removed. The deny-all stays: a sandbox another
     * process creates under the name at once gets a deny-all of its own, never one lifted by us.
     * Best effort: a failure is logged, and the removal goes on.
     */
    private void sealRules(String sandboxName) {
        try {
            List<SbxEgress.Rule> own = cli.policyRules(Optional.of(sandboxName)).stream()
                    .filter(rule -> rule.ownedBy(sandboxName)).toList();
            boolean sealed = own.stream().anyMatch(rule -> rule.decision().equals("deny")
                    && rule.status().equals("active") && rule.resources().contains(SbxEgress.EVERY_HOST));
            if (!sealed) {
                cli.deny(sandboxName, List.of(SbxEgress.EVERY_HOST));
            }
            TreeSet<String> others = new TreeSet<>();
            own.forEach(rule -> others.addAll(rule.resources()));
            others.remove(SbxEgress.EVERY_HOST);
            for (String resource : others) {
                cli.removeRule(sandboxName, SbxEgress.plain(resource));
            }
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, () -> "backend '" + name() + "': could not remove the policy rules of sandbox "
                    + sandboxName + " (its name's rules stay in sbx policy ls): " + ErrorDetail.of(e));
        }
    }

    /** Whether any workspace of {@code sandboxName} was made for an allowlist. */
    private boolean madeForAnAllowlist(String sandboxName) {
        Path record = config.workspaceRoot().resolve(sandboxName);
        if (!Files.isDirectory(record, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            return false;
        }
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(record, "*" + EGRESS_SUFFIX)) {
            return entries.iterator().hasNext();
        } catch (IOException e) {
            return true;
        }
    }

    private void writeRecord(Path file, String content) {
        Path part = file.resolveSibling(file.getFileName() + ".part");
        try {
            Files.writeString(part, content, StandardCharsets.UTF_8);
            Files.move(part, file, StandardCopyOption.REPLACE_EXISTING,
                    StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new SandboxException("backend '" + name() + "' could not write " + file + ": " + ErrorDetail.of(e)
                    + "; make the workspace root writable", e);
        }
    }

    /**
     * The host-side record of an allowlist sandbox (outside its workspace: the guest never writes it).
     *
     * @param plan   the allowlist and the rules planned for it
     * @param rules  its own rules as sbx listed them once opened (canonical JSON, sorted)
     * @param opened whether the rules were set
     */
    record EgressRecord(SbxEgress.Plan plan, List<String> rules, boolean opened) {

        EgressRecord {
            rules = List.copyOf(rules);
        }

        String json() {
            return "{\"hosts\":" + array(plan.hosts()) + ",\"allows\":" + array(plan.allows()) + ",\"denies\":"
                    + array(plan.denies()) + ",\"globals\":" + array(new TreeSet<>(plan.globals())) + ",\"rules\":"
                    + array(rules) + ",\"opened\":" + opened + "}";
        }

        private static String array(Collection<String> items) {
            StringBuilder out = new StringBuilder("[");
            for (String item : items) {
                out.append(out.length() > 1 ? "," : "").append(Json.quote(item));
            }
            return out.append(']').toString();
        }

        /** The record, or empty when it is absent or unreadable. */
        static Optional<EgressRecord> read(Path file) {
            String text;
            try {
                text = Files.readString(file, StandardCharsets.UTF_8);
            } catch (IOException absent) {
                return Optional.empty();
            }
            try {
                Map<String, Object> fields = Json.parseObject(text);
                Object opened = fields.get("opened");
                if (!(opened instanceof Boolean done)) {
                    return Optional.empty();
                }
                return Optional.of(new EgressRecord(new SbxEgress.Plan(strings(fields, "hosts"),
                        strings(fields, "allows"), strings(fields, "denies"),
                        new HashSet<>(strings(fields, "globals"))), strings(fields, "rules"), done));
            } catch (IllegalArgumentException malformed) {
                return Optional.empty();
            }
        }

        private static List<String> strings(Map<String, Object> fields, String field) {
            if (!(fields.get(field) instanceof List<?> items)) {
                throw new IllegalArgumentException(field);
            }
            List<String> out = new ArrayList<>();
            for (Object item : items) {
                if (!(item instanceof String text)) {
                    throw new IllegalArgumentException(field);
                }
                out.add(text);
            }
            return out;
        }
    }

    /** Reads the two host-wide settings; never writes them. */
    private void checkHost() {
        if (cli.agentForwardingEnabled()) {
            throw new SbxHostNotConfined("backend '" + name() + "': sbx forwards the host's SSH agent into every "
                    + "sandbox (ssh.agentForwardingEnabled is true, the default); run 'sbx settings set "
                    + SbxCli.AGENT_FORWARDING_SETTING + " false' and then 'sbx daemon restart'");
        }
        List<String> servers = cli.mcpServers();
        if (!servers.isEmpty()) {
            throw new SbxHostNotConfined("backend '" + name() + "': MCP servers are registered with sbx " + servers
                    + ", and the host's MCP gateway answers a sandbox even under a deny-all rule; remove them "
                    + "(sbx mcp) so that 'sbx mcp ls' lists none");
        }
    }

    /** The new sandbox's own sh reports missing commands and a forwarded agent socket. */
    private void probe(String sandboxName) {
        SbxReply reply = cli.exec(sandboxName, false, SbxScripts.shell(SbxScripts.PROBE, "sandbox4j-probe", List.of()),
                config.commandTimeout());
        String line = cli.classify(reply, "exec (probe)");
        if (!reply.succeeded() || !reply.stdout().contains(SbxScripts.PROBE_DONE)) {
            throw new SandboxException("backend '" + name() + "' could not check new sandbox " + sandboxName
                    + " (exit " + reply.exitCode() + (line.isEmpty() ? "" : ": " + GuestText.quote(line))
                    + "); its template needs a POSIX sh with " + String.join(" ", SbxScripts.REQUIRED_COMMANDS));
        }
        for (String output : reply.stdout().split("\n")) {
            if (output.startsWith(SbxScripts.AGENT_SOCKET + " ")) {
                throw new SbxHostNotConfined("backend '" + name() + "': new sandbox " + sandboxName + " was given the "
                        + "host's SSH agent (SSH_AUTH_SOCK is set in it): the sbx daemon was not restarted after "
                        + "agent forwarding was turned off; run 'sbx daemon restart'");
            }
            if (output.startsWith(SbxScripts.MISSING) && !output.strip().equals(SbxScripts.MISSING)) {
                throw new SandboxException("backend '" + name() + "': the template of sandbox " + sandboxName
                        + " lacks" + output.substring(SbxScripts.MISSING.length()) + "; use a template with "
                        + String.join(" ", SbxScripts.REQUIRED_COMMANDS));
            }
            if (output.strip().equals(SbxScripts.NO_NAMESPACES)) {
                throw new SandboxException("backend '" + name() + "': in sandbox " + sandboxName + " the template's "
                        + "user cannot make a user and mount namespace (unshare --user --mount --map-root-user), where "
                        + "every command binds its workspace; use a template whose kernel and unshare allow it");
            }
        }
    }

    /** Makes the mount point as root at create: the one root step (no command binds as root). */
    private void makeMountPoint(String sandboxName, String mountPoint) {
        SbxReply reply = cli.exec(sandboxName, true, SbxScripts.shell(SbxScripts.MOUNT_POINT, "sandbox4j-mount-point",
                List.of(mountPoint)), config.commandTimeout());
        if (reply.succeeded()) {
            return;
        }
        String line = cli.classify(reply, "exec (mount point)");
        if (reply.exitCode() == SbxScripts.MOUNT_POINT_TAKEN && line.isEmpty()) {
            throw new SandboxException("backend '" + name() + "' binds the workspace at " + mountPoint + " (the parent "
                    + "of the spec's work dir), but the image already has " + mountPoint + "; choose a work dir whose "
                    + "parent the image lacks, such as " + SandboxSpec.DEFAULT_WORK_DIR);
        }
        throw new SandboxException("backend '" + name() + "' could not make the mount point " + mountPoint + " in "
                + "sandbox " + sandboxName + " (exit " + reply.exitCode() + (line.isEmpty() ? ""
                        : ": " + GuestText.quote(line)) + "; stderr " + GuestText.quote(reply.stderr().strip())
                + "); the template needs mkdir and root through 'sbx exec -u root'");
    }

    /**
     * Kills one call's process group with a second, bounded {@code sbx exec}. When that cannot run,
     * retires the sandbox and returns false.
     */
    boolean killGroup(SbxSandbox sandbox, String callState) {
        return killGroup(sandbox, callState, false);
    }

    /**
     * {@link #killGroup(SbxSandbox, String)}; {@code started} for a started process, whose call
     * state the kill then removes. A sandbox sbx no longer knows has nothing left to kill: it is not
     * retired.
     */
    boolean killGroup(SbxSandbox sandbox, String callState, boolean started) {
        try {
            List<String> parameters = started ? List.of(callState, SbxScripts.FORGET) : List.of(callState);
            SbxReply reply = cli.exec(sandbox.sandboxName(), false, SbxScripts.shell(SbxScripts.KILL, "sandbox4j-kill",
                    parameters), config.execCleanupTimeout());
            if (reply.succeeded() && reply.stdout().contains(SbxScripts.KILL_DONE)) {
                return true;
            }
            if (!reply.succeeded() && SbxReply.errorLineIn(reply.stderr()).orElse("").contains(SbxCli.NOT_FOUND)) {
                // sbx says the sandbox is gone (disposed of, here or elsewhere): nothing of it is left to kill.
                // (Not an empty 'sbx ls': a daemon that lost its engine lists nothing, and that one is retired.)
                return true;
            }
            LOG.log(Level.WARNING, () -> "backend '" + name() + "': the kill in sandbox " + sandbox.sandboxName()
                    + " did not run (exit " + reply.exitCode() + (reply.timedOut() ? ", timed out" : "") + ": "
                    + GuestText.quote(reply.stderr().strip()) + ")");
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, () -> "backend '" + name() + "': the kill in sandbox " + sandbox.sandboxName()
                    + " failed: " + ErrorDetail.of(e));
        }
        retire(sandbox);
        return false;
    }

    /**
     * Sends {@code signal} to a started process's group with a second, bounded {@code sbx exec};
     * false when that could not run.
     */
    boolean signalGroup(SbxSandbox sandbox, String callState, ProcessSignal signal) {
        try {
            SbxReply reply = cli.exec(sandbox.sandboxName(), false, SbxScripts.shell(SbxScripts.SIGNAL,
                    "sandbox4j-signal", List.of(callState, signal.shellName())), config.execCleanupTimeout());
            if (reply.succeeded() && reply.stdout().contains(SbxScripts.SIGNAL_DONE)) {
                return true;
            }
            LOG.log(Level.WARNING, () -> "backend '" + name() + "': the signal in sandbox " + sandbox.sandboxName()
                    + " did not run (exit " + reply.exitCode() + (reply.timedOut() ? ", timed out" : "") + ": "
                    + GuestText.quote(reply.stderr().strip()) + ")");
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, () -> "backend '" + name() + "': the signal in sandbox " + sandbox.sandboxName()
                    + " failed: " + ErrorDetail.of(e));
        }
        return false;
    }

    /** The sbx exec clients of started processes, by sandbox name: a disposal here ends them at once. */
    private final Map<String, Set<Process>> clients = new java.util.concurrent.ConcurrentHashMap<>();

    /** Records the client of a started process in {@code sandboxName}, until {@link #forgetClient}. */
    void holdClient(String sandboxName, Process client) {
        clients.computeIfAbsent(sandboxName, unused -> java.util.concurrent.ConcurrentHashMap.newKeySet()).add(client);
    }

    void forgetClient(String sandboxName, Process client) {
        clients.computeIfPresent(sandboxName, (unused, held) -> {
            held.remove(client);
            return held.isEmpty() ? null : held;
        });
    }

    /**
     * Ends the clients of a sandbox just removed: each handle then sees its leader die by a signal
     * while the sandbox is gone, which it reports as the disposal, whatever sbx does to a session
     * whose sandbox it removed.
     */
    private void endClients(String sandboxName) {
        Set<Process> held = clients.remove(sandboxName);
        if (held != null) {
            held.forEach(client -> {
                client.descendants().forEach(ProcessHandle::destroyForcibly);
                client.destroyForcibly();
            });
        }
    }

    /** Marks the instance retired where every process sharing the workspace root sees it. */
    void retire(SbxSandbox sandbox) {
        sandbox.retire();
        Path file = config.workspaceRoot().resolve(sandbox.sandboxName()).resolve(RETIRED_FILE);
        try {
            Files.createDirectories(file.getParent());
            Files.writeString(file, sandbox.id(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            LOG.log(Level.WARNING, () -> "backend '" + name() + "': could not record the retirement of "
                    + sandbox.sandboxName() + " at " + file + ": " + ErrorDetail.of(e));
        }
        LOG.log(Level.WARNING, () -> "backend '" + name() + "': sandbox " + sandbox.sandboxName() + " is retired; the "
                + "next acquire replaces it");
    }

    boolean isRetired(String sandboxName, String id) {
        Path file = config.workspaceRoot().resolve(sandboxName).resolve(RETIRED_FILE);
        try {
            return Files.readString(file, StandardCharsets.UTF_8).strip().equals(id);
        } catch (NoSuchFileException absent) {
            return false;
        } catch (IOException e) {
            // Unreadable: treat as retired rather than reuse a sandbox that may run a stray command.
            return true;
        }
    }

    SbxCli cli() {
        return cli;
    }

    // ---------------------------------------------------------------- dispose

    /** Sandboxes this process is removing right now. */
    private final Disposals disposals = new Disposals();

    /** Whether {@code sandbox} was disposed of, or is being (here, or by another process as sbx says). */
    boolean wasDisposedOf(SbxSandbox sandbox) {
        return disposals.wasDisposedOf(sandbox.sandboxName(), sandbox::isGone);
    }

    @Override
    public void dispose(SandboxKey key) {
        Objects.requireNonNull(key, "key");
        disposeMatching(names.keyPrefix(key));
    }

    @Override
    public int disposeScope(String scope, String threadId) {
        Objects.requireNonNull(scope, "scope");
        Objects.requireNonNull(threadId, "threadId");
        return disposeMatching(names.conversationPrefix(scope, threadId));
    }

    /**
     * Removes every sandbox whose name starts with {@code prefix}, taken from {@code sbx ls} and
     * from the workspace root (the second record, for a daemon that lost its engine and lists
     * nothing). Host directories are deleted only if they existed before the removal, and only
     * once sbx has answered that the sandbox is gone: a name freed by the removal may be created
     * again by another process at once. A daemon fault leaves everything and is logged as
     * unreachable. Never throws.
     */
    private int disposeMatching(String prefix) {
        int removed = 0;
        try {
            Map<String, List<Path>> before = hostRecords(prefix);
            TreeSet<String> candidates = new TreeSet<>(before.keySet());
            for (SbxListing listing : cli.ls()) {
                if (listing.name().startsWith(prefix)) {
                    candidates.add(listing.name());
                }
            }
            for (String candidate : candidates) {
                try {
                    boolean[] gone = {false};
                    if (madeForAnAllowlist(candidate)) {
                        sealRules(candidate);
                    }
                    // Known before the removal, so an exec it ends says so at once (SandboxDisposed).
                    disposals.removing(candidate, () -> {
                        gone[0] = cli.rm(candidate);
                        if (gone[0]) {
                            endClients(candidate);
                        }
                    });
                    if (gone[0]) {
                        removed++;
                    }
                    deleteAll(before.getOrDefault(candidate, List.of()));
                    deleteIfEmpty(config.workspaceRoot().resolve(candidate));
                } catch (RuntimeException e) {
                    logUnreachable(candidate, e);
                }
            }
        } catch (RuntimeException e) {
            logUnreachable(prefix + "*", e);
        }
        return removed;
    }

    private void logUnreachable(String what, RuntimeException e) {
        LOG.log(Level.WARNING, () -> "backend '" + name() + "': sandbox " + what + " unreachable, left in place (not "
                + "gone): " + ErrorDetail.of(e));
    }

    /**
     * Removes one instance: checks in {@code sbx ls} that {@code name} still has {@code id}, then
     * removes by name ({@code sbx rm} takes only a name).
     *
     * @return true when the instance is gone (removed now, or already gone)
     */
    boolean disposeInstance(String sandboxName, String id) {
        Optional<SbxListing> listing = cli.find(sandboxName);
        if (listing.isEmpty()) {
            return true;
        }
        if (!listing.get().id().equals(id)) {
            return false;
        }
        if (madeForAnAllowlist(sandboxName)) {
            sealRules(sandboxName);
        }
        disposals.removing(sandboxName, () -> {
            cli.rm(sandboxName);
            endClients(sandboxName);
        });
        return true;
    }

    /** The workspace root's records whose names start with {@code prefix}, each with what it holds now. */
    Map<String, List<Path>> hostRecords(String prefix) {
        Map<String, List<Path>> records = new LinkedHashMap<>();
        if (!Files.isDirectory(config.workspaceRoot())) {
            return records;
        }
        try (DirectoryStream<Path> roots = Files.newDirectoryStream(config.workspaceRoot())) {
            for (Path record : roots) {
                String recordName = record.getFileName().toString();
                if (!recordName.startsWith(prefix) || !Files.isDirectory(record,
                        java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                    continue;
                }
                List<Path> held = new ArrayList<>();
                try (DirectoryStream<Path> children = Files.newDirectoryStream(record)) {
                    children.forEach(held::add);
                }
                records.put(recordName, held);
            }
        } catch (IOException e) {
            throw new SandboxException("backend '" + name() + "' could not read its workspace root "
                    + config.workspaceRoot() + ": " + ErrorDetail.of(e), e);
        }
        return records;
    }

    private void deleteAll(List<Path> paths) {
        paths.forEach(this::deleteTree);
    }

    /** Deletes a host tree with core's one rule: never following a link, bounded in depth and time. */
    private void deleteTree(Path root) {
        try {
            TreeRemoval.remove(root, TreeRemoval.Mode.PROCESSES_STOPPED, TreeRemoval.DEFAULT_DEADLINE);
        } catch (IOException | RuntimeException e) {
            LOG.log(Level.WARNING, () -> "backend '" + name() + "': could not delete " + root + ": " + ErrorDetail.of(e));
        }
    }

    private static void deleteIfEmpty(Path directory) {
        try {
            Files.deleteIfExists(directory);
        } catch (DirectoryNotEmptyException recreated) {
            // Another process made a new workspace here after the removal: it is not ours to delete.
        } catch (IOException ignored) {
            // Best effort.
        }
    }

    // ---------------------------------------------------------------- paths

    /** The parent of the work dir, where the workspace is bound; it must not be the root. */
    private String mountPointOf(String workDir) {
        return GuestPaths.parent(GuestPaths.workDirWithItsOwnParent(name(), workDir, List.of()));
    }

    /**
     * On a host whose file system changes names (case-insensitive, as Windows and macOS usually
     * are), refuses a path with a component that exists but is not listed verbatim: the host would
     * act on another name than the guest's.
     */
    void refuseAlteredNames(WorkspaceFiles files, String confined, String mountPoint) {
        if (!aliasingHost()) {
            return;
        }
        refuseAlteredNames(directory -> files.listDir(directory, mountPoint),
                path -> files.stat(path, mountPoint).isPresent(), confined, mountPoint);
    }

    /**
     * The check itself, given how to list a directory (relative entry paths, as
     * {@link WorkspaceFiles#listDir} gives them) and whether a path exists; separate so that a test
     * can play a host that resolves names it does not list.
     */
    static void refuseAlteredNames(java.util.function.Function<String, List<SandboxEntry>> list,
            java.util.function.Predicate<String> exists, String confined, String mountPoint) {
        String below = GuestPaths.relativeTo(confined, mountPoint).orElseThrow();
        if (below.isEmpty()) {
            return;
        }
        String directory = mountPoint;
        for (String component : below.split("/")) {
            List<SandboxEntry> listing;
            try {
                listing = list.apply(directory);
            } catch (SandboxException missing) {
                return;
            }
            String path = directory.equals(mountPoint) ? component : GuestPaths.relativeTo(directory, mountPoint)
                    .orElseThrow() + "/" + component;
            boolean listed = listing.stream().anyMatch(entry -> entry.path().equals(path));
            if (!listed) {
                if (exists.test(directory + "/" + component)) {
                    throw new SandboxPathNotConfined(GuestText.quote(confined) + " names " + GuestText.quote(component)
                            + ", which this host resolves to another name; use the name exactly as listed");
                }
                return;
            }
            Optional<SandboxEntry> entry = listing.stream().filter(e -> e.path().equals(path)).findFirst();
            if (entry.isEmpty() || entry.get().kind() != EntryKind.DIRECTORY) {
                return;
            }
            directory = directory + "/" + component;
        }
    }

    private boolean aliasingHost() {
        Boolean known = aliasingHost;
        if (known != null) {
            return known;
        }
        boolean aliasing = false;
        try {
            Files.createDirectories(config.workspaceRoot());
            Path probe = config.workspaceRoot().resolve(CASE_PROBE);
            Files.deleteIfExists(probe);
            Files.createFile(probe);
            try {
                aliasing = Files.exists(config.workspaceRoot().resolve(CASE_PROBE.toLowerCase(java.util.Locale.ROOT)),
                        java.nio.file.LinkOption.NOFOLLOW_LINKS);
            } finally {
                Files.deleteIfExists(probe);
            }
        } catch (IOException e) {
            aliasing = true;
        }
        aliasingHost = aliasing;
        return aliasing;
    }

    /** How long {@link SbxSandbox#remove} may take; exposed for tests. */
    static Duration removeTimeout() {
        return SbxSandbox.REMOVE_TIMEOUT;
    }
}
