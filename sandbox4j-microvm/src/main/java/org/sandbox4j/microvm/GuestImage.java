package org.sandbox4j.microvm;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * What a microVM boots: an uncompressed kernel ({@code vmlinux}: under TCG a compressed one spends
 * seconds in its decompressor), an initramfs that loads the virtio modules and starts the guest agent,
 * and a read-only root disk the guest overlays with a bounded tmpfs. {@code build-guest.sh} (run by
 * {@code scripts/test.sh}) makes all three in one directory; a user may name their own.
 *
 * @param kernel the uncompressed kernel image
 * @param initrd the initramfs
 * @param root   the read-only ext4 root disk holding {@code /sbin/s4j-agent}
 *
 * <p>These are host configuration, trusted like the QEMU binary; the guest can change none of them.
 */
public record GuestImage(Path kernel, Path initrd, Path root) {

    /** The environment variable naming the directory {@link #at} reads; {@code scripts/test.sh} sets it. */
    public static final String DIRECTORY_VARIABLE = "SANDBOX4J_MICROVM_GUEST";
    static final String KERNEL_FILE = "vmlinux";
    static final String INITRD_FILE = "initrd.cpio.gz";
    static final String ROOT_FILE = "rootfs.ext4";

    public GuestImage {
        kernel = canonical(Objects.requireNonNull(kernel, "kernel"));
        initrd = canonical(Objects.requireNonNull(initrd, "initrd"));
        root = canonical(Objects.requireNonNull(root, "root"));
    }

    /**
     * The file's real path where it exists: QEMU opens exactly these paths, perhaps as another user
     * (see {@link UnprivilegedQemu}), who may be unable to pass through a link's directory (a guest
     * linked from root's home, say) though able to read its target.
     */
    private static Path canonical(Path file) {
        try {
            return file.toRealPath();
        } catch (IOException | RuntimeException missing) {
            return file.toAbsolutePath();
        }
    }

    /** The three files {@code build-guest.sh} leaves in {@code directory}. */
    public static GuestImage at(Path directory) {
        Objects.requireNonNull(directory, "directory");
        return new GuestImage(directory.resolve(KERNEL_FILE), directory.resolve(INITRD_FILE),
                directory.resolve(ROOT_FILE));
    }

    /**
     * The guest this host has: the directory {@value #DIRECTORY_VARIABLE} names, else
     * {@link #defaultDirectory()} when a guest was built there; empty when neither holds one.
     */
    public static Optional<GuestImage> installed() {
        String named = System.getenv(DIRECTORY_VARIABLE);
        if (named != null && !named.isBlank()) {
            return Optional.of(at(Path.of(named)));
        }
        GuestImage built = at(defaultDirectory());
        return built.problem().isEmpty() ? Optional.of(built) : Optional.empty();
    }

    /**
     * Where {@code ./sandbox4j} and {@code scripts/test.sh} leave the guest they build (a link to
     * the build, named by its recipe's digest): {@code $XDG_CACHE_HOME/sandbox4j/microvm-guest},
     * else {@code ~/.cache/sandbox4j/microvm-guest}.
     */
    public static Path defaultDirectory() {
        String cache = System.getenv("XDG_CACHE_HOME");
        Path base = cache != null && !cache.isBlank() ? Path.of(cache)
                : Path.of(System.getProperty("user.home"), ".cache");
        return base.resolve("sandbox4j").resolve("microvm-guest");
    }

    /** Why this guest cannot boot (a file missing or unreadable), or empty when all three are there. */
    public Optional<String> problem() {
        for (Path file : List.of(kernel, initrd, root)) {
            if (!Files.isRegularFile(file) || !Files.isReadable(file)) {
                return Optional.of("the guest file " + file + " is missing or unreadable; build the guest with "
                        + "sandbox4j-microvm/src/main/guest/build-guest.sh (scripts/test.sh does), or name your own "
                        + "with MicroVmBackend.builder().guest(GuestImage.at(dir))");
            }
        }
        return Optional.empty();
    }
}
