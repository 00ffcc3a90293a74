package org.sandbox4j.testkit.tck.reference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.EntryKind;
import org.sandbox4j.core.Egress;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.Isolation;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.core.SandboxEntry;
import org.sandbox4j.core.SandboxExecOutputLimitExceeded;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxFileException;
import org.sandbox4j.core.SandboxFileNotFound;
import org.sandbox4j.core.SandboxInterrupted;
import org.sandbox4j.core.SandboxIsADirectory;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxNotADirectory;
import org.sandbox4j.core.SandboxNotARegularFile;
import org.sandbox4j.core.SandboxPathNotConfined;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.SandboxTimeoutException;
import org.sandbox4j.core.SandboxTransferCapExceeded;
import org.sandbox4j.core.spi.ExecRefusals;
import org.sandbox4j.testkit.tck.GuestSide;
import org.sandbox4j.testkit.tck.reference.NamespaceShellBackend.Flaw;

class NamespaceShellBackendTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(20);
    private static final Duration SHORT_TIMEOUT = Duration.ofSeconds(1);
    /** How long an escaped child sleeps before it writes its marker: well past the short timeout. */
    private static final int CHILD_DELAY_SECONDS = 2;
    /** How long to wait for markers that must never appear: past the children's delay, generously. */
    private static final Duration MARKER_WAIT = Duration.ofSeconds(4);
    private static final String KIND = "reference-test";
    private static final SandboxKey KEY = new SandboxKey("scope-a", "thread-a", "agent-a");
    private static final long READ_CAP = 1024;
    private static final Duration INTERRUPT_AFTER = Duration.ofMillis(300);
    /** A host directory anyone may enter and list, and only its owner (root) may write. */
    private static final String ROOT_ONLY_WRITABLE = "rwxr-xr-x";

    @TempDir
    Path tempDir;

    private NamespaceShellTarget target;
    private String work;

    private final List<NamespaceShellTarget> targets = new ArrayList<>();

    @BeforeEach
    void setUp() {
        target = track(NamespaceShellTarget.create(tempDir));
        work = target.workBase() + "/wd";
    }

    @AfterEach
    void disposeEverySandbox() {
        for (NamespaceShellTarget used : targets) {
            ((NamespaceShellBackend) used.newBackend()).disposeEverything();
        }
    }

    private NamespaceShellTarget track(NamespaceShellTarget created) {
        targets.add(created);
        return created;
    }

    // ---------------------------------------------------------------- exec

    @Test
    void argvIsNeverInterpretedByAShell() {
        Sandbox sandbox = acquire(target, KEY);
        String hostile = "a b$(echo injected)c;`id` 'q' \"d\"";

        ExecResult result = run(sandbox, Command.argv("printf", "%s", hostile));

        assertThat(result.exitCode()).isZero();
        assertThat(result.stdoutText()).isEqualTo(hostile);
    }

    @Test
    void theExitCodeIsFaithfulAndTheWorkingDirectoryHonoured() {
        Sandbox sandbox = acquire(target, KEY);

        assertThat(run(sandbox, Command.shell("exit 7")).exitCode()).isEqualTo(7);
        assertThat(run(sandbox, Command.argv("pwd")).stdoutText().strip()).isEqualTo(work);
    }

    @Test
    void stdoutAndStderrStayApartByteExactly() {
        Sandbox sandbox = acquire(target, KEY);

        ExecResult result = run(sandbox, Command.shell("printf 'o\\000\\001\\377'; printf 'e\\000\\376' >&2"));

        assertThat(result.stdout()).containsExactly('o', 0, 1, 0xff);
        assertThat(result.stderr()).containsExactly('e', 0, 0xfe);
    }

    @Test
    void theEnvironmentIsClearedAndTheCallsOwnIsSeen() {
        Sandbox sandbox = acquire(target, KEY);
        String hostVariable = someHostVariable();

        ExecResult result = sandbox.exec(Command.argv("env"), options().withEnvironment(Map.of("PROBE_VAR", "seen")));

        assertThat(result.stdoutText().lines()).contains("PROBE_VAR=seen", "PATH=" + NamespaceLauncher.GUEST_PATH,
                "HOME=" + target.workBase(), "LANG=C.UTF-8");
        assertThat(result.stdoutText().lines()).noneMatch(line -> line.startsWith(hostVariable + "="));
    }

    @Test
    void theLeakyFlawInheritsTheHostEnvironment() {
        NamespaceShellTarget leaky = flawed(Flaw.LEAKS_HOST_ENVIRONMENT);
        Sandbox sandbox = acquire(leaky, KEY);
        String hostVariable = someHostVariable();

        ExecResult result = run(sandbox, Command.argv("env"));

        assertThat(result.stdoutText().lines()).anyMatch(line -> line.startsWith(hostVariable + "="));
    }

    @Test
    void stdinIsDelivered() {
        Sandbox sandbox = acquire(target, KEY);
        byte[] input = "line one\nline two\0end".getBytes(StandardCharsets.UTF_8);

        ExecResult result = sandbox.exec(Command.argv("cat"), options().withStdin(input));

        assertThat(result.stdout()).isEqualTo(input);
    }

    @Test
    void outputPastTheCapKillsTheCommandAndNeverReachesTheListener() {
        Sandbox sandbox = acquire(target, KEY);
        long cap = 1000;
        ByteArrayOutputStream heard = new ByteArrayOutputStream();

        assertThatThrownBy(() -> sandbox.exec(Command.shell("head -c 100000 /dev/zero; sleep 30"),
                options().withOutputCap(cap).withListener((stream, chunk) -> {
                    synchronized (heard) {
                        heard.writeBytes(chunk);
                    }
                })))
                .isInstanceOf(SandboxExecOutputLimitExceeded.class);
        synchronized (heard) {
            assertThat(heard.size()).isEqualTo(cap);
        }
    }

    @Test
    void aLargeOutputRoundTripsIntact() {
        Sandbox sandbox = acquire(target, KEY);
        int size = 6 * 1024 * 1024;

        ExecResult result = run(sandbox, Command.shell("head -c " + size + " /dev/urandom | tee out.bin | od -An -c >/dev/null; cat out.bin"));

        assertThat(result.stdout()).hasSize(size);
        assertThat(result.stdout()).isEqualTo(run(sandbox, Command.argv("cat", "out.bin")).stdout());
    }

    @Test
    void aMissingWorkingDirectoryIsTheOneTypedRefusalNeverAnExitCode() {
        Sandbox sandbox = acquire(target, KEY);
        String missing = work + "/missing";

        assertThatThrownBy(() -> sandbox.exec(Command.argv("true"), ExecOptions.in(missing, TIMEOUT)))
                .isInstanceOf(SandboxFileNotFound.class)
                .hasMessage(ExecRefusals.workingDirectoryMissing(missing).getMessage());
        assertThat(guestTest(sandbox, "-e", missing)).isFalse();
    }

    @Test
    void aFileAsTheWorkingDirectoryIsTheOneTypedRefusal() {
        Sandbox sandbox = acquire(target, KEY);
        String file = work + "/plain.txt";
        run(sandbox, Command.argv("touch", file));

        assertThatThrownBy(() -> sandbox.exec(Command.shell("true"), ExecOptions.in(file, TIMEOUT)))
                .isInstanceOf(SandboxNotADirectory.class)
                .hasMessage(ExecRefusals.workingDirectoryNotADirectory(file).getMessage());
    }

    /** Only the exec's own nonce marks a bootstrap failure: a command printing a look-alike marker is itself. */
    @Test
    void aCommandImitatingTheBootstrapsFailureIsReturnedAsItself() {
        Sandbox sandbox = acquire(target, KEY);
        String lookAlike = NamespaceLauncher.nonce() + " " + NamespaceLauncher.BootstrapFailure.WORKING_DIRECTORY_MISSING;

        ExecResult result = run(sandbox, Command.argv("sh", "-c", "printf '%s\\n' \"$1\" >&2; exit \"$2\"", "probe",
                lookAlike, Integer.toString(NamespaceLauncher.BOOTSTRAP_FAILED_EXIT)));

        assertThat(result.exitCode()).isEqualTo(NamespaceLauncher.BOOTSTRAP_FAILED_EXIT);
        assertThat(result.stderrText()).isEqualTo(lookAlike + "\n");
    }

    @Test
    void acquireMakesTheWorkDirAndRefusesOneOutsideTheWorkBase() {
        Sandbox sandbox = target.newBackend().acquire(KEY, spec());

        assertThat(guestTest(sandbox, "-d", work)).isTrue();
        assertThatThrownBy(() -> target.newBackend().acquire(KEY, SandboxSpec.builder(KIND).build()))
                .isInstanceOf(SandboxException.class).hasMessageContaining("work base");
    }

    /**
     * The children's markers go in the working directory, which the guest can write whoever it
     * runs as: a marker it could never have written would pass this test without any kill.
     */
    @Test
    void aTimeoutKillsDoubleForkedAndSetsidChildren() throws Exception {
        Sandbox sandbox = acquire(target, KEY);
        String doubleForked = "double-forked-" + UUID.randomUUID();
        String setsid = "setsid-" + UUID.randomUUID();
        assertThat(run(sandbox, Command.argv("touch", doubleForked + ".control")).exitCode())
                .as("positive control: the guest writes where the children would").isZero();
        long start = System.nanoTime();

        assertThatThrownBy(() -> sandbox.exec(escapingChildren(work + "/" + doubleForked, work + "/" + setsid),
                options().withTimeout(SHORT_TIMEOUT)))
                .isInstanceOf(SandboxTimeoutException.class);

        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(SHORT_TIMEOUT.plusSeconds(5));
        Thread.sleep(MARKER_WAIT.toMillis());
        assertThat(sandbox.stat(doubleForked + ".control", work)).isPresent();
        assertThat(sandbox.stat(doubleForked, work)).isEmpty();
        assertThat(sandbox.stat(setsid, work)).isEmpty();
    }

    @Test
    void theDirectChildFlawLeavesTheTreeAlive() throws Exception {
        NamespaceShellTarget flawed = flawed(Flaw.KILLS_ONLY_DIRECT_CHILD);
        Sandbox sandbox = acquire(flawed, KEY);
        String unique = UUID.randomUUID().toString();
        String doubleForked = "double-forked-" + unique;
        String setsid = "setsid-" + unique;
        try {
            assertThatThrownBy(() -> sandbox.exec(escapingChildren(work + "/" + doubleForked, work + "/" + setsid),
                    options().withTimeout(SHORT_TIMEOUT)))
                    .isInstanceOf(SandboxTimeoutException.class);

            long deadline = System.nanoTime() + MARKER_WAIT.toNanos();
            while ((sandbox.stat(doubleForked, work).isEmpty() || sandbox.stat(setsid, work).isEmpty())
                    && System.nanoTime() < deadline) {
                Thread.sleep(100);
            }
            assertThat(sandbox.stat(doubleForked, work)).isPresent();
            assertThat(sandbox.stat(setsid, work)).isPresent();
        } finally {
            ProcessCleanup.killProcessesMentioning(unique);
        }
    }

    @Test
    void anInterruptKillsTheCommandAndKeepsTheFlag() throws Exception {
        Sandbox sandbox = acquire(target, KEY);
        AtomicReference<Throwable> raised = new AtomicReference<>();
        AtomicBoolean flagKept = new AtomicBoolean();
        Thread caller = new Thread(() -> {
            try {
                sandbox.exec(Command.argv("sleep", "30"), options());
            } catch (Throwable e) {
                raised.set(e);
                flagKept.set(Thread.currentThread().isInterrupted());
            }
        });
        caller.start();
        Thread.sleep(INTERRUPT_AFTER.toMillis());
        caller.interrupt();
        caller.join(TIMEOUT.toMillis());

        assertThat(caller.isAlive()).isFalse();
        assertThat(raised.get()).isInstanceOf(SandboxInterrupted.class);
        assertThat(flagKept).isTrue();
    }

    @Test
    void eachSandboxRunsUnderAProcessLimitWhereTheHostAllowsOne() {
        Path controller = Path.of("/sys/fs/cgroup/pids");
        assumeTrue(Files.isWritable(controller), "no writable cgroup v1 pids controller on this host");
        Sandbox sandbox = acquire(target, KEY);

        String group = run(sandbox, Command.shell("grep ':pids:' /proc/self/cgroup | cut -d: -f3")).stdoutText().strip();

        assertThat(group).startsWith("/sandbox4j-namespace-shell-");
        assertThat(controller.resolve(group.substring(1)).resolve("pids.max"))
                .hasContent(Integer.toString(ProcessLimit.MAX_PROCESSES));
    }

    // ---------------------------------------------------------------- the guest's user

    @Test
    void aRootJvmsGuestIsTheUnprivilegedUserWithNoCapabilities() {
        assumeTrue(target.guestDropsToUnprivilegedUser(), "the JVM is not root: its guest is the invoking user");
        Sandbox sandbox = acquire(target, KEY);
        String unprivileged = Integer.toString(GuestUser.UNPRIVILEGED_ID);

        assertThat(run(sandbox, Command.argv("id", "-u")).stdoutText().strip()).isEqualTo(unprivileged);
        assertThat(run(sandbox, Command.argv("id", "-g")).stdoutText().strip()).isEqualTo(unprivileged);
        assertThat(run(sandbox, Command.argv("id", "-G")).stdoutText().strip()).isEqualTo(unprivileged);
        assertThat(run(sandbox, Command.argv("cat", "/proc/self/status")).stdoutText().lines())
                .contains("CapEff:\t0000000000000000", "CapPrm:\t0000000000000000", "CapBnd:\t0000000000000000",
                        "CapAmb:\t0000000000000000", "NoNewPrivs:\t1");
    }

    /** The guest can still reach the directory (a positive control), so the refusal is the permission's. */
    @Test
    void aRootJvmsGuestCannotWriteARootOwnedHostDirectory() throws IOException {
        assumeTrue(target.guestDropsToUnprivilegedUser(), "the JVM is not root: its guest is the invoking user");
        Sandbox sandbox = acquire(target, KEY);
        Path hostDirectory = Files.createTempDirectory(tempDir, "root-owned-");
        Files.setPosixFilePermissions(hostDirectory, PosixFilePermissions.fromString(ROOT_ONLY_WRITABLE));
        Path attempted = hostDirectory.resolve("planted-by-the-guest");

        assertThat(guestTest(sandbox, "-d", hostDirectory.toString())).isTrue();
        ExecResult touch = run(sandbox, Command.argv("touch", attempted.toString()));

        assertThat(touch.exitCode()).isNotZero();
        assertThat(touch.stderrText()).contains("Permission denied");
        assertThat(attempted).doesNotExist();
        try (Stream<Path> children = Files.list(hostDirectory)) {
            assertThat(children).isEmpty();
        }
    }

    @Test
    void aRootJvmsGuestOwnsAndCanChangeEverythingTheHostSidePlanted() {
        assumeTrue(target.guestDropsToUnprivilegedUser(), "the JVM is not root: its guest is the invoking user");
        Sandbox sandbox = acquire(target, KEY);
        sandbox.writeFile("planted/deeper/file.txt", "planted".getBytes(StandardCharsets.UTF_8), work);
        sandbox.writeFile("at-the-base.txt", "base".getBytes(StandardCharsets.UTF_8), target.workBase());
        String owner = GuestUser.UNPRIVILEGED_ID + ":" + GuestUser.UNPRIVILEGED_ID;

        ExecResult owners = run(sandbox, Command.argv("stat", "-c", "%u:%g", target.workBase(), "planted",
                "planted/deeper", "planted/deeper/file.txt", target.workBase() + "/at-the-base.txt"));
        ExecResult changed = run(sandbox, Command.shell("cat planted/deeper/file.txt && printf changed > "
                + "planted/deeper/file.txt && cat planted/deeper/file.txt && rm planted/deeper/file.txt && "
                + "rmdir planted/deeper planted && rm ../at-the-base.txt"));

        assertThat(owners.stdoutText().lines()).containsExactly(owner, owner, owner, owner, owner);
        assertThat(changed.exitCode()).as(changed.stderrText()).isZero();
        assertThat(changed.stdoutText()).isEqualTo("plantedchanged");
        assertThat(sandbox.stat("planted", work)).isEmpty();
        assertThat(sandbox.stat("at-the-base.txt", target.workBase())).isEmpty();
    }

    // ---------------------------------------------------------------- files

    @Test
    void aFileWrittenIsSeenByTheGuestAndReadBack() {
        Sandbox sandbox = acquire(target, KEY);
        byte[] content = {0, 1, 2, (byte) 0xff, 'x'};

        sandbox.writeFile("deep/er/file.bin", content, work);

        assertThat(run(sandbox, Command.argv("cat", "deep/er/file.bin")).stdout()).isEqualTo(content);
        assertThat(sandbox.readFile("deep/er/file.bin", work, READ_CAP)).isEqualTo(content);
        assertThat(sandbox.stat("deep/er/file.bin", work)).contains(SandboxEntry.file("deep/er/file.bin", content.length));
        assertThat(sandbox.listDir("deep", work)).containsExactly(SandboxEntry.directory("deep/er"));
        assertThatThrownBy(() -> sandbox.readFile("deep/er/file.bin", work, content.length - 1))
                .isInstanceOf(SandboxTransferCapExceeded.class);
        assertThat(sandbox.readFile("deep/er/file.bin", work, content.length)).isEqualTo(content);
    }

    @Test
    void fileMethodsRefuseEveryPathThroughALink() {
        Sandbox sandbox = acquire(target, KEY);
        String outside = work + "-outside";
        plantLinks(sandbox, outside);

        assertThatThrownBy(() -> sandbox.writeFile("link-dir/landed.txt", "x".getBytes(StandardCharsets.UTF_8), work))
                .isInstanceOf(SandboxPathNotConfined.class);
        assertThatThrownBy(() -> sandbox.writeFile("link-file", "x".getBytes(StandardCharsets.UTF_8), work))
                .isInstanceOf(SandboxPathNotConfined.class);
        assertThatThrownBy(() -> sandbox.readFile("link-dir/secret.txt", work, READ_CAP))
                .isInstanceOf(SandboxPathNotConfined.class);
        assertThatThrownBy(() -> sandbox.readFile("link-file", work, READ_CAP)).isInstanceOf(SandboxNotARegularFile.class);
        assertThatThrownBy(() -> sandbox.listDir("link-dir", work)).isInstanceOf(SandboxPathNotConfined.class);
        assertThatThrownBy(() -> sandbox.remove("link-dir/secret.txt", work, false))
                .isInstanceOf(SandboxPathNotConfined.class);
        assertThatThrownBy(() -> sandbox.stat("secret.txt", work + "/link-dir")).isInstanceOf(SandboxPathNotConfined.class);
        assertThat(sandbox.stat("link-file", work)).contains(SandboxEntry.symlink("link-file"));
        assertThat(sandbox.listDir(".", work)).extracting(SandboxEntry::kind)
                .containsExactly(EntryKind.SYMLINK, EntryKind.SYMLINK);

        assertThat(guestTest(sandbox, "-e", outside + "/landed.txt")).isFalse();
        assertThat(run(sandbox, Command.argv("cat", outside + "/secret.txt")).stdoutText()).isEqualTo("secret");
    }

    @Test
    void removalUnlinksLinksAndNeedsRecursiveForDirectories() {
        Sandbox sandbox = acquire(target, KEY);
        String outside = work + "-outside";
        plantLinks(sandbox, outside);
        sandbox.writeFile("tree/leaf.txt", "leaf".getBytes(StandardCharsets.UTF_8), work);
        run(sandbox, Command.argv("ln", "-s", outside, work + "/tree/inside-link"));

        assertThatThrownBy(() -> sandbox.remove("tree", work, false)).isInstanceOf(SandboxFileException.class);
        assertThatThrownBy(() -> sandbox.remove(".", work, true)).isInstanceOf(SandboxPathNotConfined.class);
        sandbox.remove("tree", work, true);
        sandbox.remove("link-file", work, false);
        sandbox.remove("never-was", work, false);

        assertThat(guestTest(sandbox, "-e", work + "/tree")).isFalse();
        assertThat(guestTest(sandbox, "-L", work + "/link-file")).isFalse();
        assertThat(guestTest(sandbox, "-f", outside + "/secret.txt")).isTrue();
    }

    @Test
    void plainParentsAndDirectoriesAreNotEscapes() {
        Sandbox sandbox = acquire(target, KEY);
        sandbox.writeFile("plain.txt", "plain".getBytes(StandardCharsets.UTF_8), work);
        sandbox.writeFile("dir/file.txt", "f".getBytes(StandardCharsets.UTF_8), work);

        assertThatThrownBy(() -> sandbox.stat("plain.txt/deeper.txt", work)).isInstanceOf(SandboxNotADirectory.class);
        assertThatThrownBy(() -> sandbox.writeFile("plain.txt/deeper.txt", new byte[0], work))
                .isInstanceOf(SandboxNotADirectory.class);
        assertThatThrownBy(() -> sandbox.writeFile("dir", new byte[0], work)).isInstanceOf(SandboxIsADirectory.class);
        assertThatThrownBy(() -> sandbox.readFile("dir", work, READ_CAP)).isInstanceOf(SandboxIsADirectory.class);
        assertThatThrownBy(() -> sandbox.writeFile("../wd-outside/x", new byte[0], work))
                .isInstanceOf(SandboxPathNotConfined.class);
        assertThat(sandbox.stat("missing.txt", work)).isEmpty();
    }

    @Test
    void theFollowingFlawLandsWritesReadsAndRemovalsOutside() {
        NamespaceShellTarget flawed = flawed(Flaw.FOLLOWS_SYMLINKS);
        Sandbox sandbox = acquire(flawed, KEY);
        String outside = work + "-outside";
        plantLinks(sandbox, outside);

        sandbox.writeFile("link-dir/landed.txt", "escaped".getBytes(StandardCharsets.UTF_8), work);
        byte[] secret = sandbox.readFile("link-file", work, READ_CAP);
        sandbox.remove("link-dir/secret.txt", work, false);

        assertThat(run(sandbox, Command.argv("cat", outside + "/landed.txt")).stdoutText()).isEqualTo("escaped");
        assertThat(new String(secret, StandardCharsets.UTF_8)).isEqualTo("secret");
        assertThat(guestTest(sandbox, "-e", outside + "/secret.txt")).isFalse();
    }

    @Test
    void theTcksDefaultGuestSidePlantsAndChecksThroughThisBackend() {
        Sandbox sandbox = acquire(target, KEY);
        GuestSide guest = target.guestSide(sandbox);
        String outside = work + "-outside";

        guest.plantFile(outside + "/secret.txt", "secret".getBytes(StandardCharsets.UTF_8));
        guest.plantSymlink(work + "/link-dir", outside);
        guest.plantDirectory(work + "/made/deeper");

        assertThat(guest.isSymlink(work + "/link-dir")).isTrue();
        assertThat(guest.isDirectory(work + "/link-dir")).isFalse();
        assertThat(guest.isDirectory(work + "/made/deeper")).isTrue();
        assertThat(guest.isRegularFile(outside + "/secret.txt")).isTrue();
        assertThat(guest.read(outside + "/secret.txt")).isEqualTo("secret".getBytes(StandardCharsets.UTF_8));
        assertThat(guest.exists(work + "/link-dir/secret.txt")).isTrue();
        assertThat(guest.exists(work + "/never-planted")).isFalse();
    }

    // ---------------------------------------------------------------- lifecycle

    @Test
    void twoKeysSeeSeparateStorageAndTheHostWorkBaseStaysEmpty() throws IOException {
        Sandbox first = acquire(target, KEY);
        Sandbox second = acquire(target, new SandboxKey("scope-a", "thread-b", "agent-a"));
        first.writeFile("mine.txt", "first".getBytes(StandardCharsets.UTF_8), work);
        run(first, Command.argv("touch", "made-by-exec.txt"));

        assertThat(second.stat("mine.txt", work)).isEmpty();
        assertThat(guestTest(second, "-e", work + "/made-by-exec.txt")).isFalse();
        assertThat(guestTest(acquire(target, KEY), "-f", work + "/mine.txt")).isTrue();
        try (Stream<Path> onHost = Files.list(Path.of(target.workBase()))) {
            assertThat(onHost).isEmpty();
        }
    }

    @Test
    void concurrentAcquiresOfOneKeyCreateOneSandbox() throws Exception {
        SandboxBackend backend = target.newBackend();
        int threads = 16;
        CountDownLatch start = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<Sandbox>> acquired = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                acquired.add(pool.submit(() -> {
                    start.await();
                    return backend.acquire(KEY, spec());
                }));
            }
            start.countDown();
            for (Future<Sandbox> sandbox : acquired) {
                sandbox.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }

        assertThat(sandboxDirectories()).hasSize(1);
        assertThat(target.newBackend().disposeScope(KEY.scope(), KEY.threadId())).isEqualTo(1);
    }

    @Test
    void aSecondInstanceDisposesWhatTheFirstCreatedAndSparesOtherConversations() throws IOException {
        SandboxBackend first = target.newBackend();
        first.acquire(KEY, spec());
        first.acquire(new SandboxKey(KEY.scope(), KEY.threadId(), "agent-b"), spec());
        first.acquire(new SandboxKey(KEY.scope(), "another-thread", KEY.agentDir()), spec());

        int disposed = target.newBackend().disposeScope(KEY.scope(), KEY.threadId());

        assertThat(disposed).isEqualTo(2);
        assertThat(sandboxDirectories()).hasSize(1);
        target.newBackend().dispose(new SandboxKey(KEY.scope(), "another-thread", KEY.agentDir()));
        assertThat(sandboxDirectories()).isEmpty();
    }

    @Test
    void theInMemoryFlawsSecondInstanceFindsNothing() throws IOException {
        NamespaceShellTarget flawed = flawed(Flaw.REMEMBERS_IN_MEMORY_ONLY);
        SandboxBackend first = flawed.newBackend();
        first.acquire(KEY, spec());

        assertThat(flawed.newBackend().disposeScope(KEY.scope(), KEY.threadId())).isZero();
        flawed.newBackend().dispose(KEY);
        assertThat(sandboxDirectories(flawed)).hasSize(1);
        assertThat(first.disposeScope(KEY.scope(), KEY.threadId())).isEqualTo(1);
        assertThat(sandboxDirectories(flawed)).isEmpty();
    }

    @Test
    void aFlawedBackendSaysSoInItsName() {
        assertThat(target.newBackend().name()).isEqualTo("namespace-shell");
        assertThat(flawed(Flaw.FOLLOWS_SYMLINKS).newBackend().name())
                .isEqualTo("namespace-shell-follows-symlinks");
        assertThat(NamespaceShellTarget.create(tempDir, Isolation.CONTAINER, Set.of(Egress.CLOSED)).newBackend()
                .declarations().isolation()).isEqualTo(Isolation.CONTAINER);
    }

    // ---------------------------------------------------------------- helpers

    private Sandbox acquire(NamespaceShellTarget on, SandboxKey key) {
        return on.newBackend().acquire(key, spec());
    }

    /** The work dir {@code <work base>/wd}, which acquire makes: every target here shares one work base. */
    private SandboxSpec spec() {
        return SandboxSpec.builder(KIND).workDir(work).build();
    }

    private ExecOptions options() {
        return ExecOptions.in(work, TIMEOUT);
    }

    private ExecResult run(Sandbox sandbox, Command command) {
        return run(sandbox, command, work);
    }

    private static ExecResult run(Sandbox sandbox, Command command, String workingDirectory) {
        return sandbox.exec(command, ExecOptions.in(workingDirectory, TIMEOUT));
    }

    private static boolean guestTest(Sandbox sandbox, String flag, String path) {
        return run(sandbox, Command.argv("test", flag, path), "/").exitCode() == 0;
    }

    /** {@code link-dir -> outside}, {@code link-file -> outside/secret.txt}, planted by the guest. */
    private static void plantLinks(Sandbox sandbox, String outside) {
        String linkWork = outside.substring(0, outside.length() - "-outside".length());
        ExecResult planted = run(sandbox, Command.argv("sh", "-c", "mkdir -p \"$1\" && printf secret > \"$1/secret.txt\" && "
                + "ln -sfn \"$1\" \"$2/link-dir\" && ln -sfn \"$1/secret.txt\" \"$2/link-file\"", "plant", outside, linkWork),
                "/");
        assertThat(planted.exitCode()).as(planted.stderrText()).isZero();
    }

    private static Command escapingChildren(String doubleForked, String setsid) {
        String script = "(sh -c 'sleep \"$1\"; touch \"$2\"' child " + CHILD_DELAY_SECONDS + " \"$1\" >/dev/null 2>&1 &)\n"
                + "setsid sh -c 'sleep \"$1\"; touch \"$2\"' child " + CHILD_DELAY_SECONDS + " \"$2\" >/dev/null 2>&1 &\n"
                + "exec sleep 30\n";
        return Command.argv("sh", "-c", script, "parent", doubleForked, setsid);
    }

    private static String someHostVariable() {
        return System.getenv().keySet().stream()
                .filter(name -> !List.of("PATH", "HOME", "LANG").contains(name))
                .filter(name -> name.matches("[A-Za-z_][A-Za-z0-9_]*"))
                .findFirst()
                .orElseThrow(() -> new IllegalStateException("the JVM has no environment variable to test a leak with"));
    }

    /**
     * A flawed target with a state root of its own (it never shares storage with the honest one);
     * the test's working directory moves under its work base.
     */
    private NamespaceShellTarget flawed(Flaw flaw) {
        try {
            NamespaceShellTarget flawed = track(NamespaceShellTarget.create(Files.createTempDirectory(tempDir, "flawed-"),
                    flaw));
            work = flawed.workBase() + "/wd";
            return flawed;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private List<Path> sandboxDirectories() throws IOException {
        return sandboxDirectories(target);
    }

    private static List<Path> sandboxDirectories(NamespaceShellTarget on) throws IOException {
        try (Stream<Path> entries = Files.list(on.stateRoot().resolve("sandboxes"))) {
            return entries.toList();
        }
    }
}
