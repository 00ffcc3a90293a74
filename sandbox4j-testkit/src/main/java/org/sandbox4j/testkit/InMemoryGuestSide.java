package org.sandbox4j.testkit;

import java.util.Objects;
import java.util.Optional;
import org.junit.jupiter.api.Assumptions;
import org.sandbox4j.core.EntryKind;
import org.sandbox4j.testkit.tck.GuestSide;

/**
 * The conformance TCK's guest side for an {@link InMemorySandbox}: plants through the sandbox's
 * test hooks and answers from its store, never through the file methods under test. (The default
 * guest side works over {@code exec}, which this sandbox only scripts.)
 *
 * <p>Its links lead nowhere: {@link #readThroughLinks} aborts, so the probes that prove a planted
 * link really reaches outside are skipped here, with that reason.
 */
public final class InMemoryGuestSide implements GuestSide {

    private final InMemorySandbox sandbox;

    public InMemoryGuestSide(InMemorySandbox sandbox) {
        this.sandbox = Objects.requireNonNull(sandbox, "sandbox");
    }

    @Override
    public void plantFile(String absolutePath, byte[] content) {
        sandbox.plantFile(absolutePath, content);
    }

    /** Records {@code target}; the link is never followed (see {@link InMemorySandbox#plantSymlink}). */
    @Override
    public void plantSymlink(String absolutePath, String target) {
        sandbox.plantSymlink(absolutePath, target);
    }

    @Override
    public void plantDirectory(String absolutePath) {
        sandbox.plantDirectory(absolutePath);
    }

    @Override
    public boolean exists(String absolutePath) {
        return kind(absolutePath).isPresent();
    }

    @Override
    public boolean isRegularFile(String absolutePath) {
        return kind(absolutePath).filter(EntryKind.FILE::equals).isPresent();
    }

    @Override
    public boolean isDirectory(String absolutePath) {
        return kind(absolutePath).filter(EntryKind.DIRECTORY::equals).isPresent();
    }

    @Override
    public boolean isSymlink(String absolutePath) {
        return kind(absolutePath).filter(EntryKind.SYMLINK::equals).isPresent();
    }

    @Override
    public byte[] read(String absolutePath) {
        return sandbox.contentOf(absolutePath)
                .orElseThrow(() -> new AssertionError("expected a regular file at " + absolutePath));
    }

    /** Always aborts: an in-memory link has no target, so nothing can be read through it. */
    @Override
    public byte[] readThroughLinks(String absolutePath) {
        return Assumptions.abort("the in-memory sandbox's links lead nowhere (it models shape, not escape): "
                + "prove that a planted link reaches outside against a real backend");
    }

    private Optional<EntryKind> kind(String absolutePath) {
        return sandbox.kindAt(absolutePath);
    }
}
