package org.sandbox4j.testkit.tck.reference;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import org.sandbox4j.core.Egress;
import org.sandbox4j.core.Isolation;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.testkit.tck.ConformanceTarget;
import org.sandbox4j.testkit.tck.reference.NamespaceShellBackend.Flaw;

/**
 * A {@link ConformanceTarget} over {@link NamespaceShellBackend}: every {@link #newBackend()} is a
 * new instance over the same state root, standing in for another replica or a restarted JVM.
 */
public final class NamespaceShellTarget implements ConformanceTarget {

    private static final String STATE = "state";
    private static final String MOUNT_POINTS = "mnt";
    private static final String WORK = "work";

    private final Path stateRoot;
    private final String workBase;
    private final Isolation declared;
    private final Set<Egress> egress;
    private final Set<Flaw> flaws;

    private NamespaceShellTarget(Path stateRoot, String workBase, Isolation declared, Set<Egress> egress,
            Set<Flaw> flaws) {
        this.stateRoot = stateRoot;
        this.workBase = workBase;
        this.declared = declared;
        this.egress = egress;
        this.flaws = flaws;
    }

    /**
     * A target under {@code tempDir} declaring {@code declared} and {@code egress}, with the given flaws.
     *
     * @param tempDir a host directory the test owns (a JUnit {@code @TempDir}); its real path is used,
     *                so the guest's ancestor walk never meets a host-side link. When the JVM is
     *                root, it and the directories down to the work base are made searchable by
     *                other users (the unprivileged guest); its own ancestors must already be,
     *                or the backend refuses to start
     */
    public static NamespaceShellTarget create(Path tempDir, Isolation declared, Set<Egress> egress, Flaw... flaws) {
        Objects.requireNonNull(tempDir, "tempDir");
        Objects.requireNonNull(declared, "declared");
        Objects.requireNonNull(egress, "egress");
        try {
            Path owned = tempDir.toRealPath();
            Path stateRoot = owned.resolve(STATE);
            Path workBase = stateRoot.resolve(MOUNT_POINTS).resolve(WORK);
            Files.createDirectories(workBase);
            if (GuestUser.JVM_IS_ROOT) {
                // An unprivileged guest reaches its work base by absolute path; a JUnit temp dir is 0700.
                for (Path directory : List.of(owned, stateRoot, workBase.getParent())) {
                    letOthersSearch(directory);
                }
            }
            Set<Flaw> flawSet = flaws.length == 0 ? EnumSet.noneOf(Flaw.class) : EnumSet.copyOf(List.of(flaws));
            Set<Egress> egressSet = egress.isEmpty() ? EnumSet.noneOf(Egress.class) : EnumSet.copyOf(egress);
            return new NamespaceShellTarget(stateRoot, workBase.toString(), declared, egressSet, flawSet);
        } catch (IOException e) {
            throw new UncheckedIOException("could not prepare the namespace-shell state directory", e);
        }
    }

    /** Adds search (never read or write) for other users, so a path through the directory resolves for them. */
    private static void letOthersSearch(Path directory) throws IOException {
        Set<PosixFilePermission> permissions = EnumSet.copyOf(Files.getPosixFilePermissions(directory,
                LinkOption.NOFOLLOW_LINKS));
        permissions.add(PosixFilePermission.OTHERS_EXECUTE);
        Files.setPosixFilePermissions(directory, permissions);
    }

    /**
     * A target declaring {@link Isolation#NONE} and egress {CLOSED}, or {UNRESTRICTED} with
     * {@link Flaw#SHARES_HOST_NETWORK}.
     */
    public static NamespaceShellTarget create(Path tempDir, Flaw... flaws) {
        boolean sharesNetwork = List.of(flaws).contains(Flaw.SHARES_HOST_NETWORK);
        return create(tempDir, Isolation.NONE, EnumSet.of(sharesNetwork ? Egress.UNRESTRICTED : Egress.CLOSED), flaws);
    }

    @Override
    public SandboxBackend newBackend() {
        return new NamespaceShellBackend(stateRoot, workBase, declared, egress, flaws);
    }

    /** The host directory {@code <state>/mnt/work}: empty on the host, each sandbox's storage in the guest. */
    @Override
    public String workBase() {
        return workBase;
    }

    /**
     * Whether this target's guests run as the unprivileged {@code 65534:65534} with no capabilities
     * and {@code no_new_privs}: when the JVM is root, unless the target has
     * {@link Flaw#RUNS_AS_HOST_ROOT}. Otherwise the guest is whoever {@code unshare} leaves: the
     * invoking user mapped to root in a user namespace (holding namespaced capabilities), or root.
     */
    public boolean guestDropsToUnprivilegedUser() {
        return GuestUser.forGuestWith(flaws).isPresent();
    }

    /** Whether this host lets each sandbox run under a process limit (a cgroup pids group). */
    public static boolean processLimited() {
        return ProcessLimit.available();
    }

    /** The host directory holding every sandbox's storage and ownership record. */
    public Path stateRoot() {
        return stateRoot;
    }
}
