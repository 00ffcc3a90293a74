package org.sandbox4j.agent;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Optional;
import java.util.Set;

/**
 * The static guest agent this jar carries (built from {@code src/main/c/s4j-agent.c} when the module was
 * built), for backends that run it as a resident process: a bubblewrap namespace, a container.
 *
 * <p>The jar holds it as a resource; {@link #packaged()} copies it once per JVM into a directory of the
 * user's own ({@code $XDG_CACHE_HOME/sandbox4j/agent}, else {@code ~/.cache/sandbox4j/agent}), named by
 * its SHA-256, so two versions of sandbox4j never run each other's agent and a copy is reused across
 * JVMs only when its bytes are exactly those of the resource. Nothing is followed: the directory must be
 * a real directory owned by this user and closed to others, the file a regular file.
 */
public final class AgentBinaries {

    /** The resource name, by {@code os.arch} as the build saw it (the build uses the same property). */
    static final String RESOURCE_PREFIX = "s4j-agent-linux-";
    private static final String CACHE_DIRECTORY = "agent";
    private static final int DIGEST_NAME_HEX = 32;
    private static final Set<PosixFilePermission> PRIVATE_DIRECTORY = PosixFilePermissions.fromString("rwx------");
    private static final Set<PosixFilePermission> EXECUTABLE = PosixFilePermissions.fromString("r-xr-xr-x");

    private static Optional<Path> extracted;

    private AgentBinaries() {
    }

    /**
     * The agent for this machine's architecture as an executable file, or empty when the jar was built
     * without one (no gcc or static libc at build time) or the platform is not Linux.
     *
     * @throws UncheckedIOException when the copy cannot be made, naming the directory
     */
    public static synchronized Optional<Path> packaged() {
        if (extracted == null) {
            extracted = extract(cacheDirectory());
        }
        return extracted;
    }

    /** Why {@link #packaged()} is empty, in one line that names the fix. */
    public static String missingReason() {
        return "this sandbox4j-agent jar carries no guest agent for " + System.getProperty("os.arch")
                + " (it is built with gcc and a static libc: apt-get install gcc libc6-dev, then rebuild)";
    }

    static Optional<Path> extract(Path directory) {
        if (!System.getProperty("os.name", "").toLowerCase(java.util.Locale.ROOT).contains("linux")) {
            return Optional.empty();
        }
        String resource = RESOURCE_PREFIX + System.getProperty("os.arch");
        Optional<Recorded> recorded = Recorded.of(resource);
        try {
            if (recorded.isPresent()) {
                // The usual case: the build recorded the digest, and the copy of an earlier JVM is in place.
                privateDirectory(directory);
                Path target = directory.resolve(nameFor(recorded.get().sha256()));
                if (placed(target, recorded.get().size())) {
                    return Optional.of(target);
                }
            }
        } catch (IOException e) {
            throw cannotPlace(directory, e);
        }
        byte[] agent;
        try (InputStream in = AgentBinaries.class.getResourceAsStream(resource)) {
            if (in == null) {
                return Optional.empty();
            }
            agent = in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException("could not read the guest agent from the sandbox4j-agent jar", e);
        }
        String name = nameFor(sha256Hex(agent));
        try {
            privateDirectory(directory);
            Path target = directory.resolve(name);
            if (!holds(target, agent)) {
                Path partial = Files.createTempFile(directory, name, ".partial");
                try {
                    Files.write(partial, agent);
                    Files.setPosixFilePermissions(partial, EXECUTABLE);
                    Files.move(partial, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
                } finally {
                    Files.deleteIfExists(partial);
                }
            }
            return Optional.of(target);
        } catch (IOException e) {
            throw cannotPlace(directory, e);
        }
    }

    private static String nameFor(String sha256Hex) {
        return "s4j-agent-" + sha256Hex.substring(0, DIGEST_NAME_HEX);
    }

    private static UncheckedIOException cannotPlace(Path directory, IOException e) {
        return new UncheckedIOException("could not place the guest agent under " + directory
                + " (set XDG_CACHE_HOME to a directory of your own): " + e.getMessage(), e);
    }

    /**
     * Whether {@code target} is the copy an earlier JVM placed: a regular file (not a link) of the
     * agent's size, read-only as placed. Its name is the agent's digest and it is renamed into place
     * whole, in a directory only this user can write to, so its bytes are not read again.
     */
    private static boolean placed(Path target, long size) throws IOException {
        try {
            PosixFileAttributes attributes = Files.readAttributes(target, PosixFileAttributes.class,
                    LinkOption.NOFOLLOW_LINKS);
            return attributes.isRegularFile() && attributes.size() == size
                    && attributes.permissions().equals(EXECUTABLE);
        } catch (java.nio.file.NoSuchFileException missing) {
            return false;
        }
    }

    /** The agent's SHA-256 and size as the build recorded them beside it ({@code build-into.sh}). */
    private record Recorded(String sha256, long size) {

        private static final java.util.regex.Pattern LINE = java.util.regex.Pattern.compile("([0-9a-f]{64}) ([0-9]{1,12})");

        static Optional<Recorded> of(String resource) {
            try (InputStream in = AgentBinaries.class.getResourceAsStream(resource + ".sha256")) {
                if (in == null) {
                    return Optional.empty();
                }
                var line = LINE.matcher(new String(in.readNBytes(128), java.nio.charset.StandardCharsets.US_ASCII)
                        .strip());
                return line.matches() ? Optional.of(new Recorded(line.group(1), Long.parseLong(line.group(2))))
                        : Optional.empty();
            } catch (IOException e) {
                return Optional.empty();
            }
        }
    }

    /** Whether {@code target} is a regular file (not a link) holding exactly {@code agent}. */
    private static boolean holds(Path target, byte[] agent) throws IOException {
        if (!Files.isRegularFile(target, LinkOption.NOFOLLOW_LINKS) || Files.size(target) != agent.length) {
            return false;
        }
        return MessageDigest.isEqual(Files.readAllBytes(target), agent);
    }

    private static void privateDirectory(Path directory) throws IOException {
        try {
            Files.createDirectories(directory.getParent());
            Files.createDirectory(directory, PosixFilePermissions.asFileAttribute(PRIVATE_DIRECTORY));
        } catch (FileAlreadyExistsException exists) {
            // checked below, whoever made it
        }
        PosixFileAttributes attributes = Files.readAttributes(directory, PosixFileAttributes.class,
                LinkOption.NOFOLLOW_LINKS);
        String me = System.getProperty("user.name");
        if (!attributes.isDirectory() || !attributes.owner().getName().equals(me)
                || !attributes.permissions().equals(PRIVATE_DIRECTORY)) {
            throw new IOException(directory + " must be a directory (not a link) owned by " + me + " with mode 0700");
        }
    }

    static Path cacheDirectory() {
        String cache = System.getenv("XDG_CACHE_HOME");
        Path base = cache != null && !cache.isBlank() ? Path.of(cache)
                : Path.of(System.getProperty("user.home"), ".cache");
        return base.resolve("sandbox4j").resolve(CACHE_DIRECTORY);
    }

    private static String sha256Hex(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform must provide SHA-256", e);
        }
    }
}
