package org.sandbox4j.codeact;

import java.lang.System.Logger;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;

import org.sandbox4j.core.CallerContext;
import org.sandbox4j.core.Capability;
import org.sandbox4j.core.Egress;
import org.sandbox4j.core.FileStore;
import org.sandbox4j.core.Identity;
import org.sandbox4j.core.ReclaimFailure;
import org.sandbox4j.core.SandboxRouter;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.TransferLimits;
import org.sandbox4j.core.hosttools.HostToolAggregate;
import org.sandbox4j.core.hosttools.HostToolRegistry;
import org.sandbox4j.core.outputs.OutputSink;
import org.sandbox4j.core.tool.SandboxTool;
import org.sandbox4j.core.tool.SandboxedTool;

/**
 * The {@code execute_code} kind: the model writes a short program, it runs in a closed sandbox,
 * and what it printed (and the files it was asked to produce) come back. Written against core
 * alone, so it runs unchanged on every backend.
 *
 * <pre>{@code
 * Optional<SandboxTool> tool = CodeAct.builder(router, "my-agent", context)
 *         .fileStore(uploads)                       // the model may share these files by name
 *         .outputs(OutputMode.DECLARED).outputSink(FileSystemSink.at(landing))
 *         .languages(Language.PYTHON, Language.JAVASCRIPT)
 *         .build();                                 // empty: no backend; throws: cannot serve
 * }</pre>
 *
 * <p>The spec is derived, never guessed: it requires {@code exec} and {@code files_in}, plus
 * {@code files_out} when outputs or host tools are wired;
 * egress is {@code closed}, or {@code allowlist} when the deployment names hosts — never
 * {@code unrestricted}.
 */
public final class CodeAct {

    /** The tool's name. */
    public static final String TOOL_NAME = "execute_code";

    /** The spec's kind: part of every sandbox's identity. */
    public static final String KIND = "codeact";

    /** How long one program may run. */
    public static final Duration DEFAULT_EXEC_TIMEOUT = Duration.ofSeconds(120);

    /** The most a program may print (both streams together) before it is stopped. */
    public static final long DEFAULT_MAX_OUTPUT_BYTES = 1024 * 1024;

    /*
     * Host tools need no capability beyond exec, files_in and files_out. The reference also requires
     * host_tools, which asserts that a process started by one exec outlives it; this transport holds
     * the launching exec open for the whole run instead, so it works on backends where each exec is
     * its own process namespace (bubblewrap) as well as on those where processes outlive an exec.
     */

    /** Files one call may hand back, unless the host says otherwise. */
    public static final int DEFAULT_MAX_OUTPUT_FILES = 8;

    /** The file a program writes, in {@link OutputMode#MANIFEST}, to name its outputs. */
    public static final String MANIFEST_FILE_NAME = "outputs.json";

    /** The largest manifest read, whatever the caps allow. */
    public static final long MAX_MANIFEST_BYTES = 64 * 1024;

    /** Default outbound transfer caps: the core defaults with {@value #DEFAULT_MAX_OUTPUT_FILES} files. */
    public static final TransferLimits DEFAULT_FILES_OUT = new TransferLimits(
            TransferLimits.DEFAULT_MAX_BYTES_PER_FILE, TransferLimits.DEFAULT_MAX_TOTAL_BYTES, DEFAULT_MAX_OUTPUT_FILES);

    private CodeAct() {
    }

    /**
     * A builder for the tool.
     *
     * @param router   the router; none, or one without a backend, means no tool
     * @param agentDir the agent directory, part of every key
     * @param context  where each call's key comes from
     */
    public static Builder builder(SandboxRouter router, String agentDir, CallerContext context) {
        return new Builder(router, agentDir, context);
    }

    /** Single-use builder; {@link #build()} validates. */
    public static final class Builder {
        private final SandboxRouter router;
        private final String agentDir;
        private final CallerContext context;
        private FileStore fileStore;
        private OutputSink outputSink;
        private OutputMode outputs = OutputMode.NONE;
        private HostToolRegistry hostTools;
        private List<Language> languages = List.of(Language.PYTHON);
        private List<String> egressAllow = List.of();
        private Egress egressWithoutHosts = Egress.CLOSED;
        private Duration execTimeout = DEFAULT_EXEC_TIMEOUT;
        private long maxOutputBytes = DEFAULT_MAX_OUTPUT_BYTES;
        private TransferLimits filesIn = TransferLimits.DEFAULT;
        private TransferLimits filesOut = DEFAULT_FILES_OUT;
        private String image;
        private String imageId;
        private String workDir = SandboxSpec.DEFAULT_WORK_DIR;
        private Consumer<ReclaimFailure> onReclaimFailure;
        private Logger logger;

