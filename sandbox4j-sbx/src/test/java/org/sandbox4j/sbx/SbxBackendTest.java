package org.sandbox4j.sbx;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sandbox4j.core.Capability;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.Egress;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.Isolation;
import org.sandbox4j.core.OsFamily;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxEgressNotEnforced;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxExecOutputLimitExceeded;
import org.sandbox4j.core.SandboxFileException;
import org.sandbox4j.core.SandboxFileNotFound;
import org.sandbox4j.core.SandboxNotADirectory;
import org.sandbox4j.core.spi.ExecRefusals;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxPathNotConfined;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.SandboxTimeoutException;

/** The backend against the recording fake: every argv it issues, and each rule of the seed. */
class SbxBackendTest {

    private static final SandboxKey KEY = new SandboxKey("scope", "thread", "agent");
    /** The one egress mode the backend declares. */
    private static final SandboxSpec SPEC = spec("kind").build();
    private static final String WORK = SandboxSpec.DEFAULT_WORK_DIR;
    private static final String MOUNT = "/sandbox4j";
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    @TempDir
    Path root;

    private final FakeSbx fake = new FakeSbx();

    private SbxBackend backend() {
        return backend(SbxConfig.builder().workspaceRoot(root).build());
    }

    private SbxBackend backend(SbxConfig config) {
        return new SbxBackend(config, fake);
    }

    private static SandboxSpec.Builder spec(String kind) {
        return SandboxSpec.builder(kind).egress(Egress.DENY_ALL);
    }

    private String name(SbxBackend backend) {
        return backend.sandboxName(KEY, SPEC.kind());
    }

    @Test
    void declaresAMicroVmWithDenyAllAndAllowlistEgressAndTheFileCapabilities() {
        var declarations = backend().declarations();
        assertThat(declarations.isolation()).isEqualTo(Isolation.MICROVM);
        // A real guest has a NIC whose connections end at Docker's proxy: never CLOSED.
        assertThat(declarations.egressModes()).containsExactlyInAnyOrder(Egress.DENY_ALL, Egress.ALLOWLIST);
        assertThat(declarations.osFamilies()).containsExactly(OsFamily.POSIX);
        assertThat(declarations.capabilities()).containsExactlyInAnyOrder(Capability.EXEC, Capability.FILES_IN,
                Capability.FILES_OUT, Capability.FILES_LIST, Capability.FILES_DELETE, Capability.INTERACTIVE_EXEC);
    }

    @Test
    void aColdAcquireIssuesExactlyThePinnedCommands() {
        SbxBackend backend = backend();
        String name = name(backend);
        backend.acquire(KEY, SPEC);
        Path workspace = FakeSbx.workspaceOf(fake.boxes.get(name));
        assertThat(workspace.getParent()).isEqualTo(root.resolve(name));
        assertThat(workspace.getFileName().toString()).matches("ws-[0-9a-f]{16}");
        assertThat(fake.calls).containsExactly(
                List.of("settings", "get", "ssh.agentForwardingEnabled"),
                List.of("mcp", "ls", "--json"),
                List.of("ls", "--json"),
                List.of("create", "shell", "--name", name, "--skills", "off", "--deny-network", "**", "--quiet",
                        workspace.toString()),
                List.of("ls", "--json"),
                List.of("exec", name, "sh", "-c", SbxScripts.PROBE, "sandbox4j-probe"),
                List.of("exec", "-u", "root", name, "sh", "-c", SbxScripts.MOUNT_POINT, "sandbox4j-mount-point", MOUNT));
    }

    @Test
    void aWarmAcquireChecksTheHostAndListsOnly() {
        SbxBackend backend = backend();
        Sandbox first = backend.acquire(KEY, SPEC);
        fake.clearCalls();
        Sandbox second = backend.acquire(KEY, SPEC);
        assertThat(fake.calls).containsExactly(
                List.of("settings", "get", "ssh.agentForwardingEnabled"),
                List.of("mcp", "ls", "--json"),
                List.of("ls", "--json"));
        assertThat(((SbxSandbox) second).id()).isEqualTo(((SbxSandbox) first).id());
    }

