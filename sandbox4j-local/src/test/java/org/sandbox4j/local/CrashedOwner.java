package org.sandbox4j.local;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.sandbox4j.core.spi.KeyDigest;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxSpec;

/**
 * A JVM that holds sandboxes with commands running in them and is then killed with SIGKILL (no
 * shutdown hook, no clean-up), and what a backend started afterwards on the same state root must
 * leave of it: no process, no control group, no state directory and no lock file, within
 * {@link #RECOVERY_BOUND}. Used as root ({@link BubblewrapCrashReapingTest}) and as a user of its
 * own ({@link LimitScenariosMain}).
 */
final class CrashedOwner {

    static final int SANDBOXES = 5;
    static final Duration RECOVERY_BOUND = Duration.ofSeconds(5);
    static final String READY = "READY";
    private static final Duration CHILD_BOUND = Duration.ofMinutes(2);
    private static final SandboxSpec SPEC = SandboxSpec.builder("crash").build();
    private static final SandboxSpec PROCESS_SPEC = SandboxSpec.builder("crash")
            .egress(org.sandbox4j.core.Egress.UNRESTRICTED).build();
    private static final List<String> GROUP_HIERARCHIES = List.of("memory", "pids", "cpu", "unified");

    private CrashedOwner() {
    }

    /**
     * Run in the JVM that is killed: acquires {@value #SANDBOXES} sandboxes, writes a file in each
     * and starts a command that outlives any test in each (a sleep and a setsid child of it), says
     * {@value #READY} once every command is recorded as running, and waits to be killed.
     *
     * <p>Arguments: the state root, the cgroup root ({@code default} for the host's), and the
     * backend ({@code bubblewrap} or {@code process}).
     */
    public static void main(String[] args) throws Exception {
        Path root = Path.of(args[0]);
        Path cgroupRoot = args[1].equals("default") ? BubblewrapBackend.DEFAULT_CGROUP_ROOT : Path.of(args[1]);
        boolean process = args.length > 2 && args[2].equals(ProcessBackend.TYPE);
        SandboxBackend backend = process
                ? ProcessBackend.builder().stateRoot(root).cgroupRoot(cgroupRoot).build()
                : BubblewrapBackend.builder().stateRoot(root).cgroupRoot(cgroupRoot).build();
        SandboxSpec spec = process ? PROCESS_SPEC : SPEC;
        for (int i = 0; i < SANDBOXES; i++) {
            Sandbox sandbox = backend.acquire(new SandboxKey("crash", "thread-" + i, "agent"), spec);
            String work = spec.workDirIn(sandbox);
            sandbox.writeFile("before-the-crash.txt", "written " + i, work);
            Thread running = new Thread(() -> sandbox.exec(List.of("sh", "-c", "setsid sleep 300 & sleep 300"), work,
                    Duration.ofMinutes(10)));
            running.setDaemon(true);
            running.start();
        }
        Path store = root.resolve(process ? ProcessBackend.TYPE : BubblewrapBackend.TYPE);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (runningLaunches(store) < SANDBOXES && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        System.out.println(READY);
        System.out.flush();
        Thread.sleep(CHILD_BOUND.toMillis());
    }

    /** Starts {@link #main} for bubblewrap in a child JVM and returns it once it said {@value #READY}. */
    static Process start(Path stateRoot, String cgroupRoot) throws IOException {
        return start(stateRoot, cgroupRoot, BubblewrapBackend.TYPE);
    }

    /** Starts {@link #main} for {@code backend} in a child JVM on this class path, once it said {@value #READY}. */
    static Process start(Path stateRoot, String cgroupRoot, String backend) throws IOException {
        String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
                classPath, CrashedOwner.class.getName(), stateRoot.toString(), cgroupRoot, backend)
                .redirectErrorStream(true).start();
        StringBuilder said = new StringBuilder();
        BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
        String line;
        while ((line = out.readLine()) != null && !line.equals(READY)) {
            said.append(line).append('\n');
        }
        if (line == null) {
            child.destroyForcibly();
            throw new AssertionError("the owner never got ready; it said:\n" + said);
        }
        return child;
    }

    /** SIGKILL: no shutdown hook runs, nothing is detached or disposed of. */
    static void killHard(Process child) throws InterruptedException {
        child.destroyForcibly();
        if (!child.waitFor(CHILD_BOUND.toSeconds(), TimeUnit.SECONDS) || child.exitValue() != 137) {
            throw new AssertionError("the owner was not killed by SIGKILL");
        }
    }

    /**
     * Starts a backend on {@code stateRoot} and waits up to {@link #RECOVERY_BOUND} for what the
     * killed owner left to be gone; returns what is still there (empty: nothing), with how long
     * it took.
     */
    static Recovery recover(Path stateRoot, BubblewrapBackend.Builder builder) throws IOException,
            InterruptedException {
        return recover(stateRoot.resolve(BubblewrapBackend.TYPE), () -> builder.stateRoot(stateRoot).build());
    }

