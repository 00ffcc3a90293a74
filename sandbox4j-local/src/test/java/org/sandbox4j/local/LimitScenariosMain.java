package org.sandbox4j.local;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.sandbox4j.core.Egress;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxSpec;

/**
 * The process bound of the rlimit fallback, exercised where it applies: as an unprivileged user
 * with no writable cgroup. {@link UnprivilegedLimitsTest} starts it as a uid of its own. Prints
 * {@code LIMITS <mechanism>}, then {@code PASS <backend> <scenario>} or {@code FAIL <backend>
 * <scenario>: why} per backend, and exits 1 when any failed.
 *
 * <p>Arguments: the scenario ({@code crowded-user} or {@code two-sandboxes}) and a state root this
 * user can write.
 */
public final class LimitScenariosMain {

    /** Tasks of this user started before any sandbox: more than a sandbox's default bound of 256. */
    static final int CROWD = 400;
    /** The bound each sandbox gets in the two-sandbox scenario. */
    static final int SMALL_BOUND = 64;
    /** What the first sandbox tries to start: far past its bound. */
    static final int GREEDY_TARGET = 200;
    private static final Duration TIMEOUT = Duration.ofSeconds(90);
    /** Starts 40 background sleeps (output closed, so they never hold the exec's pipes) and counts them. */
    static final String FORTY_SLEEPS = "i=0; while [ $i -lt 40 ]; do sleep 20 </dev/null >/dev/null 2>&1 & "
            + "i=$((i+1)); done; echo started $i";
    /**
     * Forks sleeping children until the kernel refuses or {@code argv[1]} are up, writes how many
     * to {@code full}, holds them until a file {@code release} appears (60 s at most), then ends them.
     */
    private static final String GREEDY = String.join("\n",
            "import os, sys, time",
            "target = int(sys.argv[1]); pids = []",
            "while len(pids) < target:",
            "    try:",
            "        pid = os.fork()",
            "    except OSError:",
            "        break",
            "    if pid == 0:",
            "        null = os.open('/dev/null', os.O_RDWR)",
            "        for fd in (0, 1, 2):",
            "            os.dup2(null, fd)",
            "        time.sleep(120)",
            "        os._exit(0)",
            "    pids.append(pid)",
            "open('full.part', 'w').write(str(len(pids)))",
            "os.rename('full.part', 'full')",
            "deadline = time.time() + 60",
            "while not os.path.exists('release') and time.time() < deadline:",
            "    time.sleep(0.05)",
            "for pid in pids:",
            "    os.kill(pid, 9)",
            "for pid in pids:",
            "    os.waitpid(pid, 0)",
            "print(len(pids))");

    private LimitScenariosMain() {
    }

    private record Target(Function<LocalLimits, SandboxBackend> backend, SandboxSpec spec) {
    }

    public static void main(String[] args) throws Exception {
        String scenario = args[0];
        Path stateRoot = Path.of(args[1]);
        List<String> lines = new ArrayList<>();
        boolean failed = false;
        // Each backend with the one egress mode it enforces: bubblewrap closes the network, process cannot.
        List<Target> targets = List.of(
                new Target(limits -> BubblewrapBackend.builder().stateRoot(stateRoot.resolve("bubblewrap"))
                        .limits(limits).build(), SandboxSpec.builder("limits").egress(Egress.CLOSED).build()),
                new Target(limits -> ProcessBackend.builder().stateRoot(stateRoot.resolve("process"))
                        .limits(limits).build(), SandboxSpec.builder("limits").egress(Egress.UNRESTRICTED).build()));
        try (BubblewrapBackend probe = BubblewrapBackend.builder().stateRoot(stateRoot.resolve("probe")).build()) {
            lines.add("LIMITS " + probe.limitMechanism());
        }
        if (scenario.equals("crashed-owner")) {
            try {
                lines.add("PASS bubblewrap crashed-owner: " + crashedOwner(stateRoot.resolve("crash")));
            } catch (Exception | AssertionError e) {
                failed = true;
                lines.add("FAIL bubblewrap crashed-owner: " + e.toString().replace('\n', ' '));
            }
            targets = List.of();
        }
        for (Target target : targets) {
            String name = "?";
            try {
                SandboxBackend built = target.backend().apply(scenario.equals("two-sandboxes")
                        ? LocalLimits.DEFAULT.withMaxProcesses(SMALL_BOUND) : LocalLimits.DEFAULT);
                name = built.name();
                String verdict = switch (scenario) {
                    case "crowded-user" -> crowdedUser(built, target.spec());
                    case "two-sandboxes" -> twoSandboxes(built, target.spec());
                    default -> throw new IllegalArgumentException("no scenario " + scenario);
                };
                lines.add("PASS " + name + " " + scenario + ": " + verdict);
            } catch (Exception | AssertionError e) {
                failed = true;
                lines.add("FAIL " + name + " " + scenario + ": " + e.toString().replace('\n', ' '));
            }
        }
        lines.forEach(System.out::println);
        System.out.flush();
        System.exit(failed ? 1 : 0);
    }

