package org.sandbox4j.microvm;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.Optional;
import java.util.Set;

/**
 * Whether QEMU, the guest's first attack surface on the host, runs as an unprivileged user: as root,
 * each guest's QEMU runs as a uid of its own, one no account has ({@link #FIRST_UID} onwards),
 * through {@code setpriv} (no groups, no capabilities, {@code no_new_privs}), wherever the host
 * allows it, which is where any user can reach the state root (to make its sockets) and read the
 * guest. A uid per guest, not one shared {@code nobody}: a compromised QEMU then cannot signal,
 * trace or write the files of another guest's. Otherwise QEMU runs as this user, and the reason is
 * one of the backend's diagnostics. Either way the guest has its own kernel: the declared rung does
 * not depend on it.
 *
 * @param setpriv what drops to a guest's uid, when QEMU runs as one
 * @param reason  the decision in one line
 */
record UnprivilegedQemu(Optional<Path> setpriv, String reason) {

    /**
     * The first of the uids guests' QEMUs run as: systemd's table leaves 0x70000000–0x7FFFFFFF
     * unassigned (below are container ranges, above it the uids to avoid), and no account is made there.
     */
    static final int FIRST_UID = 0x70000000;
    /** How many uids guests draw from. */
    static final int UIDS = 1 << 24;
    /**
     * The group every guest's QEMU runs in (the first of the range, which no guest's uid is): it
     * may read snapshots' memory, which every restored guest maps, and nothing else.
     */
    static final int GUEST_GROUP = FIRST_UID;
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
            return asRoot("no " + SETPRIV + " to drop to an unprivileged uid with (apt-get install util-linux)");
        }
        Optional<Path> unreachable = unreachableByOthers(stateRoot, false);
        if (unreachable.isPresent()) {
            return asRoot("other users cannot reach the state root through " + unreachable.get() + "; choose one every "
                    + "user may enter, such as /var/lib/sandbox4j/microvm (the default for root)");
        }
        for (Path file : java.util.List.of(guest.kernel(), guest.initrd(), guest.root())) {
            Optional<Path> unreadable = unreachableByOthers(file, true);
            if (unreadable.isPresent()) {
                return asRoot("other users cannot read the guest through " + unreadable.get() + "; keep the guest where "
                        + "every user may read it, such as /var/cache/sandbox4j (./sandbox4j does, as root)");
            }
        }
        return new UnprivilegedQemu(Optional.of(SETPRIV), "QEMU runs as a uid of its own per guest (from "
                + FIRST_UID + "; setpriv: no groups, no capabilities, no_new_privs)");
    }

    /** Who a guest's QEMU runs as, given the uid its directory was made for; empty to run it as this user. */
    Optional<QemuLaunch.Unprivileged> user(int uid) {
        return setpriv.map(tool -> new QemuLaunch.Unprivileged(tool, uid, GUEST_GROUP));
    }

    /** A guest uid none of {@code taken} is, drawn at random so that two processes rarely draw alike. */
    static int freeUid(java.util.Set<Integer> taken, java.util.random.RandomGenerator random) {
        while (true) {
            int uid = FIRST_UID + 1 + random.nextInt(UIDS - 1);
            if (!taken.contains(uid)) {
                return uid;
            }
        }
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
