package org.sandbox4j.microvm;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.Optional;
import java.util.Set;

/**
 * Whether QEMU, the guest's first attack surface on the host, runs as an unprivileged user: as root,
 * it runs as {@code nobody} through {@code setpriv} (no groups, no capabilities,
 * {@code no_new_privs}) wherever the host allows it, which is where that user can reach the state
 * root (to make its sockets) and read the guest. Otherwise it runs as this user, and the reason is
 * one of the backend's diagnostics. Either way the guest has its own kernel: the declared rung does
 * not depend on it.
 *
 * @param user   who QEMU runs as, when not as this user
 * @param reason the decision in one line
 */
record UnprivilegedQemu(Optional<QemuLaunch.Unprivileged> user, String reason) {

    static final int NOBODY = 65534;
    private static final Path SETPRIV = Path.of("/usr/bin/setpriv");

    static UnprivilegedQemu decide(Path stateRoot, GuestImage guest) {
        int uid;
        try {
            uid = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        } catch (IOException | RuntimeException e) {
            return new UnprivilegedQemu(Optional.empty(), "QEMU runs as this user (its uid cannot be read)");
        }
        if (uid != 0) {
            return new UnprivilegedQemu(Optional.empty(), "QEMU runs as this user (uid " + uid + ", not root)");
        }
        if (!Files.isExecutable(SETPRIV)) {
            return asRoot("no " + SETPRIV + " to drop to nobody with (apt-get install util-linux)");
        }
        Optional<Path> unreachable = unreachableByOthers(stateRoot, false);
        if (unreachable.isPresent()) {
            return asRoot("nobody cannot reach the state root through " + unreachable.get() + "; choose one every "
                    + "user may enter, such as /var/lib/sandbox4j/microvm (the default for root)");
        }
        for (Path file : java.util.List.of(guest.kernel(), guest.initrd(), guest.root())) {
            Optional<Path> unreadable = unreachableByOthers(file, true);
            if (unreadable.isPresent()) {
                return asRoot("nobody cannot read the guest through " + unreadable.get() + "; keep the guest where "
                        + "every user may read it, such as /var/cache/sandbox4j (./sandbox4j does, as root)");
            }
        }
        return new UnprivilegedQemu(Optional.of(new QemuLaunch.Unprivileged(SETPRIV, NOBODY, NOBODY)),
                "QEMU runs as nobody (uid " + NOBODY + ", setpriv: no groups, no capabilities, no_new_privs)");
    }

    private static UnprivilegedQemu asRoot(String why) {
        return new UnprivilegedQemu(Optional.empty(), "QEMU runs as root: " + why);
    }

    /** The first of {@code path} (a file to read, or a directory to enter) and its ancestors others cannot pass. */
    private static Optional<Path> unreachableByOthers(Path path, boolean file) {
        try {
            Path real = path.toRealPath();
            Set<PosixFilePermission> own = Files.getPosixFilePermissions(real);
            if (!own.contains(file ? PosixFilePermission.OTHERS_READ : PosixFilePermission.OTHERS_EXECUTE)) {
                return Optional.of(real);
            }
            for (Path directory = real.getParent(); directory != null; directory = directory.getParent()) {
                if (!Files.getPosixFilePermissions(directory).contains(PosixFilePermission.OTHERS_EXECUTE)) {
                    return Optional.of(directory);
                }
            }
            return Optional.empty();
        } catch (IOException | UnsupportedOperationException e) {
            return Optional.of(path);
        }
    }
}
