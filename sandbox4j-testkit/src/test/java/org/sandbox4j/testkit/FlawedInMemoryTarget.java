package org.sandbox4j.testkit;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.sandbox4j.core.Capability;
import org.sandbox4j.core.EntryKind;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.core.SandboxEntry;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxOperationNotSupported;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.testkit.tck.ConformanceTarget;
import org.sandbox4j.testkit.tck.GuestSide;

/**
 * An in-memory target whose sandbox has one deliberate shape flaw, to prove the file probes can
 * fail. (Escape flaws need links that lead somewhere: those are proved against the namespace
 * reference backend.)
 */
final class FlawedInMemoryTarget implements ConformanceTarget {

    enum Flaw {
        /** A read over its cap returns the first {@code maxBytes} bytes instead of refusing. */
        TRUNCATES_OVER_THE_CAP,
        /** A second write appends to the first. */
        APPENDS,
        /** Listings come back in reverse order. */
        LISTS_UNSORTED,
        /** Links are left out of listings. */
        HIDES_LINKS_FROM_LISTINGS,
        /** A directory is removed without {@code recursive}. */
        REMOVES_DIRECTORIES_WITHOUT_RECURSIVE,
        /** {@code remove} is not implemented at all (the interface's default refusal). */
        NO_REMOVE
    }

    private final Flaw flaw;
    private final Set<Capability> capabilities;

    FlawedInMemoryTarget(Flaw flaw, Set<Capability> capabilities) {
        this.flaw = flaw;
        this.capabilities = Set.copyOf(capabilities);
    }

    FlawedInMemoryTarget(Flaw flaw) {
        this(flaw, InMemoryConformanceTarget.FILE_CAPABILITIES);
    }

    @Override
    public SandboxBackend newBackend() {
        InMemoryBackend inner = InMemoryBackend.builder().name("flawed-" + flaw.name().toLowerCase())
                .capabilities(capabilities.toArray(new Capability[0])).build();
        return new ForwardingBackend(inner) {
            @Override
            public Sandbox acquire(SandboxKey key, SandboxSpec spec) {
                return new FlawedSandbox(inner.acquire(key, spec), flaw);
            }
        };
    }

    @Override
    public GuestSide guestSide(Sandbox sandbox) {
        return new InMemoryGuestSide(((FlawedSandbox) sandbox).inner);
    }

    private static final class FlawedSandbox extends ForwardingSandbox {
        private final InMemorySandbox inner;
        private final Flaw flaw;

        FlawedSandbox(InMemorySandbox inner, Flaw flaw) {
            super(inner);
            this.inner = inner;
            this.flaw = flaw;
        }

        @Override
        public void writeFile(String path, byte[] content, String workingDirectory) {
            if (flaw == Flaw.APPENDS) {
                Optional<SandboxEntry> existing = inner.stat(path, workingDirectory);
                if (existing.isPresent() && existing.get().kind() == EntryKind.FILE) {
                    byte[] before = inner.readFile(path, workingDirectory, Long.MAX_VALUE);
                    byte[] both = Arrays.copyOf(before, before.length + content.length);
                    System.arraycopy(content, 0, both, before.length, content.length);
                    inner.writeFile(path, both, workingDirectory);
                    return;
                }
            }
            inner.writeFile(path, content, workingDirectory);
        }

        @Override
        public byte[] readFile(String path, String workingDirectory, long maxBytes) {
            if (flaw == Flaw.TRUNCATES_OVER_THE_CAP) {
                byte[] whole = inner.readFile(path, workingDirectory, Long.MAX_VALUE);
                return Arrays.copyOf(whole, (int) Math.min(whole.length, maxBytes));
            }
            return inner.readFile(path, workingDirectory, maxBytes);
        }

        @Override
        public List<SandboxEntry> listDir(String path, String workingDirectory) {
            List<SandboxEntry> listing = new ArrayList<>(inner.listDir(path, workingDirectory));
            if (flaw == Flaw.LISTS_UNSORTED) {
                Collections.reverse(listing);
            }
            if (flaw == Flaw.HIDES_LINKS_FROM_LISTINGS) {
                listing.removeIf(entry -> entry.kind() == EntryKind.SYMLINK);
            }
            return listing;
        }

        @Override
        public void remove(String path, String workingDirectory, boolean recursive) {
            if (flaw == Flaw.NO_REMOVE) {
                throw new SandboxOperationNotSupported("this flawed sandbox does not implement remove");
            }
            inner.remove(path, workingDirectory, recursive || flaw == Flaw.REMOVES_DIRECTORIES_WITHOUT_RECURSIVE);
        }
    }
}