    @Test
    void aMissingSbxBinaryNamesTheFix() {
        SbxBackend missing = new SbxBackend(SbxConfig.builder().workspaceRoot(root)
                .sbxPath(root.resolve("no-such-sbx").toString()).build());
        assertThatThrownBy(() -> missing.acquire(KEY, SPEC)).isInstanceOf(SandboxException.class)
                .hasMessageContaining("sbxPath");
        assertThatThrownBy(() -> backend().acquire(KEY, spec("kind").image(" ").build()))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void concurrentAcquiresOfOneKeyAndKindCreateOnce() throws Exception {
        SbxBackend backend = backend();
        List<Thread> threads = new java.util.ArrayList<>();
        java.util.Set<String> ids = java.util.concurrent.ConcurrentHashMap.newKeySet();
        for (int i = 0; i < 8; i++) {
            threads.add(new Thread(() -> ids.add(((SbxSandbox) backend.acquire(KEY, SPEC)).id())));
        }
        threads.forEach(Thread::start);
        for (Thread thread : threads) {
            thread.join();
        }
        assertThat(fake.callsOf("create")).hasSize(1);
        assertThat(ids).hasSize(1);
    }

    @Test
    void theImageIdThenTheImageIsTheTemplateAndCpusAndMemoryArePassed() {
        SbxBackend backend = backend(SbxConfig.builder().workspaceRoot(root).cpus(2).memory("4g").build());
        SandboxSpec spec = spec("kind").image("img").imageId("img@sha256:1").build();
        backend.acquire(KEY, spec);
        List<String> create = fake.callsOf("create").get(0);
        assertThat(create.subList(0, create.size() - 1)).containsExactly("create", "shell", "--name", name(backend),
                "--cpus", "2", "--memory", "4g", "--skills", "off", "--deny-network", "**", "--quiet",
                "--template", "img@sha256:1");
    }

    @Test
    void aWarmAcquireRefusesAChangedImage() {
        SbxBackend backend = backend();
        backend.acquire(KEY, SPEC);
        assertThatThrownBy(() -> backend.acquire(KEY, spec("kind").image("other").build()))
                .isInstanceOf(SandboxException.class).hasMessageContaining(SbxBackend.AGENT_IMAGE)
                .hasMessageContaining("'other'");
        // The image is recorded host-side, beside the workspace: sbx ls names no template field.
        SbxSandbox sandbox = (SbxSandbox) backend.acquire(KEY, SPEC);
        assertThat(sandbox.workspace().resolveSibling(sandbox.workspace().getFileName() + SbxBackend.IMAGE_SUFFIX))
                .hasContent(SbxBackend.AGENT_IMAGE);
    }

    @Test
    void agentForwardingOrAnMcpServerRefusesEveryAcquireWithoutCreating() {
        fake.agentForwarding = true;
        assertThatThrownBy(() -> backend().acquire(KEY, SPEC)).isInstanceOf(SbxHostNotConfined.class)
                .hasMessageContaining("sbx settings set ssh.agentForwardingEnabled false")
                .hasMessageContaining("sbx daemon restart");
        fake.agentForwarding = false;
        fake.mcpServers = List.of("github");
        assertThatThrownBy(() -> backend().acquire(KEY, SPEC)).isInstanceOf(SbxHostNotConfined.class)
                .hasMessageContaining("github");
        assertThat(fake.callsOf("create")).isEmpty();
        assertThat(fake.callsOf("settings")).allSatisfy(args -> assertThat(args).containsExactly("settings", "get",
                "ssh.agentForwardingEnabled"));
    }

    @Test
    void aNewSandboxGivenTheAgentSocketIsRemovedAndRefused() {
        fake.forwardAgent = true;
        SbxBackend backend = backend();
        assertThatThrownBy(() -> backend.acquire(KEY, SPEC)).isInstanceOf(SbxHostNotConfined.class)
                .hasMessageContaining("sbx daemon restart");
        assertThat(fake.boxes).isEmpty();
        assertThat(fake.callsOf("rm")).containsExactly(List.of("rm", "--force", name(backend)));
        assertThat(root.resolve(name(backend))).isEmptyDirectory();
    }

    @Test
    void aTemplateMissingARequiredCommandIsRemovedAndRefused() {
        fake.missingCommands = " setsid";
        assertThatThrownBy(() -> backend().acquire(KEY, SPEC)).isInstanceOf(SandboxException.class)
                .hasMessageContaining("lacks setsid");
        assertThat(fake.boxes).isEmpty();
    }

    @Test
    void aFailedMountPointRemovesTheSandbox() {
        fake.bindFails = true;
        assertThatThrownBy(() -> backend().acquire(KEY, SPEC)).isInstanceOf(SandboxException.class)
                .hasMessageContaining("could not make the mount point");
        assertThat(fake.boxes).isEmpty();
    }

    @Test
    void aLapsedLoginAndALostEngineHaveTheirOwnTypes() {
        fake.loggedOut = true;
        assertThatThrownBy(() -> backend().acquire(KEY, SPEC)).isInstanceOf(SbxLoginRequired.class)
                .hasMessageContaining("sbx login");
        fake.loggedOut = false;
        fake.engineLost = true;
        assertThatThrownBy(() -> backend().acquire(KEY, SPEC)).isInstanceOf(SbxDaemonFault.class)
                .hasMessageContaining("sbx daemon restart");
    }

    @Test
    void onlyDenyAllOrAllowlistEgressAndAWorkDirWithAParentOtherThanRoot() {
        SbxBackend backend = backend();
        for (Egress refused : List.of(Egress.CLOSED, Egress.UNRESTRICTED)) {
            assertThatThrownBy(() -> backend.acquire(KEY, SandboxSpec.builder("kind").egress(refused).build()))
                    .as(refused.wire()).isInstanceOf(SandboxEgressNotEnforced.class)
                    .hasMessageContaining(Egress.DENY_ALL.wire()).hasMessageContaining(Egress.ALLOWLIST.wire());
        }
        assertThatThrownBy(() -> backend.acquire(KEY, spec("kind").workDir("/work").build()))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(fake.calls).isEmpty();
    }

    @Test
    void aRacingCreateAdoptsTheWinnerAndDropsItsOwnDirectory() throws Exception {
        SbxBackend backend = backend();
        String name = name(backend);
        Path winner = Files.createDirectories(root.resolve(name).resolve("ws-winner"));
        fake.onCreate = args -> fake.adopt(name, null, winner);
        SbxSandbox sandbox = (SbxSandbox) backend.acquire(KEY, SPEC);
        assertThat(sandbox.workspace()).isEqualTo(winner);
        try (var children = Files.list(root.resolve(name))) {
            assertThat(children.toList()).containsExactlyInAnyOrder(winner,
                    winner.resolveSibling("ws-winner" + SbxBackend.IMAGE_SUFFIX));
        }
        assertThat(fake.callsOf("exec")).isEmpty();
    }

    @Test
    void execRunsTheArgvThroughTheWrapperWithByteExactStreams() throws Exception {
        Sandbox sandbox = backend().acquire(KEY, SPEC);
        sandbox.writeFile("in.txt", "from the host\n", WORK);
        ExecResult result = sandbox.exec(Command.argv("sh", "-c", "cat in.txt; printf 'e\\n' >&2; exit 7"),
                ExecOptions.in(WORK, TIMEOUT));
        assertThat(result.stdoutText()).isEqualTo("from the host\n");
        assertThat(result.stderrText()).isEqualTo("e\n");
        assertThat(result.exitCode()).isEqualTo(7);
        List<String> exec = fake.calls.get(fake.calls.size() - 1);
        assertThat(exec.subList(0, 8)).containsExactly("exec", name(backend()), "sh", "-c", SbxScripts.WRAPPER,
                "sandbox4j-exec", SbxScripts.WRAPPER, SbxScripts.ENTER);
        assertThat(exec.get(9)).startsWith(SbxScripts.CALL_STATE_PREFIX);
        Path workspace = FakeSbx.workspaceOf(fake.boxes.get(name(backend())));
        assertThat(exec.subList(10, exec.size())).containsExactly(workspace.toString(), MOUNT, WORK, "0", "0",
                SbxScripts.encode("sh"), SbxScripts.encode("-c"),
                SbxScripts.encode("cat in.txt; printf 'e\\n' >&2; exit 7"));
    }

    @Test
    void stdinIsPassedOnlyWithDashI() {
        Sandbox sandbox = backend().acquire(KEY, SPEC);
        sandbox.writeFile("keep", "", WORK);
        ExecResult fed = sandbox.exec(Command.argv("cat"), ExecOptions.in(WORK, TIMEOUT).withStdin(
                "fed".getBytes(StandardCharsets.UTF_8)));
        assertThat(fed.stdoutText()).isEqualTo("fed");
        assertThat(fake.calls.get(fake.calls.size() - 1).subList(0, 2)).containsExactly("exec", "-i");
        sandbox.exec(Command.argv("true"), ExecOptions.in(WORK, TIMEOUT));
        assertThat(fake.calls.get(fake.calls.size() - 1)).doesNotContain("-i");
    }

    @Test
    void aStartedProcessIsAnInteractiveExecOfTheWrapperWithItsBackstopSignalledThroughASecondExec() {
        Sandbox sandbox = backend().acquire(KEY, SPEC);
        fake.clearCalls();
        String state;
        try (org.sandbox4j.core.SandboxProcess cat = sandbox.start(Command.argv("cat"),
                org.sandbox4j.core.ProcessOptions.in(WORK, Duration.ofMillis(90_500)))) {
            List<String> start = fake.calls.get(0);
            // exec -i NAME sh -c WRAPPER $0 WRAPPER enter nonce state workspace mountPoint workDir backstop envs argv
            assertThat(start.subList(0, 3)).containsExactly("exec", "-i", name(backend()));
            state = start.get(10);
            assertThat(state).startsWith(SbxScripts.CALL_STATE_PREFIX);
            assertThat(start.subList(12, start.size())).containsExactly(MOUNT, WORK,
                    Long.toString(91 + SbxSandbox.BACKSTOP_GRACE.toSeconds()), "0", SbxScripts.encode("cat"));
            assertThat(cat.write("ping\n".getBytes(StandardCharsets.UTF_8), TIMEOUT)).isEqualTo(5);
            StringBuilder echoed = new StringBuilder();
            long deadline = System.nanoTime() + TIMEOUT.toNanos();
            while (!echoed.toString().equals("ping\n") && System.nanoTime() < deadline) {
                echoed.append(new String(cat.read(Duration.ofMillis(200)).stdout(), StandardCharsets.UTF_8));
            }
            assertThat(echoed).hasToString("ping\n");
            cat.signal(org.sandbox4j.core.ProcessSignal.TERMINATE);
            assertThat(cat.waitFor(TIMEOUT)).hasValue(128 + 15);
            List<String> signal = fake.callsOf("exec").stream()
                    .filter(call -> call.contains(SbxScripts.SIGNAL)).findFirst().orElseThrow();
            assertThat(signal.subList(signal.size() - 2, signal.size())).containsExactly(state, "TERM");
        }
        // The leader's exit is followed by the kill of what it left, which forgets the call's state.
        List<String> kill = fake.callsOf("exec").stream().filter(call -> call.contains(SbxScripts.KILL))
                .reduce((first, second) -> second).orElseThrow();
        assertThat(kill.subList(kill.size() - 2, kill.size())).containsExactly(state, SbxScripts.FORGET);
    }

    @Test
    void aMissingWorkingDirectoryIsTheTypedRefusalNeverAnExitCode() {
        Sandbox sandbox = backend().acquire(KEY, SPEC);
        String absent = WORK + "/absent";
        assertThatThrownBy(() -> sandbox.exec(Command.argv("true"), ExecOptions.in(absent, TIMEOUT)))
                .isInstanceOf(SandboxFileNotFound.class)
                .hasMessage(ExecRefusals.workingDirectoryMissing(absent).getMessage());
        sandbox.writeFile("a-file", "x".getBytes(StandardCharsets.UTF_8), WORK);
        String file = WORK + "/a-file";
        assertThatThrownBy(() -> sandbox.exec(Command.shell("true"), ExecOptions.in(file, TIMEOUT)))
                .isInstanceOf(SandboxNotADirectory.class)
                .hasMessage(ExecRefusals.workingDirectoryNotADirectory(file).getMessage());
    }

    @Test
    void theWorkDirExistsRightAfterAcquire() {
        Sandbox sandbox = backend().acquire(KEY, SPEC);
        ExecResult result = sandbox.exec(Command.argv("pwd"), ExecOptions.in(WORK, TIMEOUT));
        assertThat(result.exitCode()).isZero();
    }

    @Test
    void sbxsOwnNotFoundIsNeverTheCommandsExitOne() {
        SbxBackend backend = backend();
        Sandbox sandbox = backend.acquire(KEY, SPEC);
        fake.boxes.clear();
        assertThatThrownBy(() -> sandbox.exec(Command.argv("true"), ExecOptions.in(WORK, TIMEOUT)))
                .isInstanceOf(SandboxException.class).hasMessageContaining("no longer exists");
        fake.loggedOut = true;
        assertThatThrownBy(() -> sandbox.exec(Command.argv("true"), ExecOptions.in(WORK, TIMEOUT)))
                .isInstanceOf(SbxLoginRequired.class);
    }

    @Test
    void aBindTheCommandsOwnNamespaceRefusesRunsNothingAndSaysWhy() throws Exception {
        SbxBackend backend = backend();
        SbxSandbox sandbox = (SbxSandbox) backend.acquire(KEY, SPEC);
        Files.createDirectories(sandbox.workspace().resolve("work"));
        fake.unboundExecs = 1;
        fake.clearCalls();
        assertThatThrownBy(() -> sandbox.exec(Command.argv("echo", "ran"), ExecOptions.in(WORK, TIMEOUT)))
                .isInstanceOf(SandboxException.class).hasMessageContaining("could not bind the workspace at " + MOUNT)
                .hasMessageContaining("mount: permission denied").hasMessageContaining("unshare --user --mount");
        // No root step follows: the bind is each command's own, never redone as root.
        assertThat(fake.callsOf("exec")).hasSize(1);
        assertThat(sandbox.exec(Command.argv("echo", "ran"), ExecOptions.in(WORK, TIMEOUT)).stdoutText())
                .isEqualTo("ran\n");
    }

    @Test
    void aTimeoutKillsTheGroupWithASecondExecAndKeepsTheSandbox() throws Exception {
        SbxBackend backend = backend();
        SbxSandbox sandbox = (SbxSandbox) backend.acquire(KEY, SPEC);
        Files.createDirectories(sandbox.workspace().resolve("work"));
        long start = System.nanoTime();
        assertThatThrownBy(() -> sandbox.exec(Command.argv("sleep", "120"), ExecOptions.in(WORK,
                Duration.ofMillis(500)))).isInstanceOf(SandboxTimeoutException.class);
        // A sanity bound, not a timing: the call ended long before the command would have. The kill
        // step scans every host process here (the fake runs it on the host), slow on a loaded machine.
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(60));
        List<List<String>> execs = fake.callsOf("exec");
        List<String> run = execs.get(execs.size() - 2);
        List<String> kill = execs.get(execs.size() - 1);
        assertThat(kill).containsExactly("exec", name(backend), "sh", "-c", SbxScripts.KILL, "sandbox4j-kill",
                run.get(9));
        assertThat(backend.isRetired(name(backend), sandbox.id())).isFalse();
        assertThat(sandbox.exec(Command.argv("true"), ExecOptions.in(WORK, TIMEOUT)).exitCode()).isZero();
    }

