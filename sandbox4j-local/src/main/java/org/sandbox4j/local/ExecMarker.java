package org.sandbox4j.local;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
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
    /** Reads of an empty environment before it counts as one without the marker. */
    private static final int EMPTY_ENVIRON_TRIES = 3;
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
            List<Long> found = carriers();
            if (found.isEmpty()) {
                break;
            }
            for (long pid : found) {
                if (ProcessHandle.of(pid).map(ProcessHandle::destroyForcibly).orElse(false)) {
                    killed++;
                }
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

    private List<Long> carriers() {
        List<Long> found = new ArrayList<>();
        long self = ProcessHandle.current().pid();
        try (Stream<Path> entries = Files.list(PROC)) {
            for (Path entry : (Iterable<Path>) entries::iterator) {
                String name = entry.getFileName().toString();
                if (name.isEmpty() || !name.chars().allMatch(Character::isDigit)) {
                    continue;
                }
                long pid = Long.parseLong(name);
                if (pid != self && carries(entry.resolve("environ"))) {
                    found.add(pid);
                }
            }
        } catch (IOException e) {
            // /proc unreadable: nothing more can be found.
        }
        return found;
    }

    /**
     * Whether the environment holds the marker. A process in the middle of execve shows an empty one for a
     * moment (the new image's is not laid out yet), so an empty read is tried again a few times first.
     */
    private boolean carries(Path environ) {
        for (int tries = 0; tries < EMPTY_ENVIRON_TRIES; tries++) {
            try (InputStream in = Files.newInputStream(environ)) {
                byte[] bytes = in.readNBytes(ENVIRON_READ_LIMIT);
                if (bytes.length > 0) {
                    return indexOf(bytes, needle) >= 0;
                }
            } catch (IOException | SecurityException e) {
                return false; // another user's process, or one that just ended
            }
            Thread.yield();
        }
        return false;
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