        private Builder(SandboxRouter router, String agentDir, CallerContext context) {
            this.router = router;
            this.agentDir = Objects.requireNonNull(agentDir, "agentDir");
            this.context = Objects.requireNonNull(context, "context");
        }

        /** The host's files the model may share with a call by name; without one, no {@code files} parameter. */
        public Builder fileStore(FileStore store) {
            this.fileStore = store;
            return this;
        }

        /** Where saved outputs land; required with an output mode, refused without one. */
        public Builder outputSink(OutputSink sink) {
            this.outputSink = sink;
            return this;
        }

        public Builder outputs(OutputMode mode) {
            this.outputs = Objects.requireNonNull(mode, "mode");
            return this;
        }

        /** Host functions guest code may call; sealed when the tool is built. */
        public Builder hostTools(HostToolRegistry registry) {
            this.hostTools = registry;
            return this;
        }

        /** The languages offered, the first being the default (default: Python alone). */
        public Builder languages(Language first, Language... more) {
            List<Language> all = new ArrayList<>();
            all.add(first);
            all.addAll(List.of(more));
            this.languages = List.copyOf(new LinkedHashSet<>(all));
            return this;
        }

        /** Hosts the program may reach (the egress allowlist grammar); none means no network at all. */
        public Builder egressAllow(List<String> hosts) {
            this.egressAllow = List.copyOf(hosts);
            return this;
        }

        /**
         * What "no network" means when no host is allowed: {@link Egress#CLOSED} (the default: no
         * device beyond loopback) or {@link Egress#DENY_ALL} (every destination refused by a filter
         * outside the guest, the form a managed service such as sbx or ACA delivers).
         */
        public Builder egressWithoutHosts(Egress mode) {
            Objects.requireNonNull(mode, "mode");
            if (mode != Egress.CLOSED && mode != Egress.DENY_ALL) {
                throw new IllegalArgumentException("egressWithoutHosts takes " + Egress.CLOSED.wire() + " or "
                        + Egress.DENY_ALL.wire() + ", not '" + mode.wire() + "': a program without allowed hosts "
                        + "reaches nothing; name hosts with egressAllow to open some");
            }
            this.egressWithoutHosts = mode;
            return this;
        }

        public Builder execTimeout(Duration timeout) {
            this.execTimeout = Objects.requireNonNull(timeout, "timeout");
            return this;
        }

        /** The most a program may print (both streams together) before it is stopped. */
        public Builder maxOutputBytes(long bytes) {
            this.maxOutputBytes = bytes;
            return this;
        }

        /** Caps on what one call writes into the sandbox: shared files plus the program (plus the shim). */
        public Builder filesIn(TransferLimits limits) {
            this.filesIn = Objects.requireNonNull(limits, "limits");
            return this;
        }

        /** Caps on what one call hands back. */
        public Builder filesOut(TransferLimits limits) {
            this.filesOut = Objects.requireNonNull(limits, "limits");
            return this;
        }

        public Builder image(String image) {
            this.image = image;
            return this;
        }

        public Builder imageId(String imageId) {
            this.imageId = imageId;
            return this;
        }

        public Builder workDir(String workDir) {
            this.workDir = Objects.requireNonNull(workDir, "workDir");
            return this;
        }

        /** Told about every call directory left behind in a sandbox (a data-retention failure). */
        public Builder onReclaimFailure(Consumer<ReclaimFailure> handler) {
            this.onReclaimFailure = handler;
            return this;
        }

        public Builder logger(Logger logger) {
            this.logger = logger;
            return this;
        }

        /**
         * The spec every call acquires with, derived from this configuration.
         *
         * @throws IllegalArgumentException an impossible configuration (see {@link #build()})
         */
        public SandboxSpec spec() {
            return derive().spec();
        }

        /**
         * @return the tool, or empty when no backend is configured
         * @throws IllegalArgumentException impossible caps, a sink without an output mode, a blank
         *                                  or comma-joined egress host, host tools with a language
         *                                  that has no shim, a non-positive timeout
         * @throws org.sandbox4j.core.SandboxOutputSinkRequired an output mode without a sink
         * @throws org.sandbox4j.core.SandboxPolicyRefusal the router cannot serve the spec
         */
        public Optional<SandboxTool> build() {
            if (router == null || !router.enabled()) {
                return Optional.empty();
            }
            CodeActConfig config = derive();
            return Optional.of(bind(config));
        }