    @Test
    void anOutputFloodIsKilledAndRefused() throws Exception {
        SbxSandbox sandbox = (SbxSandbox) backend().acquire(KEY, SPEC);
        Files.createDirectories(sandbox.workspace().resolve("work"));
        assertThatThrownBy(() -> sandbox.exec(Command.argv("sh", "-c", "while :; do echo yyyyyyyyyyyyyyyy; done"),
                ExecOptions.in(WORK, TIMEOUT).withOutputCap(100_000))).isInstanceOf(
                        SandboxExecOutputLimitExceeded.class);
        assertThat(fake.callsOf("exec").get(fake.callsOf("exec").size() - 1)).contains(SbxScripts.KILL);
    }

    @Test
    void aKillThatCannotRunRetiresTheSandboxForEveryProcess() throws Exception {
        SbxBackend first = backend();
        SbxSandbox old = (SbxSandbox) first.acquire(KEY, SPEC);
        Files.createDirectories(old.workspace().resolve("work"));
        fake.killFails = true;
        assertThatThrownBy(() -> old.exec(Command.argv("sleep", "30"), ExecOptions.in(WORK, Duration.ofMillis(300))))
                .isInstanceOf(SandboxTimeoutException.class).hasMessageContaining("retired");
        Path retired = root.resolve(name(first)).resolve(SbxBackend.RETIRED_FILE);
        assertThat(retired).hasContent(old.id());
        assertThatThrownBy(() -> old.stat("x", WORK)).hasMessageContaining("retired");

        // A second instance (another process, or after a restart) sees the record and replaces it.
        fake.killFails = false;
        SbxBackend second = backend();
        SbxSandbox other = new SbxSandbox(second, name(second), old.id(), old.workspace(), MOUNT);
        assertThatThrownBy(() -> other.exec(Command.argv("true"), ExecOptions.in(WORK, TIMEOUT)))
                .hasMessageContaining("retired");
        fake.clearCalls();
        SbxSandbox fresh = (SbxSandbox) second.acquire(KEY, SPEC);
        assertThat(fresh.id()).isNotEqualTo(old.id());
        assertThat(fake.callsOf("rm")).containsExactly(List.of("rm", "--force", name(first)));
        assertThat(retired).doesNotExist();
        assertThat(old.workspace()).doesNotExist();
        assertThat(fresh.exec(Command.argv("true"), ExecOptions.in("/", TIMEOUT)).exitCode()).isZero();
    }

