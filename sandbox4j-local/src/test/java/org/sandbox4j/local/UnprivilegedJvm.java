package org.sandbox4j.local;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * Runs a main class of this module's tests in a child JVM as an unprivileged user that no other
 * process on the machine uses: a uid picked fresh from a range no account, subordinate-id range
 * or running process holds. RLIMIT_NPROC and the user's task count are per uid, so a shared uid
 * (65534 is also every container guest's and every "nobody" daemon's) would make a run depend on
 * whatever else the machine does. Needs root (setpriv changes the uid); the caller checks.
 */
final class UnprivilegedJvm implements AutoCloseable {

    /** Fresh uids come from here: far above login accounts and the usual subordinate ranges. */
    private static final long UID_FROM = 1_700_000_000L;
    private static final long UID_SPAN = 400_000_000L;
    private static final Path PROC = Path.of("/proc");

    private final long uid;
    private final Path scratch;
    private final List<String> classPath;
    private final Path home;

    private UnprivilegedJvm(long uid, Path scratch, List<String> classPath, Path home) {
        this.uid = uid;
        this.scratch = scratch;
        this.classPath = classPath;
        this.home = home;
    }

    /** A fresh user with a copy of this test's class path it can read and a short home (state roots go there). */
    static UnprivilegedJvm forFreshUser() throws IOException, InterruptedException {
        long uid = unusedUid();
        // Short: an egress proxy's unix socket lives under the state root, and such paths stop at 108 bytes.
        Path scratch = Files.createTempDirectory("s4ju");
        Files.setPosixFilePermissions(scratch, PosixFilePermissions.fromString("rwxr-xr-x"));
        List<String> classPath = copyClassPath(scratch.resolve("cp"));
        Path home = Files.createDirectory(scratch.resolve("h"));
        chown(home, uid);
        return new UnprivilegedJvm(uid, scratch, classPath, home);
    }

    long uid() {
        return uid;
    }

    /** The user's own directory: the state roots of what the child runs go under it. */
    Path home() {
        return home;
    }

    /** What the child printed (stdout and stderr together) and how it exited. */
    record Outcome(int exitCode, String printed) {
    }

