package org.sandbox4j.testkit;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import org.sandbox4j.core.BackendDeclarations;
import org.sandbox4j.core.Capability;
import org.sandbox4j.core.Egress;
import org.sandbox4j.core.Isolation;
import org.sandbox4j.core.OsFamily;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxLimits;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.spi.BackendNames;

/**
 * A {@link SandboxBackend} for tests that serves one {@link InMemorySandbox} and records every
 * call. Thread-safe.
 *
 * <p>{@link #acquire} returns the same sandbox whatever the key or kind: this backend does not
 * model warm reuse per (key, kind). To test code that must see two different sandboxes, register
 * two backends. Like every backend, it makes the spec's work dir exist by the time
 * {@code acquire} returns (as a directory of the sandbox's modelled file system), unless a seeded
 * entry is already there.
 *
 * <p>Every declaration is configurable; by default it declares isolation
 * {@link Isolation#NONE}, the default capabilities, egress {ALLOWLIST, CLOSED}, the default
 * limits and no OS family. A router at its default floor ({@link Isolation#MICROVM}) refuses a
 * backend on rung NONE: tests lower the router's floor (or declare a stronger rung here).
 */
public final class InMemoryBackend implements SandboxBackend {

    /** The name unless the builder sets one. */
    public static final String DEFAULT_NAME = "in-memory";
    /** The rung unless the builder sets one: nothing separates this "sandbox" from the test. */
    public static final Isolation DEFAULT_ISOLATION = Isolation.NONE;
    /** What {@link #disposeScope} reports unless told otherwise. */
    public static final int DEFAULT_PURGE_COUNT = 1;
    private static final List<Egress> DEFAULT_EGRESS_MODES = List.of(Egress.ALLOWLIST, Egress.CLOSED);

    /**
     * One {@link #disposeScope} call.
     *
     * @param scope    the scope asked for
     * @param threadId the thread asked for
     */
    public record Purge(String scope, String threadId) {
        public Purge {
            Objects.requireNonNull(scope, "scope");
            Objects.requireNonNull(threadId, "threadId");
        }
    }

    private final String name;
    private final BackendDeclarations declarations;
    private final InMemorySandbox sandbox;
    private final Object lock = new Object();
    private final List<SandboxKey> keys = new ArrayList<>();
    private final List<SandboxSpec> specs = new ArrayList<>();
    private final List<SandboxKey> disposed = new ArrayList<>();
    private final List<Purge> purged = new ArrayList<>();
    private RuntimeException acquireError;
    private int purgeCount;

    private InMemoryBackend(Builder builder) {
        this.name = builder.name;
        this.declarations = builder.declarations();
        this.sandbox = builder.sandbox != null ? builder.sandbox : InMemorySandbox.builder().build();
        this.acquireError = builder.acquireError;
        this.purgeCount = builder.purgeCount;
    }

    public static Builder builder() {
        return new Builder();
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public BackendDeclarations declarations() {
        return declarations;
    }

    /**
     * Records {@code key}; throws the configured acquire error if one is set; otherwise records
     * {@code spec}, makes its work dir a directory when nothing is there (a seeded file there is left
     * for the test to use), and returns the one sandbox.
     */
    @Override
    public InMemorySandbox acquire(SandboxKey key, SandboxSpec spec) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(spec, "spec");
        synchronized (lock) {
            keys.add(key);
            if (acquireError != null) {
                throw acquireError;
            }
            specs.add(spec);
            if (sandbox.kindAt(spec.workDir()).isEmpty()) {
                sandbox.plantDirectory(spec.workDir());
            }
            return sandbox;
        }
    }

    /** Records {@code key}; deletes nothing (the sandbox lives as long as this backend). */
    @Override
    public void dispose(SandboxKey key) {
        synchronized (lock) {
            disposed.add(key);
        }
    }

    /** Records the call and reports the configured purge count; deletes nothing. */
    @Override
    public int disposeScope(String scope, String threadId) {
        synchronized (lock) {
            purged.add(new Purge(scope, threadId));
            return purgeCount;
        }
    }

    /** Every key {@link #acquire} was called with, in order, including calls that threw. */
    public List<SandboxKey> keys() {
        return snapshot(keys);
    }

    /** The spec of every acquire that succeeded, in order. */
    public List<SandboxSpec> specs() {
        return snapshot(specs);
    }

