package org.sandbox4j.local;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.sandbox4j.core.BackendDeclarations;
import org.sandbox4j.core.Capability;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.Egress;
import org.sandbox4j.core.spi.EgressRefusals;
import org.sandbox4j.core.spi.ErrorDetail;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.spi.GuestPaths;
import org.sandbox4j.core.Isolation;
import org.sandbox4j.core.spi.KeyDigest;
import org.sandbox4j.core.OsFamily;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.spi.GuestEnvironment;
import org.sandbox4j.core.SandboxImageNotUsable;

/**
 * The honest fallback for hosts without namespaces (macOS, locked-down containers, hosts without
 * bwrap): each command runs as an ordinary host process, as the user running the JVM, in its own
 * session and process group, and a timeout kills the whole group. Declares
 * {@link Isolation#OS_PROCESS}, so a router refuses it at the default floor: a host must lower
 * the floor to {@code os_process} on purpose.
 *
 * <p><b>What it does not isolate.</b> The guest shares the host's kernel, file system, network,
 * users and processes. It can read and write everything the JVM's user can, reach any address,
 * and see and signal the user's other processes. A timeout kills the command's process group and
 * then, on Linux, every process still carrying the exec's marker variable (so {@code setsid}
 * children and double forks go too); a process that both leaves the group and clears its
 * environment outlives it. The egress
 * mode is therefore {@link Egress#UNRESTRICTED} only. What it does give: a private workspace per
 * sandbox under the state root, file methods confined to it that never follow a link, a clean
 * environment (no host variable leaks), the memory/process/CPU limits of {@link LocalLimits}
 * where the host lets it apply them, and the same lifecycle as {@link BubblewrapBackend}.
 *
 * <p><b>Work dirs are relocated.</b> Two sandboxes cannot own one host path, so each sandbox's
 * work dir is {@code <workspace>/<last component of the spec's work dir>} on the host;
 * {@link Sandbox#relocatedWorkDir()} returns it, and callers pass
 * {@link SandboxSpec#workDirIn(Sandbox)} to file methods and exec.
 */
public final class ProcessBackend extends LocalBackend {

    /** The backend's name unless the builder gives another. */
    public static final String DEFAULT_NAME = "process";

    static final String TYPE = "process";
    private static final String TMP = "tmp";
    private static final BackendDeclarations DECLARATIONS = BackendDeclarations.builder(Isolation.OS_PROCESS)
            .capabilities(Capability.EXEC, Capability.FILES_IN, Capability.FILES_OUT, Capability.FILES_LIST,
                    Capability.FILES_DELETE, Capability.INTERACTIVE_EXEC)
            .egressModes(Egress.UNRESTRICTED)
            .osFamilies(OsFamily.POSIX)
            .build();

    private final Path setsid;
    private final Path kill;
    private final LocalSandboxes sandboxes;

    private ProcessBackend(Builder builder) {
        super(builder.name);
        this.setsid = HostPrograms.find("setsid").orElseThrow(() -> new SandboxException("backend '" + name
                + "' needs setsid(1) to give each command its own process group (util-linux on Linux: apt-get "
                + "install util-linux); without it a timeout could not kill what the command started"));
        this.kill = HostPrograms.find("kill").orElseThrow(() -> new SandboxException("backend '" + name
                + "' needs kill(1) to end a command's process group (procps on Linux)"));
        LocalStore store = LocalStore.open(builder.stateRoot, TYPE, name);
        ResourceLimiter limiter = ResourceLimiter.detect(builder.cgroupRoot, builder.limits,
                ResourceLimiter.Programs.fromPath(), ResourceLimiter.Launches.ALONE, store.hostChecks());
        // Disposal ends whatever the sandbox still runs, as removing a container would.
        this.sandboxes = new LocalSandboxes(store, limiter, builder.lease, name,
                id -> ExecMarker.forSandbox(id).killAll());
        sandboxes.reapAbandoned();
    }

    public static Builder builder() {
        return new Builder();
    }

    @Override
    public BackendDeclarations declarations() {
        return DECLARATIONS;
    }

    /** {@code doctor}-style lines: what this backend is, how it limits, and what it does not isolate. */
    public List<String> diagnostics() {
        return List.of(
                "backend: " + name + " (" + TYPE + ", isolation " + DECLARATIONS.isolation().wire() + ")",
                "isolation: none beyond an OS process: the guest shares this host's files, network, users and "
                        + "processes; a router admits it only below the default floor",
                "process groups: " + setsid + " starts each command, " + kill + " ends its group",
                "limits: " + sandboxes.limiter().describe(),
                "storage: not bounded: the guest writes wherever this user may on this host's file systems",
                "state: " + sandboxes.store().root());
    }

