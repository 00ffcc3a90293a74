package org.sandbox4j.local;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.sandbox4j.core.spi.ErrorDetail;

/**
 * The commands running in one local sandbox, recorded in its directory (a file per launch: pid
 * and start time), so that disposal — in this process or another, or a reaper after a crash —
 * stops every one of them before the sandbox's files are touched, whatever the limit mechanism.
 * A launch is recorded before it is waited for; a sandbox retired meanwhile refuses the record,
 * and the launch is then killed by its caller.
 */
final class Launches {

    private static final System.Logger LOG = System.getLogger(Launches.class.getName());
    static final String DIRECTORY = "launches";
    /** The first wait for killed launches to be gone, doubled each round up to {@link #POLL}: most are gone at once. */
    private static final Duration FIRST_POLL = Duration.ofMillis(1);
    private static final Duration POLL = Duration.ofMillis(20);
    /** The most processes one launch's tree is walked for; past it, the JDK's full scan takes over. */
    private static final int TREE_BOUND = 4096;

    private Launches() {
    }

    /** A launch's file (its record, or its report); closing it removes the file (from wherever the sandbox still is). */
    record Registration(Path file) implements AutoCloseable {
        @Override
        public void close() {
            try {
                Files.deleteIfExists(file);
            } catch (IOException e) {
                // The sandbox was retired meanwhile (its directory renamed away): its disposal has the record.
                LOG.log(System.Logger.Level.DEBUG, () -> "could not remove " + file + ": " + ErrorDetail.of(e));
            }
        }
    }

    /**
     * Records {@code process} as running in the sandbox at {@code sandboxDirectory}.
     *
     * @return empty when the sandbox is gone (disposed of since the call began): kill the launch
     */
    static Optional<Registration> register(Path sandboxDirectory, Process process) {
        Path directory = sandboxDirectory.resolve(DIRECTORY);
        try {
            try {
                // Never createDirectories: that would make a retired sandbox's directory again.
                Files.createDirectory(directory);
            } catch (FileAlreadyExistsException exists) {
                // Made by an earlier launch.
            }
            Instant started = process.toHandle().info().startInstant().orElse(Instant.EPOCH);
            Path file = directory.resolve(Long.toString(process.pid()));
            Files.writeString(file, started.toString(), StandardCharsets.US_ASCII, StandardOpenOption.CREATE_NEW,
                    StandardOpenOption.WRITE);
            return Optional.of(new Registration(file));
        } catch (NoSuchFileException retired) {
            return Optional.empty();
        } catch (IOException e) {
            throw new IllegalStateException("could not record a launch in " + directory + ": " + ErrorDetail.of(e), e);
        }
    }

    /**
     * Kills every launch recorded under each of {@code sandboxDirectories} that still runs (the
     * same pid and start time), with everything below it, and waits up to {@code patience} for
     * them all to be gone. A launch's init is below it, and a PID namespace's processes are below
     * its init.
     *
     * @return how many launches were still running
     */
    static int stopAll(Collection<Path> sandboxDirectories, Duration patience) {
        List<ProcessHandle> running = new ArrayList<>();
        sandboxDirectories.forEach(directory -> running.addAll(running(directory)));
        long deadline = System.nanoTime() + patience.toNanos();
        long poll = FIRST_POLL.toMillis();
        while (true) {
            for (ProcessHandle launch : running) {
                List<ProcessHandle> below = below(launch);
                below.forEach(ProcessHandle::destroyForcibly);
                launch.destroyForcibly();
            }
            if (running.stream().noneMatch(ProcessHandle::isAlive) || System.nanoTime() > deadline) {
                running.stream().filter(ProcessHandle::isAlive).forEach(launch -> LOG.log(System.Logger.Level.WARNING,
                        () -> "a sandbox's launch (pid " + launch.pid() + ") outlived its killing for "
                                + patience.toMillis() + " ms"));
                return running.size();
            }
            sleep(poll);
            poll = Math.min(poll * 2, POLL.toMillis());
        }
    }

    /**
     * Everything below {@code launch}, walked down from it through each task's {@code children} file
     * in /proc: what the launch's own tree holds, however many other processes the host runs (the
     * JDK's {@link ProcessHandle#descendants()} reads every process on the host, so a disposal
     * would cost more with every sandbox held). Where the kernel has no such file, the JDK's walk.
     * Bounded; a process that forks meanwhile is found in the next round of the caller's loop.
     */
    static List<ProcessHandle> below(ProcessHandle launch) {
        List<ProcessHandle> found = new ArrayList<>();
        ArrayDeque<Long> pending = new ArrayDeque<>(List.of(launch.pid()));
        while (!pending.isEmpty() && found.size() < TREE_BOUND) {
            long pid = pending.poll();
            Optional<List<Long>> children = childrenOf(pid);
            if (children.isEmpty()) {
                return launch.descendants().toList();
            }
            for (long child : children.get()) {
                ProcessHandle.of(child).ifPresent(found::add);
                pending.add(child);
            }
        }
        return found.size() < TREE_BOUND ? found : launch.descendants().toList();
    }

    /** The children of every task of {@code pid}; empty only where the kernel keeps no such file (a pid gone has none). */
    private static Optional<List<Long>> childrenOf(long pid) {
        Path tasks = Path.of("/proc", Long.toString(pid), "task");
        List<Long> children = new ArrayList<>();
        try (Stream<Path> each = Files.list(tasks)) {
            for (Path task : each.toList()) {
                for (String word : Files.readString(task.resolve("children"), StandardCharsets.US_ASCII).split(" ")) {
                    if (!word.isBlank()) {
                        children.add(Long.parseLong(word.strip()));
                    }
                }
            }
        } catch (NoSuchFileException gone) {
            return Files.isDirectory(tasks) && !Files.exists(tasks.resolve(Long.toString(pid)).resolve("children"))
                    ? Optional.empty() : Optional.of(children);
        } catch (IOException | RuntimeException gone) {
            // The process (or a task) ended while it was read: what was read is what there is.
            return Optional.of(children);
        }
        return Optional.of(children);
    }

    private static List<ProcessHandle> running(Path sandboxDirectory) {
        List<ProcessHandle> running = new ArrayList<>();
        try (Stream<Path> files = Files.list(sandboxDirectory.resolve(DIRECTORY))) {
            for (Path file : files.toList()) {
                launch(file).ifPresent(running::add);
            }
        } catch (NoSuchFileException none) {
            // No command ever ran in it.
        } catch (IOException e) {
            LOG.log(System.Logger.Level.WARNING, () -> "could not list the launches of " + sandboxDirectory + ": "
                    + ErrorDetail.of(e));
        }
        return running;
    }

    /** The process a record names, when it still runs: same pid and same start time (pids are reused). */
    private static Optional<ProcessHandle> launch(Path file) {
        try {
            long pid = Long.parseLong(file.getFileName().toString());
            Instant started = Instant.parse(Files.readString(file, StandardCharsets.US_ASCII).strip());
            return ProcessHandle.of(pid).filter(ProcessHandle::isAlive)
                    .filter(handle -> handle.info().startInstant().map(started::equals).orElse(false));
        } catch (IOException | RuntimeException unreadable) {
            return Optional.empty();
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
