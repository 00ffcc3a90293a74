package org.sandbox4j.core.tool;

import java.lang.System.Logger;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;

import org.sandbox4j.core.CallerContext;
import org.sandbox4j.core.ReclaimFailure;
import org.sandbox4j.core.SandboxRouter;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.outputs.OutputSink;

/**
 * The settings a host gives a kind's tool whatever the kind, in one place: the router it runs on,
 * the context each call's key comes from, the agent directory in every key, where the artifacts
 * it saves land, who is told of a call directory left behind, and the log. A kind's own builder
 * (such as {@code CodeAct.builder(router, agentDir, context)}) takes the first three up front,
 * extends this with its own settings, and binds its body with {@link #binding};
 * {@link SandboxedTool.Builder} is the one that takes each by a setter.
 *
 * @param <B> the kind's builder, which every setter returns
 */
public abstract class KindBuilder<B extends KindBuilder<B>> {

    // Package-private: SandboxedTool.Builder sets the first three by setters and reads them all.
    SandboxRouter router;
    CallerContext context;
    String agentDir;
    OutputSink outputSink;
    Consumer<ReclaimFailure> onReclaimFailure;
    Logger logger;

    /** For {@link SandboxedTool.Builder}, which is given the router, context and agent dir by setters. */
    KindBuilder() {
    }

    /**
     * @param router   the router; none, or one without a backend, means no tool
     * @param agentDir the agent directory, part of every key
     * @param context  where each call's key comes from
     */
    protected KindBuilder(SandboxRouter router, String agentDir, CallerContext context) {
        this.router = router;
        this.agentDir = Objects.requireNonNull(agentDir, "agentDir");
        this.context = Objects.requireNonNull(context, "context");
    }

    /** Where the artifacts the tool saves land; required when it saves any. */
    public B outputSink(OutputSink sink) {
        this.outputSink = sink;
        return self();
    }

    /** Told about every call directory left behind in a sandbox (a data-retention failure). */
    public B onReclaimFailure(Consumer<ReclaimFailure> handler) {
        this.onReclaimFailure = handler;
        return self();
    }

    /** The tool's log (default: one named {@code org.sandbox4j.tool.<tool name>}). */
    public B logger(Logger logger) {
        this.logger = logger;
        return self();
    }

    /** Whether a tool is built at all: only on a router with a backend. */
    protected final boolean backendConfigured() {
        return router != null && router.enabled();
    }

    /** The sink given, if any. */
    protected final Optional<OutputSink> givenOutputSink() {
        return Optional.ofNullable(outputSink);
    }

    /**
     * The binding of this kind's tool, named {@code name} and serving {@code spec}, holding every
     * setting given here; the kind adds its description, schema, approval and body.
     */
    protected final SandboxedTool.Builder binding(String name, SandboxSpec spec) {
        return SandboxedTool.builder(name, spec).router(router).context(context).agentDir(agentDir)
                .outputSink(outputSink).onReclaimFailure(onReclaimFailure).logger(logger);
    }

    @SuppressWarnings("unchecked")
    private B self() {
        return (B) this;
    }
}
