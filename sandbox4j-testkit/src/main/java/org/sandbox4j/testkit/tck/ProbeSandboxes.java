package org.sandbox4j.testkit.tck;

import java.lang.System.Logger.Level;
import java.util.UUID;
import org.sandbox4j.core.spi.ErrorDetail;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxSpec;

/**
 * Sandboxes a probe acquires for itself, beside its suite's own: fresh keys under
 * {@link Conformance#SCOPE}, specs of another kind, and clean-up that never replaces the probe's
 * own verdict.
 */
final class ProbeSandboxes {

    private static final System.Logger LOG = System.getLogger(ProbeSandboxes.class.getName());
    private static final int RUN_ID_CHARS = 12;

    private ProbeSandboxes() {
    }

    /** A fresh conversation id: {@code tck-<label>-<12 hex>}, never reused. */
    static String freshThread(String label) {
        return "tck-" + label + "-" + UUID.randomUUID().toString().replace("-", "").substring(0, RUN_ID_CHARS);
    }

    /** A key in {@link Conformance#SCOPE} for a fresh conversation. */
    static SandboxKey freshKey(String label) {
        return new SandboxKey(Conformance.SCOPE, freshThread(label), Conformance.KIND);
    }

    /** A {@link FreshKey} of {@code context}'s backend. */
    static FreshKey fresh(ProbeContext context, String label) {
        return new FreshKey(context.backend(), freshKey(label));
    }

    /**
     * A fresh key of a probe's own, disposed of quietly on close, so the probe's sandbox goes
     * whatever its verdict and clean-up never replaces that verdict.
     *
     * @param backend the instance the key's sandboxes are acquired from and disposed of by
     * @param key     a key in {@link Conformance#SCOPE} for a fresh conversation
     */
    record FreshKey(SandboxBackend backend, SandboxKey key) implements AutoCloseable {

        /** Acquires the key with the suite's spec, its working directory made. */
        Placed acquire(ProbeContext context) {
            return acquireWithWorkingDirectory(context, backend, key, context.spec());
        }

        @Override
        public void close() {
            disposeQuietly(backend, key);
        }
    }

    /** The suite's spec with another kind: built the way the runner builds it, through the target. */
    static SandboxSpec ofKind(ProbeContext context, String kind) {
        SandboxSpec suiteSpec = context.spec();
        return context.target().spec(SandboxSpec.builder(kind).workDir(suiteSpec.workDir())
                .requires(suiteSpec.requires()));
    }

    /**
     * The suite's spec with a work dir of its own under the target's work base, which nothing has
     * planted: built the way the runner builds it, through the target.
     */
    static SandboxSpec withFreshWorkDir(ProbeContext context, String label) {
        SandboxSpec suiteSpec = context.spec();
        return context.target().spec(SandboxSpec.builder(suiteSpec.kind())
                .workDir(context.target().workBase() + "/" + freshThread(label)).requires(suiteSpec.requires()));
    }

    /**
     * Acquires and makes the sandbox's working directory exist in it: the spec's work dir, or where
     * the backend relocated it ({@link SandboxSpec#workDirIn}), which may differ per sandbox.
     */
    static Placed acquireWithWorkingDirectory(ProbeContext context, SandboxBackend backend, SandboxKey key,
            SandboxSpec spec) {
        Sandbox sandbox = backend.acquire(key, spec);
        String workingDirectory = spec.workDirIn(sandbox);
        context.target().guestSide(sandbox).plantDirectory(workingDirectory);
        return new Placed(sandbox, workingDirectory);
    }

    /**
     * A sandbox a probe acquired, with its own working directory.
     *
     * @param sandbox          the handle
     * @param workingDirectory where its work dir is (the suite's, unless the backend relocates)
     */
    record Placed(Sandbox sandbox, String workingDirectory) {

        /** The absolute path of {@code name} in this sandbox's working directory. */
        String in(String name) {
            return ConformancePaths.under(workingDirectory).in(name);
        }

        void writeFile(String name, byte[] content) {
            sandbox.writeFile(name, content, workingDirectory);
        }
    }

    /** Disposes of the key and its conversation; a failure is logged, never raised (clean-up must not mask a verdict). */
    static void disposeQuietly(SandboxBackend backend, SandboxKey key) {
        disposeQuietly(backend, key, "a probe's sandbox");
    }

    /** {@link #disposeQuietly(SandboxBackend, SandboxKey)}, the log naming the sandbox as {@code which}. */
    static void disposeQuietly(SandboxBackend backend, SandboxKey key, String which) {
        try {
            backend.dispose(key);
            backend.disposeScope(key.scope(), key.threadId());
        } catch (RuntimeException failure) {
            LOG.log(Level.WARNING, () -> "backend '" + backend.name() + "' failed to dispose of " + which
                    + " (its dispose must never throw): " + ErrorDetail.of(failure));
        }
    }
}
