package org.sandbox4j.testkit.tck;

import java.util.function.UnaryOperator;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.testkit.ForwardingBackend;

/**
 * Deliberately broken wrappers around a real target, for proving that a probe can fail on the
 * breakage it names. Each breaks one duty and passes everything else through.
 */
final class BrokenTargets {

    /** The conversation every key is collapsed into. */
    static final String SHARED_THREAD = "one-thread-for-everyone";

    private BrokenTargets() {
    }

    /** Serves every kind from the sandbox of {@link Conformance#KIND}: two kinds share one sandbox. */
    static ConformanceTarget ignoringKind(ConformanceTarget real) {
        return wrap(real, key -> key, spec -> SandboxSpec.builder(Conformance.KIND).workDir(spec.workDir())
                .requires(spec.requires()).build(), false, sandbox -> sandbox);
    }

    /** Serves every conversation from one thread's sandboxes: conversations share a sandbox. */
    static ConformanceTarget ignoringConversation(ConformanceTarget real) {
        return wrap(real, key -> new SandboxKey(key.scope(), SHARED_THREAD, key.agentDir()), spec -> spec, false,
                sandbox -> sandbox);
    }

    /** {@code dispose(key)} does nothing. */
    static ConformanceTarget ignoringDispose(ConformanceTarget real) {
        return wrap(real, key -> key, spec -> spec, true, sandbox -> sandbox);
    }

    private static ConformanceTarget wrap(ConformanceTarget real, UnaryOperator<SandboxKey> keys,
            UnaryOperator<SandboxSpec> specs, boolean ignoreDispose, UnaryOperator<Sandbox> sandboxes) {
        return new ConformanceTarget() {
            @Override
            public SandboxBackend newBackend() {
                SandboxBackend backend = real.newBackend();
                return new ForwardingBackend(backend) {
                    @Override
                    public String name() {
                        return backend.name() + "-broken";
                    }

                    @Override
                    public Sandbox acquire(SandboxKey key, SandboxSpec spec) {
                        return sandboxes.apply(backend.acquire(keys.apply(key), specs.apply(spec)));
                    }

                    @Override
                    public void dispose(SandboxKey key) {
                        if (!ignoreDispose) {
                            backend.dispose(keys.apply(key));
                        }
                    }

                    @Override
                    public int disposeScope(String scope, String threadId) {
                        return backend.disposeScope(scope, keys.apply(new SandboxKey(scope, threadId, "")).threadId());
                    }
                };
            }

            @Override
            public String workBase() {
                return real.workBase();
            }

            @Override
            public SandboxSpec spec(SandboxSpec.Builder suiteSpec) {
                return real.spec(suiteSpec);
            }

            @Override
            public GuestSide guestSide(Sandbox sandbox) {
                return real.guestSide(sandbox);
            }
        };
    }
}
