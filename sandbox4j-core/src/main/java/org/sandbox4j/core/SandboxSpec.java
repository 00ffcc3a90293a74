package org.sandbox4j.core;

import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * What a workload asks of a sandbox. The component order is a compatibility contract: new
 * components are only ever appended.
 *
 * <p>Build one with {@link #builder(String)}. Defaults: no image, egress {@link Egress#CLOSED}
 * with an empty allowlist, work dir {@value #DEFAULT_WORK_DIR}, requires
 * {@link Capability#DEFAULT_CAPABILITIES}, no isolation opinion, no declared outputs, default
 * transfer limits both ways, no identities, no OS family.
 *
 * @param kind                   the workload kind; part of a sandbox's identity
 * @param image                  opaque image reference the backend resolves
 * @param imageId                backend-native pinned image id; skips resolution
 * @param egressAllow            the hosts an {@link Egress#ALLOWLIST} spec may reach; everything else is denied
 * @param workDir                guest-native working directory; never rewritten, never used to infer the OS
 * @param labels                 extra labels for the provider's records
 * @param requires               capabilities the workload needs
 * @param minIsolation           a floor the spec raises the host's floor to (never lowers); empty = no opinion
 * @param declaredOutputs        files collected after the workload runs
 * @param filesIn                caps on files written into the sandbox
 * @param filesOut               caps on files read out of it
 * @param outputsNamedAtCallTime whether a call may name further outputs
 * @param identities             host-tool identities, derived from a host-tool aggregate, never invented
 * @param egress                 the network posture
 * @param requiresOsFamily       the guest path grammar the workload needs; empty = no opinion
 */
public record SandboxSpec(
        String kind,
        Optional<String> image,
        Optional<String> imageId,
        List<String> egressAllow,
        String workDir,
        Map<String, String> labels,
        Set<Capability> requires,
        Optional<Isolation> minIsolation,
        List<DeclaredOutput> declaredOutputs,
        TransferLimits filesIn,
        TransferLimits filesOut,
        boolean outputsNamedAtCallTime,
        Set<Identity> identities,
        Egress egress,
        Optional<OsFamily> requiresOsFamily) {

    /** The default guest working directory. */
    public static final String DEFAULT_WORK_DIR = "/sandbox4j/work";

    /** The default network posture. */
    public static final Egress DEFAULT_EGRESS = Egress.CLOSED;

    public SandboxSpec {
        Objects.requireNonNull(kind, "kind");
        if (kind.isBlank()) {
            throw new IllegalArgumentException("a spec needs a kind: it is part of every sandbox's identity");
        }
        Objects.requireNonNull(image, "image");
        Objects.requireNonNull(imageId, "imageId");
        egressAllow = List.copyOf(egressAllow);
        Objects.requireNonNull(workDir, "workDir");
        labels = Collections.unmodifiableMap(new LinkedHashMap<>(labels));
        requires = Sets.copyOf(Capability.class, requires);
        Objects.requireNonNull(minIsolation, "minIsolation");
        declaredOutputs = List.copyOf(declaredOutputs);
        Objects.requireNonNull(filesIn, "filesIn");
        Objects.requireNonNull(filesOut, "filesOut");
        identities = Sets.copyOf(Identity.class, identities);
        Objects.requireNonNull(egress, "egress");
        Objects.requireNonNull(requiresOsFamily, "requiresOsFamily");
        if (!egressAllow.isEmpty() && egress != Egress.ALLOWLIST) {
            throw new IllegalArgumentException("the egress allowlist " + egressAllow + " is only meaningful with egress '"
                    + Egress.ALLOWLIST.wire() + "', but this spec asks for '" + egress.wire()
                    + "'; set egress(Egress.ALLOWLIST) or drop the allowlist");
        }
        for (Map.Entry<String, String> label : labels.entrySet()) {
            Objects.requireNonNull(label.getKey(), "label key");
            Objects.requireNonNull(label.getValue(), "label value");
        }
    }

    /**
     * The work dir as {@code sandbox} holds it: the sandbox's {@link Sandbox#relocatedWorkDir()}
     * when its backend relocates work dirs, else this spec's {@link #workDir()}.
     */
    public String workDirIn(Sandbox sandbox) {
        return sandbox.relocatedWorkDir().orElse(workDir);
    }

    /** A builder for a spec of {@code kind}, holding every default. */
    public static Builder builder(String kind) {
        return new Builder(kind);
    }

    /** A builder holding this spec's values, to derive a changed copy. */
    public Builder toBuilder() {
        Builder b = new Builder(kind);
        b.image = image.orElse(null);
        b.imageId = imageId.orElse(null);
        b.egressAllow = new ArrayList<>(egressAllow);
        b.workDir = workDir;
        b.labels = new LinkedHashMap<>(labels);
        b.requires = requires.isEmpty() ? EnumSet.noneOf(Capability.class) : EnumSet.copyOf(requires);
        b.minIsolation = minIsolation.orElse(null);
        b.declaredOutputs = new ArrayList<>(declaredOutputs);
        b.filesIn = filesIn;
        b.filesOut = filesOut;
        b.outputsNamedAtCallTime = outputsNamedAtCallTime;
        b.identities = identities.isEmpty() ? EnumSet.noneOf(Identity.class) : EnumSet.copyOf(identities);
        b.egress = egress;
        b.requiresOsFamily = requiresOsFamily.orElse(null);
        return b;
    }

    /** Mutable, single-use builder; {@link #build()} validates. */
    public static final class Builder {
        private final String kind;
        private String image;
        private String imageId;
        private List<String> egressAllow = new ArrayList<>();
        private String workDir = DEFAULT_WORK_DIR;
        private Map<String, String> labels = new LinkedHashMap<>();
        private Set<Capability> requires = EnumSet.copyOf(Capability.DEFAULT_CAPABILITIES);
        private Isolation minIsolation;
        private List<DeclaredOutput> declaredOutputs = new ArrayList<>();
        private TransferLimits filesIn = TransferLimits.DEFAULT;
        private TransferLimits filesOut = TransferLimits.DEFAULT;
        private boolean outputsNamedAtCallTime;
        private Set<Identity> identities = EnumSet.noneOf(Identity.class);
        private Egress egress = DEFAULT_EGRESS;
        private OsFamily requiresOsFamily;

        private Builder(String kind) {
            this.kind = kind;
        }

        public Builder image(String image) {
            this.image = image;
            return this;
        }

        public Builder imageId(String imageId) {
            this.imageId = imageId;
            return this;
        }

        /** The allowlist does not imply the mode: also call {@code egress(Egress.ALLOWLIST)}. */
        public Builder egressAllow(String... hosts) {
            return egressAllow(List.of(hosts));
        }

        public Builder egressAllow(List<String> hosts) {
            this.egressAllow = new ArrayList<>(hosts);
            return this;
        }

        public Builder workDir(String workDir) {
            this.workDir = workDir;
            return this;
        }

        public Builder label(String key, String value) {
            this.labels.put(key, value);
            return this;
        }

        public Builder labels(Map<String, String> labels) {
            this.labels = new LinkedHashMap<>(labels);
            return this;
        }

        /** Replaces the required capabilities (the default is {EXEC, FILES_IN}). */
        public Builder requires(Capability first, Capability... rest) {
            this.requires = EnumSet.of(first, rest);
            return this;
        }

        public Builder requires(Set<Capability> capabilities) {
            this.requires = capabilities.isEmpty() ? EnumSet.noneOf(Capability.class) : EnumSet.copyOf(capabilities);
            return this;
        }

        /** Adds to the required capabilities, keeping what is already there. */
        public Builder alsoRequires(Capability... capabilities) {
            this.requires.addAll(List.of(capabilities));
            return this;
        }

        public Builder minIsolation(Isolation floor) {
            this.minIsolation = floor;
            return this;
        }

        public Builder declaredOutputs(DeclaredOutput... outputs) {
            return declaredOutputs(List.of(outputs));
        }

        public Builder declaredOutputs(List<DeclaredOutput> outputs) {
            this.declaredOutputs = new ArrayList<>(outputs);
            return this;
        }

        public Builder filesIn(TransferLimits limits) {
            this.filesIn = limits;
            return this;
        }

        public Builder filesOut(TransferLimits limits) {
            this.filesOut = limits;
            return this;
        }

        public Builder outputsNamedAtCallTime(boolean allowed) {
            this.outputsNamedAtCallTime = allowed;
            return this;
        }

        public Builder identities(Set<Identity> identities) {
            this.identities = identities.isEmpty() ? EnumSet.noneOf(Identity.class) : EnumSet.copyOf(identities);
            return this;
        }

        public Builder egress(Egress egress) {
            this.egress = egress;
            return this;
        }

        public Builder requiresOsFamily(OsFamily family) {
            this.requiresOsFamily = family;
            return this;
        }

        /** @throws IllegalArgumentException when an allowlist is given without {@link Egress#ALLOWLIST} */
        public SandboxSpec build() {
            return new SandboxSpec(kind, Optional.ofNullable(image), Optional.ofNullable(imageId), egressAllow, workDir,
                    labels, requires, Optional.ofNullable(minIsolation), declaredOutputs, filesIn, filesOut,
                    outputsNamedAtCallTime, identities, egress, Optional.ofNullable(requiresOsFamily));
        }
    }
}