    /** With {@value #CROWD} tasks of this user running, a sandbox still starts, runs and forks. */
    private static String crowdedUser(SandboxBackend backend, SandboxSpec spec) throws Exception {
        List<Long> crowd = startCrowd();
        try {
            long tasks = HostUser.current().tasks();
            require(tasks >= CROWD, "positive control: this user runs " + tasks + " tasks, fewer than " + CROWD);
            SandboxKey key = new SandboxKey("limits", "crowded", "agent");
            try {
                Sandbox sandbox = backend.acquire(key, spec);
                ExecResult forty = sandbox.exec(List.of("sh", "-c", FORTY_SLEEPS), spec.workDirIn(sandbox), TIMEOUT);
                require(forty.exitCode() == 0 && forty.stdoutText().equals("started 40\n"),
                        "40 processes in a sandbox while the user runs " + tasks + " tasks: " + show(forty));
                return "the user ran " + tasks + " tasks; the sandbox started 40 processes";
            } finally {
                backend.dispose(key);
            }
        } finally {
            crowd.forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
        }
    }

    /**
     * One sandbox fills its bound and holds it; another of the same user, at the same time, still
     * starts 40 processes; and the first stopped at its bound, not before.
     */
    private static String twoSandboxes(SandboxBackend backend, SandboxSpec spec) throws Exception {
        SandboxKey greedyKey = new SandboxKey("limits", "greedy", "agent");
        SandboxKey otherKey = new SandboxKey("limits", "other", "agent");
        try {
            Sandbox greedy = backend.acquire(greedyKey, spec);
            Sandbox other = backend.acquire(otherKey, spec);
            String greedyWork = spec.workDirIn(greedy);
            CompletableFuture<ExecResult> holding = CompletableFuture.supplyAsync(() -> greedy.exec(
                    List.of("python3", "-c", GREEDY, Integer.toString(GREEDY_TARGET)), greedyWork, TIMEOUT));
            int held;
            try {
                held = Integer.parseInt(new String(awaitFile(greedy, "full", greedyWork, holding),
                        StandardCharsets.UTF_8));
                ExecResult forty = other.exec(List.of("sh", "-c", FORTY_SLEEPS), spec.workDirIn(other), TIMEOUT);
                require(forty.exitCode() == 0 && forty.stdoutText().equals("started 40\n"), "a second sandbox "
                        + "started 40 processes while the first held " + held + ": " + show(forty));
            } finally {
                greedy.writeFile("release", new byte[0], greedyWork);
            }
            ExecResult greedyResult = holding.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            require(greedyResult.exitCode() == 0, "the first sandbox's program: " + show(greedyResult));
            // Its bound counts the launcher's own few tasks too; the user's others (this JVM's threads) never.
            require(held > SMALL_BOUND - 10 && held < SMALL_BOUND, "the first sandbox started " + held
                    + " processes under a bound of " + SMALL_BOUND + " (of " + GREEDY_TARGET + " tried)");
            return "the first sandbox held " + held + " of its " + SMALL_BOUND + "; the second started 40";
        } finally {
            backend.dispose(greedyKey);
            backend.dispose(otherKey);
        }
    }

    /**
     * A JVM of this user holding {@value CrashedOwner#SANDBOXES} sandboxes with commands running
     * is killed with SIGKILL; a backend started afterwards leaves nothing of it within
     * {@link CrashedOwner#RECOVERY_BOUND}.
     */
    private static String crashedOwner(Path stateRoot) throws Exception {
        java.nio.file.Files.createDirectories(stateRoot);
        Process owner = CrashedOwner.start(stateRoot, "default");
        CrashedOwner.killHard(owner);
        CrashedOwner.Recovery recovery = CrashedOwner.recover(stateRoot, BubblewrapBackend.builder());
        require(recovery.before().processes().size() >= CrashedOwner.SANDBOXES, "positive control: the killed "
                + "owner's commands were running: " + recovery.before());
        require(recovery.after().isEmpty(), "left " + recovery.after() + " after " + recovery.took());
        return "the killed owner left " + recovery.before() + "; " + recovery.took().toMillis() + " ms later, nothing";
    }

    /** {@value #CROWD} sleeps of this user, each ending on its own within minutes; their pids. */
    private static List<Long> startCrowd() throws IOException, InterruptedException {
        Process shell = new ProcessBuilder("sh", "-c", "i=0; while [ $i -lt " + CROWD + " ]; do "
                + "sleep 300 </dev/null >/dev/null 2>&1 & echo $!; i=$((i+1)); done").redirectErrorStream(true).start();
        String pids = new String(shell.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
        require(shell.waitFor(60, TimeUnit.SECONDS) && shell.exitValue() == 0, "the crowd's shell: " + pids);
        return pids.lines().map(String::strip).filter(line -> !line.isEmpty()).map(Long::parseLong).toList();
    }

    private static byte[] awaitFile(Sandbox sandbox, String name, String workDir, CompletableFuture<ExecResult> writer)
            throws InterruptedException {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (System.nanoTime() < deadline) {
            if (sandbox.stat(name, workDir).isPresent()) {
                return sandbox.readFile(name, workDir, 64);
            }
            if (writer.isDone()) {
                throw new AssertionError("the program that writes " + name + " ended first: " + writer.join());
            }
            Thread.sleep(50);
        }
        throw new AssertionError(name + " did not appear within " + TIMEOUT);
    }

    private static String show(ExecResult result) {
        return "exit " + result.exitCode() + ", stdout '" + result.stdoutText().strip() + "', stderr '"
                + result.stderrText().strip() + "'";
    }

    private static void require(boolean condition, String what) {
        if (!condition) {
            throw new AssertionError(what);
        }
    }
}
