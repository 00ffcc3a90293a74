package org.sandbox4j.core.tool;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.time.Duration;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;

import org.sandbox4j.core.CallerContext;
import org.sandbox4j.core.Capability;
import org.sandbox4j.core.ExecListener;
import org.sandbox4j.core.spi.ErrorDetail;
import org.sandbox4j.core.GuestPathReclaim;
import org.sandbox4j.core.spi.Json;
import org.sandbox4j.core.ReclaimFailure;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxInterrupted;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxRouter;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.outputs.Outputs;

/**
 * Binds a kind's body to a router: the one place every kind's calls get their key, their sandbox,
 * their call directory and its reclaim. {@link Builder#build()} returns nothing when no backend is
 * configured (attach no tool), and throws when the router cannot serve the spec (a
 * misconfiguration the host must see at start-up, not the model at first use).
 *
 * <p>Around every call: a fresh {@link ToolCall}; the body; then, however the body ended, each
 * acquired sandbox's call directory removed through {@link GuestPathReclaim}. A failed removal is
 * logged and reported to the host's {@link ReclaimFailure} handler; it never replaces the body's
 * result. A body that fails unexpectedly gives the model {@link FrameworkCalls#FAILED}; the detail
 * is logged.
 */
public final class SandboxedTool {

    /** Bound on removing a call's directory. */
    public static final Duration DEFAULT_RECLAIM_TIMEOUT = Duration.ofSeconds(30);

    /** Bound on removing it when the call was cancelled: the caller is waiting to stop. */
    public static final Duration CANCELLED_RECLAIM_TIMEOUT = Duration.ofSeconds(2);

    /** The sentence a body that threw gives the model (its tests read it here). */
    static final String FAILED = FrameworkCalls.FAILED;

    private final String name;
    private final SandboxSpec spec;
    private final SandboxRouter router;
    private final CallerContext context;
    private final String agentDir;
    private final String description;
    private final String parametersSchema;
    private final boolean requiresApproval;
    private final ToolBody body;
    private final Consumer<ReclaimFailure> onReclaimFailure;
    private final Duration reclaimTimeout;
    private final Logger logger;

    private SandboxedTool(Builder b) {
        this.name = b.name;
        this.spec = b.spec;
        this.router = b.router;
        this.context = b.context;
        this.agentDir = b.agentDir;
        this.description = b.description;
        this.parametersSchema = b.parametersSchema;
        this.requiresApproval = b.requiresApproval;
        this.body = b.body;
        this.onReclaimFailure = b.onReclaimFailure;
        this.reclaimTimeout = b.reclaimTimeout;
        this.logger = b.logger != null ? b.logger : System.getLogger("org.sandbox4j.tool." + b.name);
    }

    /** A builder for a tool named {@code name} serving {@code spec}. */
    public static Builder builder(String name, SandboxSpec spec) {
        return new Builder(name, spec);
    }

    String name() {
        return name;
    }

    SandboxSpec spec() {
        return spec;
    }

    SandboxRouter router() {
        return router;
    }

    CallerContext context() {
        return context;
    }

    String agentDir() {
        return agentDir;
    }

    String description() {
        return description;
    }

    String parametersSchema() {
        return parametersSchema;
    }

    boolean requiresApproval() {
        return requiresApproval;
    }

    Logger logger() {
        return logger;
    }