    /** As {@link #recover(Path, BubblewrapBackend.Builder)} for any local backend on {@code store}. */
    static Recovery recover(Path store, java.util.function.Supplier<AutoCloseable> backend) throws IOException,
            InterruptedException {
        Leftovers before = leftovers(store);
        long start = System.nanoTime();
        try (AutoCloseable ignored = backend.get()) {
            Leftovers left = leftovers(store);
            while (!left.isEmpty() && System.nanoTime() - start < RECOVERY_BOUND.toNanos()) {
                Thread.sleep(50);
                left = leftovers(store);
            }
            return new Recovery(before, left, Duration.ofNanos(System.nanoTime() - start));
        } catch (IOException | InterruptedException | RuntimeException e) {
            throw e;
        } catch (Exception closing) {
            throw new IllegalStateException(closing);
        }
    }

    record Recovery(Leftovers before, Leftovers after, Duration took) {
    }

    /** What a sandbox leaves on the host: its processes, control groups, directories and lock files. */
    record Leftovers(List<Long> processes, List<Path> groups, List<String> directories, List<String> locks) {
        boolean isEmpty() {
            return processes.isEmpty() && groups.isEmpty() && directories.isEmpty() && locks.isEmpty();
        }

        @Override
        public String toString() {
            return processes.size() + " processes " + processes + ", " + groups.size() + " control groups, "
                    + directories.size() + " state directories " + directories + ", " + locks.size() + " lock files";
        }
    }

    static Leftovers leftovers(Path store) throws IOException {
        List<String> directories = new ArrayList<>();
        try (Stream<Path> entries = Files.list(store)) {
            entries.map(path -> path.getFileName().toString()).filter(name -> !LocalStore.isBackendEntry(name))
                    .forEach(directories::add);
        }
        List<String> locks;
        try (Stream<Path> entries = Files.list(store.resolve(".locks"))) {
            locks = entries.map(path -> path.getFileName().toString()).toList();
        }
        return new Leftovers(processesNaming(store), groupsOf(store), directories, locks);
    }

    /**
     * Every live process whose command line names {@code store} (each bwrap binds its sandbox's
     * workspace from it), whose environment does (each keeper's marker names its sandbox) or whose
     * working directory is under it (an os_process guest runs in its workspace). A resident agent
     * and its commands die with the JVM that started them; the keepers outlive it.
     */
    private static List<Long> processesNaming(Path store) throws IOException {
        byte[] needle = store.toString().getBytes(StandardCharsets.UTF_8);
        List<Long> found = new ArrayList<>();
        try (DirectoryStream<Path> all = Files.newDirectoryStream(Path.of("/proc"),
                path -> path.getFileName().toString().chars().allMatch(Character::isDigit))) {
            for (Path process : all) {
                try {
                    byte[] cmdline = Files.readAllBytes(process.resolve("cmdline"));
                    // A keeper names its sandbox in its environment (its command line is a sleep's).
                    boolean inStore = contains(cmdline, needle) || Files.readSymbolicLink(process.resolve("cwd"))
                            .startsWith(store) || contains(Files.readAllBytes(process.resolve("environ")), needle);
                    if (inStore && !isZombie(process)) {
                        found.add(Long.parseLong(process.getFileName().toString()));
                    }
                } catch (IOException gone) {
                    // Ended meanwhile.
                }
            }
        }
        found.remove(ProcessHandle.current().pid());
        return found;
    }

    private static boolean isZombie(Path process) throws IOException {
        return Files.readAllLines(process.resolve("status")).stream()
                .anyMatch(line -> line.startsWith("State:") && line.substring(6).strip().startsWith("Z"));
    }

    private static boolean contains(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return true;
        }
        return false;
    }

    /** This store's control groups, in every hierarchy the host mounts ({@code s4j-<8 hex of the store>-…}). */
    private static List<Path> groupsOf(Path store) throws IOException {
        String prefix = "s4j-" + KeyDigest.sha256Hex(store.toString()).substring(0, 8) + "-";
        List<Path> found = new ArrayList<>();
        for (String hierarchy : GROUP_HIERARCHIES) {
            Path parent = BubblewrapBackend.DEFAULT_CGROUP_ROOT.resolve(hierarchy).resolve("sandbox4j");
            if (Files.isDirectory(parent)) {
                try (Stream<Path> groups = Files.list(parent)) {
                    groups.filter(group -> group.getFileName().toString().startsWith(prefix)).forEach(found::add);
                }
            }
        }
        return found;
    }

    private static int runningLaunches(Path store) throws IOException {
        int count = 0;
        try (Stream<Path> sandboxes = Files.list(store)) {
            for (Path sandbox : sandboxes.filter(path -> path.getFileName().toString().startsWith("sbx-")).toList()) {
                Path launches = sandbox.resolve(Launches.DIRECTORY);
                if (Files.isDirectory(launches)) {
                    try (Stream<Path> files = Files.list(launches)) {
                        count += files.findAny().isPresent() ? 1 : 0;
                    }
                }
            }
        }
        return count;
    }
}
