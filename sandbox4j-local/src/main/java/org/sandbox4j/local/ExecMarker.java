package org.sandbox4j.local;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.stream.Stream;

/**
 * Finds what a host-process command started after it left its process group (a {@code setsid}
 * child, a double fork): every process of the command carries a marker variable in its
 * environment, inherited by all it starts, and on Linux {@code /proc/<pid>/environ} shows it to
 * the same user. The technique Jenkins' process-tree killer uses. A process that clears its own
 * environment escapes it; only namespaces or a cgroup close that, and {@link ProcessBackend}
 * says so.
 */
final class ExecMarker {

    /** The variable every process of one exec inherits. */
    static final String EXEC_VARIABLE = "SANDBOX4J_EXEC";
    /** The variable every process of one sandbox inherits, so disposal finds them all. */
    static final String SANDBOX_VARIABLE = "SANDBOX4J_SANDBOX";
    private static final Path PROC = Path.of("/proc");
    private static final int MAX_PAUSE_SHIFT = 5;
    /** In /proc/PID/stat after the command's closing parenthesis: state 0, ppid 1, …, flags 6. */
    private static final int STAT_FLAGS = 6;
    /** include/linux/sched.h: the task is a kernel thread. */
    private static final long PF_KTHREAD = 0x00200000L;
    /** The most of one process's environment read: markers sit among ordinary variables. */
    private static final int ENVIRON_READ_LIMIT = 1 << 20;
    /** Rounds of find-and-kill: a process may fork while the previous round kills its parent. */
    private static final int ROUNDS = 20;

    private final String variable;
    private final String value;
    private final byte[] needle;

    private ExecMarker(String variable, String value) {
        this.variable = variable;
        this.value = value;
        this.needle = (variable + "=" + value + "\0").getBytes(StandardCharsets.UTF_8);
    }

    /** A fresh marker for one exec of sandbox {@code id}. */
    static ExecMarker forExec(String id) {
        return new ExecMarker(EXEC_VARIABLE, id + "-" + UUID.randomUUID());
    }

    /** The marker every exec of sandbox {@code id} carries. */
    static ExecMarker forSandbox(String id) {
        return new ExecMarker(SANDBOX_VARIABLE, id);
    }

    String variable() {
        return variable;
    }

    String value() {
        return value;
    }

    /** Kills, round by round, every process still carrying this marker; returns how many were killed. */
    int killAll() {
        if (!Files.isDirectory(PROC)) {
            return 0;
        }
        int killed = 0;
        for (int round = 0; round < ROUNDS; round++) {
            List<Long> undecided = new ArrayList<>();
            List<Long> found = carriers(round == 0, undecided);
            if (found.isEmpty() && undecided.isEmpty()) {
                break;
            }
            for (long pid : found) {
                if (ProcessHandle.of(pid).map(ProcessHandle::destroyForcibly).orElse(false)) {
                    killed++;
                }
            }
            if (found.isEmpty()) {
                pause(round); // only processes still in execve are left to judge: give them time to finish it
            }
        }
        return killed;
    }

    /**
     * Every process of this user carrying {@code variable} at all, with the value it carries (the
     * value stops at the first NUL, and at {@value #ENVIRON_READ_LIMIT} bytes of environment).
     */
    static java.util.Map<Long, String> valuesOf(String variable) {
        java.util.Map<Long, String> found = new java.util.HashMap<>();
        byte[] prefix = (variable + "=").getBytes(StandardCharsets.UTF_8);
        long self = ProcessHandle.current().pid();
        try (Stream<Path> entries = Files.list(PROC)) {
            for (Path entry : (Iterable<Path>) entries::iterator) {
                String name = entry.getFileName().toString();
                if (name.isEmpty() || !name.chars().allMatch(Character::isDigit) || Long.parseLong(name) == self) {
                    continue;
                }
                try (InputStream in = Files.newInputStream(entry.resolve("environ"))) {
                    byte[] bytes = in.readNBytes(ENVIRON_READ_LIMIT);
                    int at = indexOf(bytes, prefix);
                    if (at >= 0) {
                        int end = at + prefix.length;
                        while (end < bytes.length && bytes[end] != 0) {
                            end++;
                        }
                        found.put(Long.parseLong(name), new String(bytes, at + prefix.length,
                                end - at - prefix.length, StandardCharsets.UTF_8));
                    }
                } catch (IOException | SecurityException e) {
                    // Another user's process, or one that just ended.
                }
            }
        } catch (IOException e) {
            // /proc unreadable: nothing can be found.
        }
        return found;
    }