    @Test
    void fileMethodsReachOnlyTheWorkspacesMountPoint() {
        Sandbox sandbox = backend().acquire(KEY, SPEC);
        assertThatThrownBy(() -> sandbox.stat("/etc/passwd", "/")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> sandbox.writeFile("/tmp/x", "x", "/tmp")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> sandbox.stat("../../etc", WORK)).isInstanceOf(SandboxPathNotConfined.class);
        sandbox.writeFile("a/b.txt", "hi", WORK);
        assertThat(sandbox.readFile("a/b.txt", WORK, 10)).isEqualTo("hi".getBytes(StandardCharsets.UTF_8));
        assertThat(sandbox.readFile("/sandbox4j/work/a/b.txt", MOUNT, 10)).hasSize(2);
        assertThat(sandbox.listDir("a", WORK)).extracting(entry -> entry.path()).containsExactly("a/b.txt");
    }

    @Test
    void removeChecksHostSideThenRemovesInTheGuest() throws Exception {
        SbxBackend backend = backend();
        SbxSandbox sandbox = (SbxSandbox) backend.acquire(KEY, SPEC);
        sandbox.writeFile("d/f", "x", WORK);
        assertThatThrownBy(() -> sandbox.remove("d", WORK, false)).isInstanceOf(SandboxFileException.class);
        fake.clearCalls();
        sandbox.remove("d/f", WORK, false);
        assertThat(sandbox.stat("d/f", WORK)).isEmpty();
        List<String> rm = fake.callsOf("exec").get(0);
        assertThat(rm.subList(10, rm.size())).containsExactly(sandbox.workspace().toString(), MOUNT, "/", "0", "0",
                SbxScripts.encode("rm"),
                SbxScripts.encode("-f"), SbxScripts.encode("--"), SbxScripts.encode(WORK + "/d/f"));
        sandbox.remove("d", WORK, true);
        assertThat(sandbox.stat("d", WORK)).isEmpty();
        sandbox.remove("never-there", WORK, false);
        Files.createSymbolicLink(sandbox.workspace().resolve("work").resolve("link"), Path.of("/etc"));
        fake.clearCalls();
        assertThatThrownBy(() -> sandbox.remove("link/passwd", WORK, false)).isInstanceOf(SandboxPathNotConfined.class);
        assertThatThrownBy(() -> sandbox.remove(".", WORK, true)).isInstanceOf(SandboxPathNotConfined.class);
        assertThat(fake.callsOf("exec")).isEmpty();
    }

