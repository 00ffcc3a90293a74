package org.sandbox4j.bench;

import java.util.UUID;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxSpec;

/**
 * A key no sandbox has yet, made before each cold acquire; the sandbox acquired under it is
 * disposed of after (neither is measured).
 */
@State(Scope.Thread)
public class ColdKey {

    static final String SCOPE = "cold";

    private SandboxKey key;
    private SandboxBackend acquiredFrom;

    @Setup(Level.Invocation)
    public void fresh() {
        key = new SandboxKey(WarmSandboxBenchmark.TENANT, SCOPE, UUID.randomUUID().toString());
        acquiredFrom = null;
    }

    /** The measured call: a new sandbox under this key. */
    Sandbox acquire(SandboxBackend backend, SandboxSpec spec) {
        acquiredFrom = backend;
        return backend.acquire(key, spec);
    }

    @TearDown(Level.Invocation)
    public void dispose() {
        if (acquiredFrom != null) {
            acquiredFrom.dispose(key);
        }
    }
}
