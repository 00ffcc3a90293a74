package org.sandbox4j.testkit;

import java.util.EnumSet;
import java.util.Set;
import org.sandbox4j.core.Capability;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.testkit.tck.ConformanceTarget;
import org.sandbox4j.testkit.tck.GuestSide;

/**
 * Runs the conformance TCK against a fresh {@link InMemoryBackend} per suite run, planting and
 * checking through {@link InMemoryGuestSide}.
 *
 * <p>This proves <b>shape only</b>: the in-memory sandbox has no boundary (rung
 * {@code none}), runs no commands, and its links lead nowhere, so it can honestly pass only the
 * file suites' shape checks. Never read its results as evidence of isolation.
 */
public final class InMemoryConformanceTarget implements ConformanceTarget {

    /** What the backend declares unless told otherwise: every file method it implements. */
    public static final Set<Capability> FILE_CAPABILITIES = Set.copyOf(EnumSet.of(Capability.EXEC,
            Capability.FILES_IN, Capability.FILES_OUT, Capability.FILES_LIST, Capability.FILES_DELETE));

    /** The name of every backend this target makes. */
    public static final String BACKEND_NAME = "in-memory-conformance";

    private final Set<Capability> capabilities;

    private InMemoryConformanceTarget(Set<Capability> capabilities) {
        this.capabilities = Set.copyOf(capabilities);
    }

    /** A target whose backend declares {@link #FILE_CAPABILITIES}. */
    public static InMemoryConformanceTarget create() {
        return new InMemoryConformanceTarget(FILE_CAPABILITIES);
    }

    /**
     * A target whose backend declares exactly {@code capabilities} (its sandbox implements every
     * file method regardless): e.g. to show measure-only mode on a backend that implements
     * {@code remove} without declaring {@link Capability#FILES_DELETE}.
     */
    public static InMemoryConformanceTarget declaring(Set<Capability> capabilities) {
        return new InMemoryConformanceTarget(capabilities);
    }

    @Override
    public SandboxBackend newBackend() {
        return InMemoryBackend.builder().name(BACKEND_NAME)
                .capabilities(capabilities.toArray(new Capability[0])).build();
    }

    /** It runs nothing: only suites that check shape alone are run against it; the rest are listed as not run. */
    @Override
    public boolean modelsShapeOnly() {
        return true;
    }

    /** Plants and checks through the sandbox's own store: its {@code exec} only scripts answers. */
    @Override
    public GuestSide guestSide(Sandbox sandbox) {
        if (!(sandbox instanceof InMemorySandbox)) {
            throw new IllegalArgumentException("the in-memory target plants through an InMemorySandbox, not a "
                    + sandbox.getClass().getName());
        }
        return new InMemoryGuestSide((InMemorySandbox) sandbox);
    }
}
