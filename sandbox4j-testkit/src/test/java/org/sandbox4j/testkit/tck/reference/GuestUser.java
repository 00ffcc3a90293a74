package org.sandbox4j.testkit.tck.reference;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The unprivileged host user a guest runs as when this JVM is root. A root guest that sees the
 * host's root file system can destroy it (an experiment with broken quoting once removed the host's
 * {@code /tmp} through this backend), so a root JVM drops the guest to this uid and gid, with no
 * capabilities and {@code no_new_privs}, and hands it ownership of everything the host side
 * creates in its storage. A non-root JVM needs none of this: its guest is the invoking user,
 * mapped to root only inside a user namespace.
 *
 * @param uid the guest's uid on the host
 * @param gid the guest's gid on the host
 */
record GuestUser(int uid, int gid) {

    /** {@code nobody:nogroup} on Debian-family hosts: owns nothing of the host's. */
    static final int UNPRIVILEGED_ID = 65534;

    /** Who a root JVM's guests run as. */
    static final GuestUser UNPRIVILEGED = new GuestUser(UNPRIVILEGED_ID, UNPRIVILEGED_ID);

    /** Whether this JVM runs as root, looked up once. */
    static final boolean JVM_IS_ROOT = jvmIsRoot();

    private static final int ROOT_UID = 0;

    /**
     * Who a backend with {@code flaws} drops its guest to: {@link #UNPRIVILEGED} when this JVM is
     * root, unless the flaws include {@link NamespaceShellBackend.Flaw#RUNS_AS_HOST_ROOT}; empty
     * when the guest runs as whoever {@code unshare} leaves it.
     */
    static Optional<GuestUser> forGuestWith(Set<NamespaceShellBackend.Flaw> flaws) {
        return JVM_IS_ROOT && !flaws.contains(NamespaceShellBackend.Flaw.RUNS_AS_HOST_ROOT)
                ? Optional.of(UNPRIVILEGED) : Optional.empty();
    }

    /**
     * The {@code setpriv(1)} arguments, after the program itself, that become this user with no
     * supplementary groups, no inheritable or bounding capabilities and {@code no_new_privs}, then
     * run the argv that follows them. Changing uid clears the parent-death signal that
     * {@code unshare --kill-child} set, and without it killing {@code unshare} on a timeout would
     * leave the guest running; {@code --pdeathsig keep} restores it after the change.
     */
    List<String> setprivArguments() {
        return List.of("--reuid=" + uid, "--regid=" + gid, "--clear-groups", "--inh-caps=-all", "--bounding-set=-all",
                "--no-new-privs", "--pdeathsig", "keep", "--");
    }

    /** Hands {@code path} (never a link's target) to this user, so the guest can change or delete it. */
    void own(Path path) throws IOException {
        Files.setAttribute(path, "unix:uid", uid, LinkOption.NOFOLLOW_LINKS);
        Files.setAttribute(path, "unix:gid", gid, LinkOption.NOFOLLOW_LINKS);
    }

    private static boolean jvmIsRoot() {
        try {
            // /proc/self belongs to this process's effective uid.
            return ((Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid")) == ROOT_UID;
        } catch (IOException | UnsupportedOperationException e) {
            return false;
        }
    }
}