        /**
         * The same tool for a host program: each run answers with the program's own streams and exit
         * code beside the model's text. Validates as {@link #build()} does.
         *
         * @return the runner, or empty when no backend is configured
         */
        public Optional<CodeActRunner> buildRunner() {
            return build().map(CodeActRunner::new);
        }

        private SandboxTool bind(CodeActConfig config) {
            CodeActBody body = new CodeActBody(config);
            return SandboxedTool.builder(TOOL_NAME, config.spec())
                    .router(router)
                    .context(context)
                    .agentDir(agentDir)
                    .description(ToolDescription.of(config))
                    .parametersSchema(ToolDescription.schema(config))
                    .requiresApproval(config.aggregate().map(HostToolAggregate::requiresApproval).orElse(false))
                    .outputSink(outputSink)
                    .onReclaimFailure(onReclaimFailure)
                    .logger(logger)
                    .body(body)
                    .build()
                    .orElseThrow(); // the router has a backend: checked above
        }

        private CodeActConfig derive() {
            if (execTimeout.isNegative() || execTimeout.isZero()) {
                throw new IllegalArgumentException("the exec timeout must be positive, not " + execTimeout);
            }
            if (maxOutputBytes < 1) {
                throw new IllegalArgumentException("maxOutputBytes must be at least 1, not " + maxOutputBytes);
            }
            boolean withHostTools = hostTools != null && hostTools.size() > 0;
            int transportFiles = withHostTools ? 2 : 1; // the program, plus the shim
            if (filesIn.maxFiles() < transportFiles) {
                throw new IllegalArgumentException("filesIn allows " + filesIn.maxFiles() + " file(s), but every call "
                        + "writes " + transportFiles + " (the program" + (withHostTools ? " and the host-tool shim" : "")
                        + "); raise filesIn.maxFiles");
            }
            if (outputs == OutputMode.NONE && outputSink != null) {
                throw new IllegalArgumentException("an output sink was given but the output mode is NONE, so nothing "
                        + "would ever land in it; choose OutputMode.DECLARED or MANIFEST, or drop the sink");
            }
            if (outputs == OutputMode.MANIFEST && filesOut.maxFiles() < 2) {
                throw new IllegalArgumentException("OutputMode.MANIFEST needs filesOut.maxFiles of at least 2 (the "
                        + "manifest itself and one output), not " + filesOut.maxFiles());
            }
            if (withHostTools) {
                for (Language language : languages) {
                    if (!language.hasHostToolShim()) {
                        throw new IllegalArgumentException("host tools are wired, but " + language.wire()
                                + " programs have no host-tool shim (only python and javascript do); offer only "
                                + "those languages with host tools");
                    }
                }
            }
            List<String> hosts = egressHosts(egressAllow);
            Optional<HostToolAggregate> aggregate = withHostTools ? Optional.of(hostTools.aggregate()) : Optional.empty();

            Set<Capability> requires = EnumSet.of(Capability.EXEC, Capability.FILES_IN);
            if (outputs != OutputMode.NONE || withHostTools) {
                requires.add(Capability.FILES_OUT);
            }
            SandboxSpec.Builder spec = SandboxSpec.builder(KIND)
                    .workDir(workDir)
                    .requires(requires)
                    .filesIn(filesIn)
                    .filesOut(filesOut)
                    .outputsNamedAtCallTime(outputs != OutputMode.NONE)
                    .identities(aggregate.map(HostToolAggregate::identities).orElse(Set.<Identity>of()))
                    .egress(hosts.isEmpty() ? egressWithoutHosts : Egress.ALLOWLIST)
                    .egressAllow(hosts)
                    .image(image)
                    .imageId(imageId);
            return new CodeActConfig(spec.build(), languages, Optional.ofNullable(fileStore), outputs,
                    Optional.ofNullable(outputSink), Optional.ofNullable(hostTools).filter(r -> withHostTools),
                    aggregate, execTimeout, maxOutputBytes);
        }
    }

    /** The deployment's hosts: trimmed, de-duplicated; blank or comma-joined entries refused. */
    static List<String> egressHosts(List<String> hosts) {
        Set<String> unique = new LinkedHashSet<>();
        for (String host : hosts) {
            Objects.requireNonNull(host, "an egress host cannot be null");
            String trimmed = host.strip();
            if (trimmed.isEmpty()) {
                throw new IllegalArgumentException("an egress host cannot be blank; name each host the program may reach");
            }
            if (trimmed.contains(",") || trimmed.chars().anyMatch(Character::isWhitespace)) {
                throw new IllegalArgumentException("the egress host '" + trimmed + "' holds a comma or a space; give "
                        + "each host as its own entry");
            }
            unique.add(trimmed);
        }
        return List.copyOf(unique);
    }
}