    /**
     * Runs {@code main} with {@code arguments} as this user and waits for it; every process the
     * user still has afterwards is ended by pid, so nothing outlives the run.
     */
    Outcome run(Class<?> main, List<String> arguments, Duration bound) throws IOException, InterruptedException {
        Path output = scratch.resolve("out-" + System.nanoTime() + ".txt");
        List<String> command = new ArrayList<>(List.of("setpriv", "--reuid", Long.toString(uid), "--regid",
                Long.toString(uid), "--clear-groups", "--", Path.of(System.getProperty("java.home"), "bin", "java")
                        .toString(), "-cp", String.join(File.pathSeparator, classPath), main.getName()));
        command.addAll(arguments);
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile());
        builder.environment().clear();
        builder.environment().put("PATH", "/usr/bin:/bin:/usr/sbin:/sbin");
        builder.environment().put("HOME", home.toString());
        // The JVM encodes arguments in its platform encoding: UTF-8, as on any modern host.
        builder.environment().put("LANG", "C.UTF-8");
        builder.environment().put("SANDBOX4J_TCK_HOST_SENTINEL", System.getenv()
                .getOrDefault("SANDBOX4J_TCK_HOST_SENTINEL", "tck-host-sentinel-unprivileged"));
        Process child = builder.start();
        boolean ended = child.waitFor(bound.toMillis(), TimeUnit.MILLISECONDS);
        if (!ended) {
            child.destroyForcibly();
            child.waitFor(30, TimeUnit.SECONDS);
        }
        endEveryProcess();
        String printed = Files.readString(output, StandardCharsets.UTF_8);
        assertThat(ended).as("%s as uid %d ended within %s:%n%s", main.getSimpleName(), uid, bound, printed).isTrue();
        return new Outcome(child.exitValue(), printed);
    }

    /**
     * Every live process on the host whose real uid is this user's, as {@code /proc} shows them
     * now (not zombies: they are dead, and the host's init reaps them in its own time).
     */
    List<Long> processes() {
        List<Long> pids = new ArrayList<>();
        try (DirectoryStream<Path> all = Files.newDirectoryStream(PROC, path -> path.getFileName().toString()
                .chars().allMatch(Character::isDigit))) {
            for (Path process : all) {
                if (realUid(process) == uid && !isZombie(process)) {
                    pids.add(Long.parseLong(process.getFileName().toString()));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return pids;
    }

    /** Ends, by pid, whatever this user still runs (the uid is this run's alone, so nothing else is touched). */
    void endEveryProcess() {
        for (int round = 0; round < 20; round++) {
            List<Long> left = processes();
            if (left.isEmpty()) {
                return;
            }
            left.forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
            sleep(Duration.ofMillis(50));
        }
    }

    @Override
    public void close() {
        endEveryProcess();
        LocalStore.deleteTree(scratch);
    }

    /** A uid no account, group, subordinate range or process on this machine has. */
    private static long unusedUid() throws IOException {
        Set<Long> taken = new HashSet<>();
        for (String file : List.of("/etc/passwd", "/etc/group")) {
            Path path = Path.of(file);
            if (Files.isReadable(path)) {
                for (String line : Files.readAllLines(path, StandardCharsets.UTF_8)) {
                    String[] fields = line.split(":");
                    if (fields.length > 2 && fields[2].chars().allMatch(Character::isDigit) && !fields[2].isEmpty()) {
                        taken.add(Long.parseLong(fields[2]));
                    }
                }
            }
        }
        List<long[]> ranges = subordinateRanges();
        try (DirectoryStream<Path> all = Files.newDirectoryStream(PROC)) {
            for (Path process : all) {
                taken.add(realUid(process));
            }
        }
        for (int attempt = 0; attempt < 1000; attempt++) {
            long candidate = UID_FROM + ThreadLocalRandom.current().nextLong(UID_SPAN);
            if (!taken.contains(candidate) && ranges.stream().noneMatch(r -> candidate >= r[0] && candidate < r[1])) {
                return candidate;
            }
        }
        throw new IllegalStateException("no unused uid found in " + UID_FROM + "+" + UID_SPAN);
    }

    /** The subordinate uid and gid ranges ({@code /etc/subuid}, {@code /etc/subgid}) as [start, end). */
    private static List<long[]> subordinateRanges() throws IOException {
        List<long[]> ranges = new ArrayList<>();
        for (String file : List.of("/etc/subuid", "/etc/subgid")) {
            Path path = Path.of(file);
            if (Files.isReadable(path)) {
                for (String line : Files.readAllLines(path, StandardCharsets.UTF_8)) {
                    String[] fields = line.split(":");
                    if (fields.length == 3) {
                        long start = Long.parseLong(fields[1].strip());
                        ranges.add(new long[] {start, start + Long.parseLong(fields[2].strip())});
                    }
                }
            }
        }
        return ranges;
    }

    private static boolean isZombie(Path process) {
        try {
            return Files.readAllLines(process.resolve("status"), StandardCharsets.US_ASCII).stream()
                    .anyMatch(line -> line.startsWith("State:") && line.substring(6).strip().startsWith("Z"));
        } catch (IOException | RuntimeException e) {
            return true;
        }
    }

    private static long realUid(Path process) {
        try {
            for (String line : Files.readAllLines(process.resolve("status"), StandardCharsets.US_ASCII)) {
                if (line.startsWith("Uid:")) {
                    return Long.parseLong(line.substring(4).strip().split("\\s+")[0]);
                }
            }
        } catch (IOException | RuntimeException e) {
            // Gone meanwhile, or not a process directory.
        }
        return -1;
    }

    /** Copies every class path entry where any user can read it (root's Maven repository is private). */
    private static List<String> copyClassPath(Path target) throws IOException {
        String path = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> copied = new ArrayList<>();
        int index = 0;
        for (String entry : path.split(File.pathSeparator)) {
            Path source = Path.of(entry);
            if (!Files.exists(source)) {
                continue;
            }
            Path destination = target.resolve(index++ + "-" + source.getFileName());
            copyTree(source, destination);
            copied.add(destination.toString());
        }
        return copied;
    }

    private static void copyTree(Path source, Path destination) throws IOException {
        try (var walk = Files.walk(source)) {
            for (Path from : (Iterable<Path>) walk::iterator) {
                Path to = destination.resolve(source.relativize(from).toString());
                if (Files.isDirectory(from)) {
                    Files.createDirectories(to);
                    Files.setPosixFilePermissions(to, PosixFilePermissions.fromString("rwxr-xr-x"));
                } else {
                    Files.createDirectories(to.getParent());
                    Files.copy(from, to);
                    Files.setPosixFilePermissions(to, PosixFilePermissions.fromString("rw-r--r--"));
                }
            }
        }
    }

    private static void chown(Path directory, long uid) throws IOException {
        Files.setAttribute(directory, "unix:uid", (int) uid, LinkOption.NOFOLLOW_LINKS);
        Files.setAttribute(directory, "unix:gid", (int) uid, LinkOption.NOFOLLOW_LINKS);
    }

    private static void sleep(Duration pause) {
        try {
            Thread.sleep(pause.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