    /** Every key {@link #dispose} was called with, in order. */
    public List<SandboxKey> disposed() {
        return snapshot(disposed);
    }

    /** Every {@link #disposeScope} call, in order. */
    public List<Purge> purged() {
        return snapshot(purged);
    }

    /** A copy of one of the records, taken under the lock they are written under. */
    private <T> List<T> snapshot(List<T> record) {
        synchronized (lock) {
            return List.copyOf(record);
        }
    }

    /** The one sandbox every acquire returns. */
    public InMemorySandbox sandbox() {
        return sandbox;
    }

    /** Makes every later acquire throw {@code error} (after recording its key); null clears. */
    public void setAcquireError(RuntimeException error) {
        synchronized (lock) {
            this.acquireError = error;
        }
    }

    /** What later {@link #disposeScope} calls report. */
    public void setPurgeCount(int count) {
        requireCount(count);
        synchronized (lock) {
            this.purgeCount = count;
        }
    }

    private static int requireCount(int count) {
        if (count < 0) {
            throw new IllegalArgumentException("a purge count cannot be negative, not " + count);
        }
        return count;
    }

    /**
     * Mutable, single-use builder. Declarations left unset keep {@link BackendDeclarations}'
     * readings of silence, except egress, which defaults to {ALLOWLIST, CLOSED} so the default
     * spec (egress CLOSED) is served.
     */
    public static final class Builder {

        private String name = DEFAULT_NAME;
        private Isolation isolation = DEFAULT_ISOLATION;
        private Collection<Capability> capabilities;
        private Collection<Egress> egressModes = DEFAULT_EGRESS_MODES;
        private SandboxLimits limits = SandboxLimits.DEFAULT;
        private Collection<OsFamily> osFamilies;
        private BackendDeclarations declarations;
        private InMemorySandbox sandbox;
        private RuntimeException acquireError;
        private int purgeCount = DEFAULT_PURGE_COUNT;

        private Builder() {
        }

        public Builder name(String name) {
            this.name = BackendNames.require(name);
            return this;
        }

        public Builder isolation(Isolation isolation) {
            return declaring(() -> this.isolation = Objects.requireNonNull(isolation, "isolation"));
        }

        public Builder capabilities(Capability... capabilities) {
            return declaring(() -> this.capabilities = List.of(capabilities));
        }

        public Builder egressModes(Egress... modes) {
            return declaring(() -> this.egressModes = List.of(modes));
        }

        /** An explicit null is malformed (as in {@link BackendDeclarations}): {@link #build()} refuses it. */
        public Builder limits(SandboxLimits limits) {
            return declaring(() -> this.limits = limits);
        }

        public Builder osFamilies(OsFamily... families) {
            return declaring(() -> this.osFamilies = List.of(families));
        }

        /** Sets every declaration at once; a later call to a single-declaration setter starts from the defaults again. */
        public Builder declarations(BackendDeclarations declarations) {
            this.declarations = Objects.requireNonNull(declarations, "declarations");
            return this;
        }

        /** The sandbox every acquire returns; a fresh empty one unless set. */
        public Builder sandbox(InMemorySandbox sandbox) {
            this.sandbox = Objects.requireNonNull(sandbox, "sandbox");
            return this;
        }

        /** Makes every acquire throw {@code error} (after recording its key); null clears. */
        public Builder acquireError(RuntimeException error) {
            this.acquireError = error;
            return this;
        }

        public Builder purgeCount(int count) {
            this.purgeCount = requireCount(count);
            return this;
        }

        public InMemoryBackend build() {
            return new InMemoryBackend(this);
        }

        /** Runs a single-declaration setter, which drops any {@link #declarations(BackendDeclarations)} given. */
        private Builder declaring(Runnable setter) {
            setter.run();
            this.declarations = null;
            return this;
        }

        private BackendDeclarations declarations() {
            if (declarations != null) {
                return declarations;
            }
            BackendDeclarations.Builder declared = BackendDeclarations.builder(isolation);
            if (capabilities != null) {
                declared.capabilities(capabilities);
            }
            declared.egressModes(egressModes);
            declared.limits(limits);
            if (osFamilies != null) {
                declared.osFamilies(osFamilies);
            }
            return declared.build();
        }
    }
}
