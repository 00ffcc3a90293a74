package org.sandbox4j.local;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.OptionalLong;

/**
 * The user this JVM runs as, read from {@code /proc} (Linux): its real uid, whether it is root,
 * and how many tasks the kernel charges to it. RLIMIT_NPROC counts real uids, threads included.
 */
final class HostUser {

    private static final Path PROC = Path.of("/proc");
    /** The most of one {@code status} file read: the fields needed sit in its first lines. */
    private static final int STATUS_READ_LIMIT = 4096;

    private final long uid;

    private HostUser(long uid) {
        this.uid = uid;
    }

    /** The JVM's own user; uid -1 where {@code /proc} cannot say (not Linux). */
    static HostUser current() {
        return new HostUser(statusField(PROC.resolve("self/status"), "Uid:").orElse(-1));
    }

    long uid() {
        return uid;
    }

    /** Root in the initial user namespace is exempt from RLIMIT_NPROC. */
    boolean isRoot() {
        return uid == 0;
    }

    /** Every task (thread) on the host whose real uid is this user's, as {@code /proc} shows them now. */
    long tasks() {
        long count = 0;
        if (uid < 0) {
            return count;
        }
        try (DirectoryStream<Path> processes = Files.newDirectoryStream(PROC, HostUser::isPidDirectory)) {
            for (Path process : processes) {
                Path status = process.resolve("status");
                if (statusField(status, "Uid:").orElse(-1) == uid) {
                    count += statusField(status, "Threads:").orElse(1);
                }
            }
        } catch (IOException e) {
            // Without /proc nothing is counted; the kernel still enforces what the launch is given.
        }
        return count;
    }

    /** This JVM's hard RLIMIT_NPROC; empty when unlimited or unknown. */
    static OptionalLong processHardLimit() {
        try {
            for (String line : Files.readAllLines(PROC.resolve("self/limits"), StandardCharsets.US_ASCII)) {
                if (line.startsWith("Max processes")) {
                    List<String> words = List.of(line.substring("Max processes".length()).trim().split("\\s+"));
                    return words.size() > 1 && words.get(1).chars().allMatch(Character::isDigit)
                            ? OptionalLong.of(Long.parseLong(words.get(1))) : OptionalLong.empty();
                }
            }
        } catch (IOException | NumberFormatException e) {
            // Unknown: the launch asks for its bound as computed, and the kernel caps it.
        }
        return OptionalLong.empty();
    }

    private static boolean isPidDirectory(Path path) {
        String name = path.getFileName().toString();
        return !name.isEmpty() && name.chars().allMatch(Character::isDigit);
    }

    /** The first number of a {@code Name:\tvalue…} line of a status file (a process may vanish meanwhile). */
    private static OptionalLong statusField(Path status, String field) {
        try (var in = Files.newInputStream(status)) {
            String text = new String(in.readNBytes(STATUS_READ_LIMIT), StandardCharsets.US_ASCII);
            for (String line : text.split("\n")) {
                if (line.startsWith(field)) {
                    String first = line.substring(field.length()).trim().split("\\s+")[0];
                    return OptionalLong.of(Long.parseLong(first));
                }
            }
        } catch (IOException | RuntimeException e) {
            // Gone, or not readable: not counted.
        }
        return OptionalLong.empty();
    }
}