    /**
     * The processes carrying the marker. A process in the middle of execve has an empty environment for a
     * moment (the new image's is not laid out yet): in the first round any empty environment, and in every
     * round one without arguments either, goes to {@code undecided}, to be judged again, never taken for one
     * without the marker. A process whose environment is empty by choice still has its arguments.
     */
    private List<Long> carriers(boolean firstRound, List<Long> undecided) {
        List<Long> found = new ArrayList<>();
        long self = ProcessHandle.current().pid();
        try (Stream<Path> entries = Files.list(PROC)) {
            for (Path entry : (Iterable<Path>) entries::iterator) {
                String name = entry.getFileName().toString();
                if (name.isEmpty() || !name.chars().allMatch(Character::isDigit)) {
                    continue;
                }
                long pid = Long.parseLong(name);
                if (pid == self) {
                    continue;
                }
                Optional<Boolean> carries = carries(entry.resolve("environ"));
                if (carries.isEmpty() && mayBeInExecve(entry, firstRound)) {
                    undecided.add(pid);
                } else if (carries.orElse(false)) {
                    found.add(pid);
                }
            }
        } catch (IOException e) {
            // /proc unreadable: nothing more can be found.
        }
        return found;
    }

    /** Whether the environment holds the marker; empty when it reads empty (see {@link #carriers}). */
    private Optional<Boolean> carries(Path environ) {
        try (InputStream in = Files.newInputStream(environ)) {
            byte[] bytes = in.readNBytes(ENVIRON_READ_LIMIT);
            return bytes.length == 0 ? Optional.empty() : Optional.of(indexOf(bytes, needle) >= 0);
        } catch (IOException | SecurityException e) {
            return Optional.of(false); // another user's process, or one that just ended
        }
    }

    /**
     * Whether a process whose environment read empty may be in the middle of execve: alive (not a zombie),
     * not a kernel thread (which never has one), and in the first round, or without arguments either.
     */
    private static boolean mayBeInExecve(Path process, boolean firstRound) {
        try {
            String stat = Files.readString(process.resolve("stat"), StandardCharsets.US_ASCII);
            String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            long flags = Long.parseLong(fields[STAT_FLAGS]);
            if (fields[0].equals("Z") || fields[0].equals("X") || (flags & PF_KTHREAD) != 0) {
                return false;
            }
        } catch (IOException | RuntimeException gone) {
            return false;
        }
        return firstRound || empty(process.resolve("cmdline"));
    }

    private static boolean empty(Path file) {
        try (InputStream in = Files.newInputStream(file)) {
            return in.read() < 0;
        } catch (IOException | SecurityException e) {
            return false;
        }
    }

    /** 1, 2, 4 … 32 ms: an execve takes a moment, longer on a loaded host. */
    private static void pause(int round) {
        try {
            Thread.sleep(1L << Math.min(round, MAX_PAUSE_SHIFT));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Whether {@code needle} starts at 0 or right after a NUL (a whole variable, not a suffix of one). */
    private static int indexOf(byte[] haystack, byte[] needle) {
        outer:
        for (int start = 0; start + needle.length <= haystack.length; start++) {
            if (start > 0 && haystack[start - 1] != 0) {
                continue;
            }
            for (int i = 0; i < needle.length; i++) {
                if (haystack[start + i] != needle[i]) {
                    continue outer;
                }
            }
            return start;
        }
        return -1;
    }

    @Override
    public String toString() {
        return variable + "=" + value;
    }
}
