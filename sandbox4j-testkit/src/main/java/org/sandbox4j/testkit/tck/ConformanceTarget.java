package org.sandbox4j.testkit.tck;

import java.time.Duration;
import java.util.Optional;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.core.SandboxSpec;

/**
 * What a backend author hands the TCK: how to make the backend, and (where the defaults do not
 * fit) where its guest may work, how fixtures are planted on the guest side, and the loopback
 * fixtures the egress suite needs. Everything but {@link #newBackend()} has a default.
 */
@FunctionalInterface
public interface ConformanceTarget {

    /**
     * A fresh instance of the backend under test. The TCK calls it once per suite run, and again
     * where a probe needs a second instance standing in for another replica or a restarted JVM:
     * both instances must share the provider's own record (labels, names, a state directory).
     */
    SandboxBackend newBackend();

    /**
     * The guest directory under which every suite run makes its own working directory and the
     * prefix-sharing sibling {@code <wd>-outside}. It must be writable by the guest and need not
     * exist. Default {@value SandboxSpec#DEFAULT_WORK_DIR}.
     */
    default String workBase() {
        return SandboxSpec.DEFAULT_WORK_DIR;
    }

    /**
     * The spec a suite acquires with. The TCK passes a builder holding its kind, work dir, the
     * backend's declared capabilities as requirements, and what the suite needs (an egress mode,
     * an allowlist); override to add what the backend needs (an image), never to remove.
     */
    default SandboxSpec spec(SandboxSpec.Builder suiteSpec) {
        return suiteSpec.build();
    }

    /**
     * How fixtures are planted and checked on the guest side. The default goes through the sandbox
     * itself: {@code writeFile} for files and POSIX commands ({@code mkdir}, {@code ln}, {@code test},
     * {@code cat}) over {@code exec}, so verification never trusts the backend's own pull surface.
     */
    default GuestSide guestSide(Sandbox sandbox) {
        return new PosixGuestSide(sandbox, execTimeout());
    }

    /** The bound on each command a probe runs for set-up and verification. */
    default Duration execTimeout() {
        return Duration.ofSeconds(60);
    }

    /**
     * Loopback servers and the allowlist that make the egress suites meaningful for this backend.
     * Empty (the default) refuses the egress suites with a message saying so.
     */
    default Optional<EgressFixture> egressFixture() {
        return Optional.empty();
    }

    /**
     * Whether this target models shape only and runs nothing (an in-memory fake): then only the
     * suites whose probes check shape alone are run, and every other suite is listed as not run,
     * with that reason. Default false.
     */
    default boolean modelsShapeOnly() {
        return false;
    }

    /**
     * The most a sandbox of this target can store in its working directory's area, and in each
     * other place its guest may write ({@code /tmp}), as the backend is configured here. Empty (the
     * default) when the backend bounds nothing: the HOSTILE suite's disk-bomb probe is then skipped,
     * and says so.
     */
    default Optional<Long> storageBound() {
        return Optional.empty();
    }

    /**
     * Whether writes outside the workspace persist from one exec to the next (a persistent root
     * file system). Default false: the isolation suite then checks that they do not.
     */
    default boolean persistentRoot() {
        return false;
    }

    /**
     * Why this target's guests run on this host's kernel although the backend declares a
     * hypervisor rung: it stands in for a hypervisor service with a local emulator (whose live
     * suite, against the real service, runs the own-kernel probe). Empty (the default) for every
     * real backend: the ISOLATION suite then checks the guest's kernel is its own.
     */
    default Optional<String> emulatedHypervisor() {
        return Optional.empty();
    }
}