    ToolResult invoke(Map<String, Object> arguments, Optional<ExecListener> output) {
        ToolCall call = new ToolCall(this, output);
        boolean cancelled = false;
        try {
            return body.call(call, Collections.unmodifiableMap(new LinkedHashMap<>(arguments)));
        } catch (ToolRefusal refusal) {
            return ToolResult.error(refusal.sentence());
        } catch (SandboxInterrupted interrupted) {
            cancelled = true;
            throw interrupted;
        } catch (RuntimeException failure) {
            logger.log(Level.ERROR, () -> name + ": the call failed: " + ErrorDetail.of(failure));
            return ToolResult.error(FAILED);
        } finally {
            // Cancellation clears the flag so the removal can run, bounded short, then restores it.
            boolean interrupted = Thread.interrupted() || cancelled;
            reclaim(call, interrupted ? min(reclaimTimeout, CANCELLED_RECLAIM_TIMEOUT) : reclaimTimeout);
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void reclaim(ToolCall call, Duration bound) {
        for (Map.Entry<SandboxKey, Sandbox> entry : call.close().entrySet()) {
            Sandbox sandbox = entry.getValue();
            String workDir = spec.workDirIn(sandbox);
            String path = (workDir.endsWith("/") ? workDir : workDir + "/") + call.callId();
            Optional<String> reason;
            try {
                reason = GuestPathReclaim.reclaim(sandbox, path, workDir, bound);
            } catch (SandboxInterrupted cancelled) {
                logger.log(Level.WARNING, () -> name + ": " + path + " was not reclaimed: cancelled");
                Thread.currentThread().interrupt();
                return;
            }
            if (reason.isEmpty()) {
                continue;
            }
            logger.log(Level.WARNING, () -> name + ": " + path + " was not reclaimed: " + reason.get());
            if (onReclaimFailure != null) {
                try {
                    onReclaimFailure.accept(new ReclaimFailure(name, entry.getKey(), path, reason.get()));
                } catch (RuntimeException handlerFailure) {
                    logger.log(Level.WARNING, () -> name + ": the reclaim-failure handler failed: "
                            + ErrorDetail.of(handlerFailure));
                }
            }
        }
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }

    /**
     * Single-use builder: the {@link KindBuilder} settings, each by a setter, and the kind's own
     * shape; {@link #build()} validates in the reference's order.
     */
    public static final class Builder extends KindBuilder<Builder> {
        private final String name;
        private final SandboxSpec spec;
        private String description;
        private String parametersSchema = "{\"type\":\"object\",\"properties\":{}}";
        private boolean requiresApproval;
        private ToolBody body;
        private Duration reclaimTimeout = DEFAULT_RECLAIM_TIMEOUT;

        private Builder(String name, SandboxSpec spec) {
            this.name = Objects.requireNonNull(name, "name");
            this.spec = Objects.requireNonNull(spec, "spec");
        }

        /** The router; none, or one with no backend, means no tool is built. */
        public Builder router(SandboxRouter router) {
            this.router = router;
            return this;
        }

        public Builder context(CallerContext context) {
            this.context = context;
            return this;
        }

        /** The agent directory: part of every key. */
        public Builder agentDir(String agentDir) {
            this.agentDir = agentDir;
            return this;
        }

        public Builder description(String description) {
            this.description = description;
            return this;
        }

        /** The JSON schema of the parameters (an object schema), as JSON text. */
        public Builder parametersSchema(String schema) {
            this.parametersSchema = schema;
            return this;
        }

        public Builder requiresApproval(boolean required) {
            this.requiresApproval = required;
            return this;
        }

        public Builder body(ToolBody body) {
            this.body = body;
            return this;
        }

        public Builder reclaimTimeout(Duration bound) {
            this.reclaimTimeout = bound;
            return this;
        }

        /**
         * @return empty when there is no router or it has no backend: attach nothing
         * @throws org.sandbox4j.core.SandboxOutputSinkRequired the spec lands artifacts and no sink was given
         * @throws IllegalArgumentException a malformed name, schema, timeout, or outputs without
         *                                  {@link Capability#FILES_OUT}
         * @throws org.sandbox4j.core.SandboxPolicyRefusal the router cannot serve the spec
         */
        public Optional<SandboxTool> build() {
            if (!backendConfigured()) {
                return Optional.empty();
            }
            if (name.isBlank()) {
                throw new IllegalArgumentException("a tool needs a name");
            }
            Objects.requireNonNull(context, "context: a tool reads its key from the host's CallerContext");
            Objects.requireNonNull(agentDir, "agentDir");
            Objects.requireNonNull(description, "description: the model needs to know what the tool does");
            Objects.requireNonNull(body, "body");
            Objects.requireNonNull(reclaimTimeout, "reclaimTimeout");
            try {
                Json.parseObject(parametersSchema);
            } catch (Json.Malformed malformed) {
                throw new IllegalArgumentException("the parameters schema of " + name + " is not a JSON object: "
                        + malformed.getMessage(), malformed);
            }
            if (Outputs.specLandsArtifacts(spec) && outputSink == null) {
                throw Outputs.missingSinkRefusal(spec, Outputs.landingOutputs(spec), name);
            }
            if ((!spec.declaredOutputs().isEmpty() || spec.outputsNamedAtCallTime())
                    && !spec.requires().contains(Capability.FILES_OUT)) {
                throw new IllegalArgumentException("the spec of " + name + " declares outputs but does not require '"
                        + Capability.FILES_OUT.wire() + "'; add it to requires so a backend that cannot read files back "
                        + "is refused at construction");
            }
            if (reclaimTimeout.isNegative() || reclaimTimeout.isZero()) {
                throw new IllegalArgumentException("a reclaim timeout must be positive, not " + reclaimTimeout);
            }
            router.ensureCanServe(spec);
            return Optional.of(new SandboxTool(new SandboxedTool(this)));
        }
    }

}
