package org.sandbox4j.codeact;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

import org.sandbox4j.core.CallerContext;
import org.sandbox4j.core.Capability;
import org.sandbox4j.core.Egress;
import org.sandbox4j.core.FileStore;
import org.sandbox4j.core.Identity;
import org.sandbox4j.core.SandboxRouter;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.TransferLimits;
import org.sandbox4j.core.hosttools.HostToolAggregate;
import org.sandbox4j.core.hosttools.HostToolRegistry;
import org.sandbox4j.core.tool.KindBuilder;
import org.sandbox4j.core.tool.SandboxTool;

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

    /** Single-use builder: core's {@link KindBuilder} settings and the kind's own; {@link #build()} validates. */
    public static final class Builder extends KindBuilder<Builder> {
        private FileStore fileStore;
        private OutputMode outputs = OutputMode.NONE;
        private HostToolRegistry hostTools;
        private List<Language> languages = List.of(Language.PYTHON);
        private List<String> egressAllow = List.of();
        private Egress egressWithoutHosts = Egress.CLOSED;
        private Duration execTimeout = DEFAULT_EXEC_TIMEOUT;
        private long maxOutputBytes = DEFAULT_MAX_OUTPUT_BYTES;
        /** The spec's own settings the host gives (image, work dir, caps); the rest is derived in {@link #derive}. */
        private final SandboxSpec.Builder hostSpec = SandboxSpec.builder(KIND).filesOut(DEFAULT_FILES_OUT);

        private Builder(SandboxRouter router, String agentDir, CallerContext context) {
            super(router, agentDir, context);
        }

        /** The host's files the model may share with a call by name; without one, no {@code files} parameter. */
        public Builder fileStore(FileStore store) {
            this.fileStore = store;
            return this;
        }

        /** What a call may hand back (default none); any mode but NONE needs an output sink, and NONE refuses one. */
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
            hostSpec.filesIn(Objects.requireNonNull(limits, "limits"));
            return this;
        }

        /** Caps on what one call hands back. */
        public Builder filesOut(TransferLimits limits) {
            hostSpec.filesOut(Objects.requireNonNull(limits, "limits"));
            return this;
        }

        public Builder image(String image) {
            hostSpec.image(image);
            return this;
        }

        public Builder imageId(String imageId) {
            hostSpec.imageId(imageId);
            return this;
        }

        public Builder workDir(String workDir) {
            hostSpec.workDir(Objects.requireNonNull(workDir, "workDir"));
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
            if (!backendConfigured()) {
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
            boolean supervised = withHostTools();
            return build().map(tool -> new CodeActRunner(tool, supervised));
        }

        private boolean withHostTools() {
            return hostTools != null && hostTools.size() > 0;
        }

        private SandboxTool bind(CodeActConfig config) {
            CodeActBody body = new CodeActBody(config);
            return binding(TOOL_NAME, config.spec())
                    .description(ToolDescription.of(config))
                    .parametersSchema(ToolDescription.schema(config))
                    .requiresApproval(config.aggregate().map(HostToolAggregate::requiresApproval).orElse(false))
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
            SandboxSpec configured = hostSpec.build();
            TransferLimits filesIn = configured.filesIn();
            boolean withHostTools = withHostTools();
            int transportFiles = withHostTools ? 2 : 1; // the program, plus the shim
            if (filesIn.maxFiles() < transportFiles) {
                throw new IllegalArgumentException("filesIn allows " + filesIn.maxFiles() + " file(s), but every call "
                        + "writes " + transportFiles + " (the program" + (withHostTools ? " and the host-tool shim" : "")
                        + "); raise filesIn.maxFiles");
            }
            if (outputs == OutputMode.NONE && givenOutputSink().isPresent()) {
                throw new IllegalArgumentException("an output sink was given but the output mode is NONE, so nothing "
                        + "would ever land in it; choose OutputMode.DECLARED or MANIFEST, or drop the sink");
            }
            if (outputs == OutputMode.MANIFEST && configured.filesOut().maxFiles() < 2) {
                throw new IllegalArgumentException("OutputMode.MANIFEST needs filesOut.maxFiles of at least 2 (the "
                        + "manifest itself and one output), not " + configured.filesOut().maxFiles());
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
            SandboxSpec spec = configured.toBuilder()
                    .requires(requires)
                    .outputsNamedAtCallTime(outputs != OutputMode.NONE)
                    .identities(aggregate.map(HostToolAggregate::identities).orElse(Set.<Identity>of()))
                    .egress(hosts.isEmpty() ? egressWithoutHosts : Egress.ALLOWLIST)
                    .egressAllow(hosts)
                    .build();
            return new CodeActConfig(spec, languages, Optional.ofNullable(fileStore), outputs,
                    givenOutputSink(), Optional.ofNullable(hostTools).filter(r -> withHostTools),
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