    @Test
    void hostWritesAreHandedToTheWorkspacesOwnerWithoutFollowingLinks() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue("root".equals(System.getProperty("user.name")),
                "changing an owner needs root");
        SbxSandbox sandbox = (SbxSandbox) backend().acquire(KEY, SPEC);
        var guest = root.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("12345");
        Files.setOwner(sandbox.workspace(), guest);
        Path outside = Files.writeString(root.resolve("outside"), "host");
        Files.createDirectories(sandbox.workspace().resolve("work"));
        Files.createSymbolicLink(sandbox.workspace().resolve("work").resolve("link"), outside);
        sandbox.writeFile("d/f", "x", WORK);
        assertThat(Files.getOwner(sandbox.workspace().resolve("work/d/f"))).isEqualTo(guest);
        assertThat(Files.getOwner(sandbox.workspace().resolve("work/d"))).isEqualTo(guest);
        assertThat(Files.getOwner(outside)).isNotEqualTo(guest);
    }

    @Test
    void disposeDeletesOnlyTheDirectoriesThatExistedBeforeTheRemoval() throws Exception {
        SbxBackend backend = backend();
        SbxSandbox sandbox = (SbxSandbox) backend.acquire(KEY, SPEC);
        String name = name(backend);
        Path recreated = root.resolve(name).resolve("ws-recreated");
        // Another process creates the freed name again the moment sbx removes it.
        fake.onRm = removed -> {
            try {
                Files.createDirectories(recreated);
            } catch (java.io.IOException e) {
                throw new IllegalStateException(e);
            }
        };
        assertThat(backend.disposeScope("scope", "thread")).isEqualTo(1);
        assertThat(sandbox.workspace()).doesNotExist();
        assertThat(recreated).isDirectory();
        assertThat(fake.callsOf("rm")).containsExactly(List.of("rm", "--force", name));
    }

    @Test
    void disposeFindsSandboxesFromTheWorkspaceDirectoriesToo() throws Exception {
        SbxBackend backend = backend();
        String orphan = backend.sandboxName(new SandboxKey("scope", "thread", "other"), "k");
        Files.createDirectories(root.resolve(orphan).resolve("ws-0"));
        fake.adopt(orphan + "x", null, root.resolve("elsewhere"));
        // Only the listed one existed in sbx; the directory-only name is removed from the host record.
        assertThat(backend.disposeScope("scope", "thread")).isEqualTo(1);
        assertThat(fake.callsOf("rm")).containsExactly(List.of("rm", "--force", orphan), List.of("rm", "--force",
                orphan + "x"));
        assertThat(root.resolve(orphan)).doesNotExist();
    }

    @Test
    void aLostEngineIsReportedUnreachableNeverGone() throws Exception {
        SbxBackend backend = backend();
        SbxSandbox sandbox = (SbxSandbox) backend.acquire(KEY, SPEC);
        fake.engineLost = true;
        assertThat(backend.disposeScope("scope", "thread")).isZero();
        backend.dispose(KEY);
        assertThat(sandbox.workspace()).isDirectory();
        assertThat(fake.callsOf("rm")).isNotEmpty();
        fake.loggedOut = true;
        assertThat(backend.disposeScope("scope", "thread")).isZero();
        assertThat(sandbox.workspace()).isDirectory();
    }

    @Test
    void disposeOfOneKeyLeavesTheConversationsOtherAgents() {
        SbxBackend backend = backend();
        SandboxKey other = new SandboxKey("scope", "thread", "other-agent");
        backend.acquire(KEY, SPEC);
        backend.acquire(KEY, spec("second-kind").build());
        backend.acquire(other, SPEC);
        backend.dispose(KEY);
        assertThat(fake.boxes.keySet()).containsExactly(backend.sandboxName(other, SPEC.kind()));
        assertThat(backend.disposeScope("scope", "thread")).isEqualTo(1);
        assertThat(fake.boxes).isEmpty();
    }

    @Test
    void sbxGetsTheConfiguredEnvironmentAndNeverTelemetry() {
        SbxConfig config = SbxConfig.builder().workspaceRoot(root).environment("SBX_EMULATOR_HOME", "/x").build();
        assertThat(config.environment()).containsEntry("SBX_EMULATOR_HOME", "/x").containsEntry("SBX_NO_TELEMETRY",
                "1");
        assertThat(SbxConfig.builder().build().workspaceRoot().toString()).doesNotStartWith(
                System.getProperty("java.io.tmpdir"));
        assertThat(SbxConfig.builder().build().execCleanupTimeout()).isEqualTo(Duration.ofSeconds(10));
    }

    @Test
    void aSingleInstanceDisposeChecksTheIdInLsThenRemovesByName() {
        SbxBackend backend = backend();
        SbxSandbox sandbox = (SbxSandbox) backend.acquire(KEY, SPEC);
        String name = name(backend);
        // Another process replaced the sandbox under the same name: the old instance's dispose leaves it.
        fake.boxes.remove(name);
        FakeSbx.Box replacement = fake.adopt(name, null, sandbox.workspace());
        fake.clearCalls();
        assertThat(backend.disposeInstance(name, sandbox.id())).isFalse();
        assertThat(fake.callsOf("rm")).isEmpty();
        assertThat(fake.callsOf("ls")).isNotEmpty();
        assertThat(backend.disposeInstance(name, replacement.id)).isTrue();
        assertThat(fake.callsOf("rm")).containsExactly(List.of("rm", "--force", name));
        fake.clearCalls();
        assertThat(backend.disposeInstance(name, replacement.id)).isTrue();
        assertThat(fake.callsOf("rm")).isEmpty();
    }

    /**
     * A host that changes names (case-insensitive, as Windows and macOS usually are) resolves a
     * name it does not list verbatim; such a name is refused. This kernel has no case-folding file
     * system to make one for real, so the host is played by the listing and the existence check.
     */
    @Test
    void aNameTheHostResolvesButDoesNotListVerbatimIsRefused() {
        java.util.Map<String, List<org.sandbox4j.core.SandboxEntry>> listings = java.util.Map.of(
                MOUNT, List.of(org.sandbox4j.core.SandboxEntry.directory("work")),
                WORK, List.of(org.sandbox4j.core.SandboxEntry.file("work/Readme.md", 1)));
        java.util.Set<String> caseInsensitive = java.util.Set.of(WORK + "/readme.md", WORK + "/README.md",
                WORK + "/Readme.md", MOUNT + "/work", MOUNT + "/WORK");
        java.util.function.Function<String, List<org.sandbox4j.core.SandboxEntry>> list = directory -> {
            List<org.sandbox4j.core.SandboxEntry> entries = listings.get(directory);
            if (entries == null) {
                throw new SandboxFileException(directory + " is not there");
            }
            return entries;
        };
        assertThatThrownBy(() -> SbxBackend.refuseAlteredNames(list, caseInsensitive::contains, WORK + "/README.md",
                MOUNT)).isInstanceOf(SandboxPathNotConfined.class).hasMessageContaining("README.md");
        assertThatThrownBy(() -> SbxBackend.refuseAlteredNames(list, caseInsensitive::contains,
                MOUNT + "/WORK/Readme.md", MOUNT)).isInstanceOf(SandboxPathNotConfined.class);
        SbxBackend.refuseAlteredNames(list, caseInsensitive::contains, WORK + "/Readme.md", MOUNT);
        SbxBackend.refuseAlteredNames(list, caseInsensitive::contains, WORK + "/new.txt", MOUNT);
        SbxBackend.refuseAlteredNames(list, caseInsensitive::contains, MOUNT, MOUNT);
    }

    /** The seed's per-OS workspace roots, never the temporary directory (os.name played, then restored). */
    @Test
    void theDefaultWorkspaceRootIsThePerUserStateDirectoryOfEachOs() {
        String os = System.getProperty("os.name");
        Path home = Path.of(System.getProperty("user.home"));
        try {
            System.setProperty("os.name", "Mac OS X");
            assertThat(SbxConfig.defaultWorkspaceRoot()).isEqualTo(home.resolve("Library/Application Support/sandbox4j-sbx"));
            System.setProperty("os.name", "Windows 11");
            String local = System.getenv("LOCALAPPDATA");
            Path base = local == null || local.isBlank() ? home.resolve("AppData").resolve("Local") : Path.of(local);
            assertThat(SbxConfig.defaultWorkspaceRoot()).isEqualTo(base.resolve("sandbox4j-sbx").resolve("workspaces"));
            System.setProperty("os.name", "Linux");
            String xdg = System.getenv("XDG_STATE_HOME");
            Path state = xdg == null || xdg.isBlank() ? home.resolve(".local/state") : Path.of(xdg);
            assertThat(SbxConfig.defaultWorkspaceRoot()).isEqualTo(state.resolve("sandbox4j-sbx/workspaces"))
                    .satisfies(root -> assertThat(root.startsWith(Path.of(System.getProperty("java.io.tmpdir"))))
                            .isFalse());
        } finally {
            System.setProperty("os.name", os);
        }
    }

    // ---------------------------------------------------------------- the allowlist

    private static SandboxSpec allowlist(String... hosts) {
        return SandboxSpec.builder("kind").egress(Egress.ALLOWLIST).egressAllow(hosts).build();
    }

    private static ExecResult run(Sandbox sandbox) {
        return sandbox.exec(Command.argv("true"), ExecOptions.in(MOUNT, TIMEOUT));
    }

    @Test
    void anAllowlistGetsRulesOfItsOwnDenyingEveryDisjointGlobalAllowAndWidensNoOtherSandbox() {
        fake.addRule("global", "allow", "npmjs.org", "pypi.org:443");
        SbxBackend backend = backend();
        String name = name(backend);
        backend.acquire(KEY, allowlist("pypi.org", "*.docs.io"));
        List<List<String>> policy = fake.callsOf("policy");
        assertThat(policy).containsSubsequence(
                List.of("policy", "check", "network", "--json", "docs.io"),
                List.of("policy", "ls", "--json"),
                List.of("policy", "ls", name, "--json"),
                List.of("policy", "deny", "network", "--sandbox", name, "--protocol", "tcp,udp", "npmjs.org,docs.io"),
                List.of("policy", "allow", "network", "--sandbox", name, "**.docs.io,pypi.org"),
                List.of("policy", "rm", "network", "--sandbox", name, "--resource", "**", "--force"),
                List.of("policy", "ls", name, "--json"));
        assertThat(fake.calls).containsSubsequence(List.of("secret", "ls", "--json"), fake.callsOf("create").get(0),
                List.of("policy", "allow", "network", "--sandbox", name, "**.docs.io,pypi.org"));
        // Planned before the create; the create's deny-all lifted only once the plan's rules are set.
        assertThat(fake.resources("sandbox:" + name, "allow")).containsExactly("**.docs.io", "pypi.org");
        assertThat(fake.resources("sandbox:" + name, "deny")).containsExactly("docs.io", "npmjs.org");
        // No global rule is touched, and a deny-all sandbox beside it keeps its own deny-all.
        backend.acquire(KEY, spec("other").build());
        assertThat(fake.resources("global", "allow")).containsExactly("npmjs.org", "pypi.org:443");
        assertThat(fake.resources("sandbox:" + backend.sandboxName(KEY, "other"), "deny")).containsExactly("**");
        assertThat(fake.resources("sandbox:" + backend.sandboxName(KEY, "other"), "allow")).isEmpty();
    }

    @Test
    void theAllowlistIsRecordedBesideTheWorkspaceAndAWarmAcquireNeverChangesIt() throws Exception {
        SbxBackend backend = backend();
        String name = name(backend);
        Sandbox first = backend.acquire(KEY, allowlist("pypi.org"));
        try (var records = Files.list(root.resolve(name))) {
            Path record = records.filter(path -> path.toString().endsWith(SbxBackend.EGRESS_SUFFIX)).findFirst()
                    .orElseThrow();
            assertThat(Files.readString(record)).contains("\"hosts\":[\"pypi.org\"]").contains("\"opened\":true");
        }
        fake.clearCalls();
        Sandbox again = backend.acquire(KEY, allowlist("PYPI.org"));
        assertThat(again.toString()).isNotNull();
        assertThat(fake.callsOf("create")).isEmpty();
        // The warm acquire checked for drift.
        assertThat(fake.callsOf("policy")).contains(List.of("policy", "ls", name, "--json"));
        assertThatThrownBy(() -> backend.acquire(KEY, allowlist("npmjs.org"))).isInstanceOf(SandboxException.class)
                .hasMessageContaining("never changes its egress");
        assertThatThrownBy(() -> backend.acquire(KEY, SPEC)).isInstanceOf(SandboxException.class)
                .hasMessageContaining("never changes its egress");
        assertThat(run(first).exitCode()).isZero();
    }

    @Test
    void aDenyAllSandboxIsNeverReusedForAnAllowlist() {
        SbxBackend backend = backend();
        backend.acquire(KEY, SPEC);
        assertThatThrownBy(() -> backend.acquire(KEY, allowlist("pypi.org"))).isInstanceOf(SandboxException.class)
                .hasMessageContaining("never changes its egress");
        assertThat(fake.callsOf("policy")).isEmpty();
    }

    @Test
    void aHostPostureThatMakesTheAllowlistInexactIsRefusedBeforeAnySandboxIsMade() {
        fake.addRule("global", "allow", "**.github.com");
        assertThatThrownBy(() -> backend().acquire(KEY, allowlist("api.github.com")))
                .isInstanceOf(SbxHostNotConfined.class).hasMessageContaining("'**.github.com'")
                .hasMessageContaining("narrow or remove the global rule");
        fake.rules.clear();
        fake.governed = true;
        assertThatThrownBy(() -> backend().acquire(KEY, allowlist("pypi.org")))
                .isInstanceOf(SbxHostNotConfined.class).hasMessageContaining("governance");
        fake.governed = false;
        fake.secrets = "{\"secrets\":[{\"name\":\"github\",\"scope\":\"global\"}],\"env_only_count\":0}";
        assertThatThrownBy(() -> backend().acquire(KEY, allowlist("pypi.org")))
                .isInstanceOf(SbxHostNotConfined.class).hasMessageContaining("sbx secret rm");
        assertThatThrownBy(() -> backend().acquire(KEY, allowlist("pypi.org:443")))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(fake.callsOf("create")).isEmpty();
        assertThat(fake.boxes).isEmpty();
    }

    @Test
    void aGlobalAllowAddedLaterRetiresTheSandboxBeforeItsNextCommand() {
        SbxBackend backend = backend();
        String name = name(backend);
        Sandbox sandbox = backend.acquire(KEY, allowlist("pypi.org"));
        assertThat(run(sandbox).exitCode()).isZero();
        fake.addRule("global", "allow", "evil.com");
        int streamed = fake.callsOf("exec").size();
        assertThatThrownBy(() -> run(sandbox)).isInstanceOf(SbxHostNotConfined.class)
                .hasMessageContaining("'evil.com'").hasMessageContaining("retired");
        // Refused before the command was sent.
        assertThat(fake.callsOf("exec")).hasSize(streamed);
        String id = fake.boxes.get(name).id;
        assertThat(backend.isRetired(name, id)).isTrue();
        // The next acquire replaces it, and the replacement denies the new global allow.
        backend.acquire(KEY, allowlist("pypi.org"));
        assertThat(fake.boxes.get(name).id).isNotEqualTo(id);
        assertThat(fake.resources("sandbox:" + name, "deny")).containsExactly("evil.com");
    }

    @Test
    void aChangeToTheSandboxsOwnRulesRetiresItBeforeItsNextCommand() {
        SbxBackend backend = backend();
        String name = name(backend);
        Sandbox sandbox = backend.acquire(KEY, allowlist("pypi.org"));
        fake.addRule("sandbox:" + name, "allow", "extra.example.com");
        assertThatThrownBy(() -> run(sandbox)).isInstanceOf(SbxHostNotConfined.class)
                .hasMessageContaining("own rules were changed");
        fake.secrets = "{\"env_only_count\":1}";
        assertThatThrownBy(() -> run(sandbox)).isInstanceOf(SandboxException.class).hasMessageContaining("retired");
    }

    @Test
    void disposalSealsTheSandboxThenRemovesItsOtherRulesAndLeavesEveryOtherRule() {
        fake.addRule("global", "allow", "npmjs.org");
        SbxBackend backend = backend();
        String name = name(backend);
        backend.acquire(KEY, allowlist("pypi.org"));
        backend.acquire(KEY, spec("other").build());
        fake.clearCalls();
        backend.dispose(KEY);
        assertThat(fake.resources("sandbox:" + name, "allow")).isEmpty();
        // The deny-all stays, so a sandbox another process makes under the name at once is never widened.
        assertThat(fake.resources("sandbox:" + name, "deny")).containsExactly("**");
        assertThat(fake.resources("global", "allow")).containsExactly("npmjs.org");
        assertThat(fake.calls).containsSubsequence(
                List.of("policy", "deny", "network", "--sandbox", name, "--protocol", "tcp,udp", "**"),
                List.of("policy", "rm", "network", "--sandbox", name, "--resource", "npmjs.org", "--force"),
                List.of("rm", "--force", name));
        // The deny-all sandbox's disposal issues no policy command.
        assertThat(fake.callsOf("policy")).allMatch(args -> args.contains(name));
    }

    @Test
    void rulesAnEarlierSandboxOfTheNameLeftAreRemovedBeforeTheAllowlistOpens() {
        SbxBackend backend = backend();
        String name = name(backend);
        fake.addRule("sandbox:" + name, "allow", "stale.example.com");
        backend.acquire(KEY, allowlist("pypi.org"));
        assertThat(fake.resources("sandbox:" + name, "allow")).containsExactly("pypi.org");
        assertThat(fake.resources("sandbox:" + name, "deny")).isEmpty();
    }
}
