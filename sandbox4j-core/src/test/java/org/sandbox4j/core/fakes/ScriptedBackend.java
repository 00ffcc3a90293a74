package org.sandbox4j.core.fakes;

import java.util.ArrayList;
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

/**
 * A backend for core's own unit tests (core cannot depend on the testkit): it declares what the
 * builder says, serves one {@link ScriptedSandbox} whatever the key, and records every call.
 * Like every backend it makes the spec's work dir exist by the time {@code acquire} returns,
 * unless a seeded entry is already there. Disposal deletes nothing. Thread-safe.
 *
 * <p>By default it declares isolation {@link Isolation#NONE}, the default capabilities and limits,
 * egress {ALLOWLIST, CLOSED} (so the default spec is served) and no OS family: tests lower the
 * router's floor to admit it.
 */
public final class ScriptedBackend implements SandboxBackend {

    private static final String DEFAULT_NAME = "scripted";
    private static final int DEFAULT_PURGE_COUNT = 1;
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
    private final ScriptedSandbox sandbox;
    private final int purgeCount;
    private final List<SandboxKey> keys = new ArrayList<>();
    private final List<SandboxSpec> specs = new ArrayList<>();
    private final List<SandboxKey> disposed = new ArrayList<>();
    private final List<Purge> purged = new ArrayList<>();
    private RuntimeException acquireError;

    private ScriptedBackend(Builder builder) {
        this.name = builder.name;
        this.declarations = builder.declarations();
        this.sandbox = builder.sandbox != null ? builder.sandbox : ScriptedSandbox.builder().build();
        this.purgeCount = builder.purgeCount;
        this.acquireError = builder.acquireError;
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
     * Records {@code key}; throws the acquire error if one is set; otherwise records {@code spec},
     * makes its work dir exist and serves the sandbox.
     */
    @Override
    public synchronized ScriptedSandbox acquire(SandboxKey key, SandboxSpec spec) {
        keys.add(Objects.requireNonNull(key, "key"));
        Objects.requireNonNull(spec, "spec");
        if (acquireError != null) {
            throw acquireError;
        }
        specs.add(spec);
        sandbox.makeDirectoryUnlessPresent(spec.workDir());
        return sandbox;
    }

    @Override
    public synchronized void dispose(SandboxKey key) {
        disposed.add(key);
    }

    /** Records the call and reports the configured count. */
    @Override
    public synchronized int disposeScope(String scope, String threadId) {
        purged.add(new Purge(scope, threadId));
        return purgeCount;
    }

    /** Every key {@link #acquire} was called with, in order, including calls that threw. */
    public synchronized List<SandboxKey> keys() {
        return List.copyOf(keys);
    }

    /** The spec of every acquire that succeeded, in order. */
    public synchronized List<SandboxSpec> specs() {
        return List.copyOf(specs);
    }

    /** Every key {@link #dispose} was called with, in order. */
    public synchronized List<SandboxKey> disposed() {
        return List.copyOf(disposed);
    }

    /** Every {@link #disposeScope} call, in order. */
    public synchronized List<Purge> purged() {
        return List.copyOf(purged);
    }

    /** The one sandbox every acquire returns. */
    public ScriptedSandbox sandbox() {
        return sandbox;
    }

    /** Makes every later acquire throw {@code error} (after recording its key); null clears. */
    public synchronized void setAcquireError(RuntimeException error) {
        this.acquireError = error;
    }

    /** Mutable, single-use builder; a declaration left unset keeps {@link BackendDeclarations}' default. */
    public static final class Builder {

        private String name = DEFAULT_NAME;
        private Isolation isolation = Isolation.NONE;
        private List<Capability> capabilities;
        private List<Egress> egressModes = DEFAULT_EGRESS_MODES;
        private SandboxLimits limits = SandboxLimits.DEFAULT;
        private List<OsFamily> osFamilies;
        private ScriptedSandbox sandbox;
        private RuntimeException acquireError;
        private int purgeCount = DEFAULT_PURGE_COUNT;

        private Builder() {
        }

        public Builder name(String name) {
            this.name = Objects.requireNonNull(name, "name");
            return this;
        }

        public Builder isolation(Isolation isolation) {
            this.isolation = Objects.requireNonNull(isolation, "isolation");
            return this;
        }

        public Builder capabilities(Capability... capabilities) {
            this.capabilities = List.of(capabilities);
            return this;
        }

        public Builder egressModes(Egress... modes) {
            this.egressModes = List.of(modes);
            return this;
        }

        public Builder limits(SandboxLimits limits) {
            this.limits = limits;
            return this;
        }

        public Builder osFamilies(OsFamily... families) {
            this.osFamilies = List.of(families);
            return this;
        }

        /** The sandbox every acquire returns; a fresh empty one unless set. */
        public Builder sandbox(ScriptedSandbox sandbox) {
            this.sandbox = Objects.requireNonNull(sandbox, "sandbox");
            return this;
        }

        /** Makes every acquire throw {@code error} (after recording its key). */
        public Builder acquireError(RuntimeException error) {
            this.acquireError = error;
            return this;
        }

        public Builder purgeCount(int count) {
            this.purgeCount = count;
            return this;
        }

        public ScriptedBackend build() {
            return new ScriptedBackend(this);
        }

        private BackendDeclarations declarations() {
            BackendDeclarations.Builder declared = BackendDeclarations.builder(isolation).egressModes(egressModes)
                    .limits(limits);
            if (capabilities != null) {
                declared.capabilities(capabilities);
            }
            if (osFamilies != null) {
                declared.osFamilies(osFamilies);
            }
            return declared.build();
        }
    }
}
