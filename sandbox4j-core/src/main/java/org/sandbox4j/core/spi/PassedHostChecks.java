package org.sandbox4j.core.spi;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Host checks that passed, remembered on disk, so a short-lived JVM (one {@code sandbox4j run})
 * does not launch the same probe sandbox every time it starts. A check is named by the command line
 * it runs; its record's name digests everything the answer depends on: that line, the identity
 * (device, inode, size, modification time, mode, owner) of every file the line names by absolute
 * path, this boot of the host, the user, and the kernel settings that decide whether namespaces may
 * be made. A new bwrap, agent, filter or cgroup directory, a changed sysctl or a reboot is another
 * check, which runs again.
 *
 * <p>Only a pass is remembered, for at most {@link #MAX_AGE}: a check that failed runs again next
 * time and says why. Nothing here follows a link: a record or a directory that is one does not
 * count. Where the records cannot be kept (no boot id, an unwritable directory) every check simply
 * runs, as it would without this class.
 *
 * <p>Thread-safe: records are written to a temporary file and renamed into place.
 */
public final class PassedHostChecks {

    /** How long a pass is believed without running the check again. */
    public static final Duration MAX_AGE = Duration.ofHours(12);

    /** Records kept at most; past it the directory is emptied before the next one is written. */
    static final int MAX_RECORDS = 64;

    private static final String RECORD_SUFFIX = ".passed";
    private static final Path BOOT_ID = Path.of("/proc/sys/kernel/random/boot_id");
    /** Kernel settings that turn namespaces (and so every sandbox mechanism here) on or off. */
    private static final List<Path> NAMESPACE_SETTINGS = List.of(
            Path.of("/proc/sys/user/max_user_namespaces"),
            Path.of("/proc/sys/user/max_pid_namespaces"),
            Path.of("/proc/sys/user/max_mnt_namespaces"),
            Path.of("/proc/sys/user/max_net_namespaces"),
            Path.of("/proc/sys/user/max_cgroup_namespaces"),
            Path.of("/proc/sys/kernel/unprivileged_userns_clone"),
            Path.of("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"),
            Path.of("/proc/sys/kernel/apparmor_restrict_unprivileged_unconfined"),
            Path.of("/proc/sys/kernel/seccomp/actions_avail"));
    /** The largest setting or boot id read; each is a line. */
    private static final int SETTING_MAX_BYTES = 256;

    private static final int FILE_TYPE = 0170000;
    private static final int REGULAR_FILE = 0100000;
    private static final int DIRECTORY = 0040000;

    private static final PassedHostChecks NONE = new PassedHostChecks(Optional.empty());

    private final Optional<Path> directory;

    private PassedHostChecks(Optional<Path> directory) {
        this.directory = directory;
    }

    /** Checks remembered in {@code directory} (made, owner-only, when the first pass is written). */
    public static PassedHostChecks in(Path directory) {
        return new PassedHostChecks(Optional.of(directory.toAbsolutePath().normalize()));
    }

    /** Nothing remembered: every check runs. */
    public static PassedHostChecks none() {
        return NONE;
    }

    /** Whether {@code check} passed on this boot, with everything it depends on as it is now, within {@link #MAX_AGE}. */
    public boolean passed(List<String> check) {
        Optional<Path> record = record(check);
        if (record.isEmpty()) {
            return false;
        }
        try {
            BasicFileAttributes attributes = Files.readAttributes(record.get(), BasicFileAttributes.class,
                    LinkOption.NOFOLLOW_LINKS);
            Instant written = attributes.lastModifiedTime().toInstant();
            Instant now = Instant.now();
            return attributes.isRegularFile() && !written.isAfter(now) && written.plus(MAX_AGE).isAfter(now)
                    && ownDirectory(record.get().getParent());
        } catch (IOException notThere) {
            return false;
        }
    }

    /** Remembers that {@code check} passed; failing to is not an error (the check runs again next time). */
    public void remember(List<String> check) {
        Optional<List<String>> key = key(check);
        if (key.isEmpty()) {
            return;
        }
        Path record = directory.get().resolve(KeyDigest.ofParts(key.get()) + RECORD_SUFFIX);
        Path dir = record.getParent();
        try {
            if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
                Files.createDirectories(dir.getParent());
                Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString(
                        "rwx------")));
            }
            if (!ownDirectory(dir)) {
                return;
            }
            forgetAllWhenFull(dir);
            Path temporary = Files.createTempFile(dir, ".check-", ".part");
            try {
                // What the record's name digests, for whoever wonders why a check ran again.
                Files.writeString(temporary, String.join("\n", key.get()) + "\n", StandardCharsets.UTF_8);
                Files.move(temporary, record, StandardCopyOption.ATOMIC_MOVE,
                        StandardCopyOption.REPLACE_EXISTING);
            } finally {
                Files.deleteIfExists(temporary);
            }
        } catch (IOException | UnsupportedOperationException | SecurityException ignored) {
            // Not remembered: the check runs again next time, which is all this costs.
        }
    }

    /** The record {@code check} has now, or empty when nothing can be remembered here. */
    private Optional<Path> record(List<String> check) {
        return key(check).map(parts -> directory.get().resolve(KeyDigest.ofParts(parts) + RECORD_SUFFIX));
    }

    /** What the answer to {@code check} depends on, one line each; empty when nothing can be remembered here. */
    private Optional<List<String>> key(List<String> check) {
        Objects.requireNonNull(check, "check");
        if (directory.isEmpty()) {
            return Optional.empty();
        }
        Optional<String> boot = setting(BOOT_ID);
        if (boot.isEmpty()) {
            return Optional.empty();
        }
        List<String> parts = new ArrayList<>();
        parts.add("boot " + boot.get());
        Optional<Object> uid = currentUid();
        if (uid.isEmpty()) {
            return Optional.empty();
        }
        parts.add("user " + uid.get());
        for (Path setting : NAMESPACE_SETTINGS) {
            parts.add(setting + " " + setting(setting).orElse("-"));
        }
        for (String word : check) {
            parts.add("word " + word);
            if (word.startsWith("/") && word.indexOf('\0') < 0) {
                parts.add("file " + identity(Path.of(word)));
            }
        }
        return Optional.of(parts);
    }

    /**
     * What identifies the regular file at {@code path} as it is now; of anything else only its kind
     * (a directory's times change with every file made in it, and a mount point's do not matter).
     */
    private static String identity(Path path) {
        try {
            Map<String, Object> unix = Files.readAttributes(path, "unix:mode,dev,ino,size,lastModifiedTime,uid,gid",
                    LinkOption.NOFOLLOW_LINKS);
            int mode = (Integer) unix.get("mode");
            if ((mode & FILE_TYPE) != REGULAR_FILE) {
                return "type " + Integer.toOctalString(mode & FILE_TYPE);
            }
            FileTime modified = (FileTime) unix.get("lastModifiedTime");
            return unix.get("dev") + ":" + unix.get("ino") + ":" + unix.get("size") + ":" + modified.toInstant() + ":"
                    + Integer.toOctalString(mode) + ":" + unix.get("uid") + ":" + unix.get("gid");
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return "-";
        }
    }

    private static Optional<String> setting(Path file) {
        try (var in = Files.newInputStream(file)) {
            return Optional.of(new String(in.readNBytes(SETTING_MAX_BYTES), StandardCharsets.US_ASCII).strip());
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    /** A real directory (not a link to one) owned by this user and closed to everyone else. */
    private static boolean ownDirectory(Path dir) throws IOException {
        Map<String, Object> unix = Files.readAttributes(dir, "unix:mode,uid", LinkOption.NOFOLLOW_LINKS);
        Optional<Object> self = currentUid();
        int mode = (Integer) unix.get("mode");
        boolean isDirectory = (mode & FILE_TYPE) == DIRECTORY;
        return isDirectory && (mode & 0077) == 0 && self.isPresent() && unix.get("uid").equals(self.get());
    }

    /** This process's user: /proc/self (the kernel's link, followed) is its /proc/PID, owned by it. */
    private static Optional<Object> currentUid() {
        try {
            return Optional.of(Files.getAttribute(Path.of("/proc/self"), "unix:uid"));
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    private static void forgetAllWhenFull(Path dir) throws IOException {
        List<Path> records = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            for (Path entry : entries) {
                records.add(entry);
                if (records.size() > MAX_RECORDS) {
                    break;
                }
            }
        }
        if (records.size() < MAX_RECORDS) {
            return;
        }
        for (Path entry : records) {
            try {
                Files.deleteIfExists(entry); // a record is a file: unlinking a planted link removes the link alone
            } catch (NoSuchFileException | java.nio.file.DirectoryNotEmptyException ignored) {
                // Gone meanwhile, or not ours to empty.
            }
        }
    }
}