    @Override
    public Sandbox acquire(SandboxKey key, SandboxSpec spec) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(spec, "spec");
        String workDirName = GuestPaths.fileName(GuestPaths.absoluteWorkDir(name, spec.workDir()));
        if (workDirName.isEmpty()) {
            throw new IllegalArgumentException("backend '" + name + "' needs a work dir below the root, not "
                    + spec.workDir() + "; use " + SandboxSpec.DEFAULT_WORK_DIR);
        }
        if (spec.egress() != Egress.UNRESTRICTED) {
            throw EgressRefusals.modeNotEnforced(name, spec.egress(), "its commands use the host's network as they "
                    + "are (a backend that isolates the network, bubblewrap, enforces 'closed' and 'allowlist')",
                    List.of(Egress.UNRESTRICTED));
        }
        Optional<String> image = spec.imageId().or(spec::image);
        if (image.isPresent()) {
            throw new SandboxImageNotUsable("backend '" + name + "' cannot run the image '" + image.get() + "': it "
                    + "runs commands on this host as they are; drop the image or use a container backend");
        }
        String fingerprint = KeyDigest.ofParts(List.of("egress=" + spec.egress().wire()));
        String id = SandboxRecord.idOf(TYPE, key, spec.kind(), fingerprint);
        Path directory = sandboxes.acquire(id, key, spec.kind(), fingerprint, (sandbox, made) -> {
            if (made) {
                Files.createDirectories(sandbox.resolve(LocalStore.WORKSPACE).resolve(workDirName));
            }
        });
        try {
            Files.createDirectories(directory.resolve(TMP));
            Path workspace = directory.resolve(LocalStore.WORKSPACE).toRealPath(LinkOption.NOFOLLOW_LINKS);
            return new ProcessSandbox(this, id, directory, workspace, workspace.resolve(workDirName).toString(), spec);
        } catch (IOException e) {
            throw new SandboxException("backend '" + name + "' could not prepare the sandbox under " + directory
                    + ": " + ErrorDetail.of(e), e);
        }
    }

    // ---------------------------------------------------------------- what a sandbox asks of its backend

    /**
     * The host argv for {@code command}: limits launcher, a new session, then the command behind
     * the shell that reports to {@code report} that the launchers before it did their part.
     */
    List<String> commandLine(String id, Command command, Path report) {
        List<String> argv = new ArrayList<>(sandboxes.launchPrefix(id, List.of()));
        argv.add(setsid.toString());
        argv.add("--");
        argv.addAll(GuestCommand.reportingStart(command, report));
        LaunchEncoding.requireEncodable(argv, name);
        return argv;
    }

    /** The environment a command starts from: fixed variables, the sandbox's own HOME and TMPDIR, the caller's. */
    Map<String, String> environment(Path directory, Path workspace, ExecOptions options) {
        Map<String, String> environment = new LinkedHashMap<>(GuestEnvironment.WITH_SYSTEM_PATH);
        environment.put("HOME", workspace.toString());
        environment.put("TMPDIR", directory.resolve(TMP).toString());
        environment.put("USER", System.getProperty("user.name"));
        environment.put("LOGNAME", System.getProperty("user.name"));
        environment.putAll(options.environment());
        LaunchEncoding.requireEncodable(List.copyOf(environment.values()), name);
        return environment;
    }

    /**
     * Kills the command's whole process group (its session leader's pid is the group id), the
     * leader, and then whatever still carries the exec's marker (children that left the group).
     */
    void killTree(Process process, ExecMarker marker) {
        killGroup(process);
        marker.killAll();
    }

    private void killGroup(Process process) {
        try {
            Process killer = new ProcessBuilder(kill.toString(), "-KILL", "--", "-" + process.pid())
                    .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            killer.waitFor();
        } catch (IOException e) {
            // The leader is still killed below; what it started may outlive it, and the log says so.
            System.getLogger(ProcessBackend.class.getName()).log(System.Logger.Level.WARNING, () -> "backend '"
                    + name + "' could not kill the process group " + process.pid() + ": " + ErrorDetail.of(e));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        // Through its handle: destroying the Process would close its streams, which still hold the output's tail.
        process.toHandle().destroyForcibly();
    }

    @Override
    LocalSandboxes sandboxes() {
        return sandboxes;
    }

    /** Configures a {@link ProcessBackend}; every setting has a default (its name: {@value #DEFAULT_NAME}). */
    public static final class Builder extends LocalBackendBuilder<Builder> {

        private Builder() {
            super(DEFAULT_NAME);
        }

        @Override
        Builder self() {
            return this;
        }

        /** @throws SandboxException naming what is missing (setsid, a writable state root) */
        public ProcessBackend build() {
            return new ProcessBackend(this);
        }
    }
}
