package org.sandbox4j.testkit;

import java.util.Objects;
import org.sandbox4j.core.BackendDeclarations;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxSpec;

/**
 * A {@link SandboxBackend} that forwards every call to another one, in the style of Guava's
 * {@code Forwarding*} classes. It is for test doubles that break or record one behaviour and pass
 * everything else through (a backend that renames itself, lies about its declarations, loses its
 * disposals, or wraps the sandboxes it hands out): subclass it and override only the method
 * concerned. Overriding one method changes only that behaviour; every other call still reaches
 * {@link #delegate()} unchanged.
 */
public abstract class ForwardingBackend implements SandboxBackend {

    private final SandboxBackend delegate;

    protected ForwardingBackend(SandboxBackend delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
    }

    /** The backend every call not overridden goes to. */
    protected SandboxBackend delegate() {
        return delegate;
    }

    @Override
    public String name() {
        return delegate.name();
    }

    @Override
    public BackendDeclarations declarations() {
        return delegate.declarations();
    }

    @Override
    public Sandbox acquire(SandboxKey key, SandboxSpec spec) {
        return delegate.acquire(key, spec);
    }

    @Override
    public void dispose(SandboxKey key) {
        delegate.dispose(key);
    }

    @Override
    public int disposeScope(String scope, String threadId) {
        return delegate.disposeScope(scope, threadId);
    }
}
