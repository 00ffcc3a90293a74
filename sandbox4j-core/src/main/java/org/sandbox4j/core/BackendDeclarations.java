package org.sandbox4j.core;

import java.util.Collection;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * Everything a backend claims about itself, in one object. Each part has its own reading of
 * silence, kept from the reference:
 * <ul>
 *   <li>capabilities left unset mean {@link Capability#DEFAULT_CAPABILITIES} (a functionality
 *       claim, read charitably: every sandbox obligates EXEC and FILES_IN);</li>
 *   <li>limits left unset mean {@link SandboxLimits#DEFAULT} (a safety claim, read
 *       conservatively); an explicit null is malformed and refused with
 *       {@link SandboxTransferLimitsNotPermitted};</li>
 *   <li>an empty egress set enforces nothing, so every egress mode is refused, CLOSED included;</li>
 *   <li>an empty OS-family set names no guest shape, so only a spec that asks for a family is
 *       refused.</li>
 * </ul>
 *
 * @param isolation    the backend's rung on the ladder
 * @param capabilities what its sandboxes implement
 * @param egressModes  the egress modes it enforces
 * @param limits       its transfer ceilings
 * @param osFamilies   the guest shapes it serves
 */
public record BackendDeclarations(
        Isolation isolation,
        Set<Capability> capabilities,
        Set<Egress> egressModes,
        SandboxLimits limits,
        Set<OsFamily> osFamilies) {

    public BackendDeclarations {
        Objects.requireNonNull(isolation, "isolation: a backend must state its rung on the ladder ("
                + Isolation.ladder() + ")");
        capabilities = capabilities == null ? Capability.DEFAULT_CAPABILITIES : Sets.copyOf(Capability.class, capabilities);
        egressModes = egressModes == null ? Set.of() : Sets.copyOf(Egress.class, egressModes);
        if (limits == null) {
            throw malformedLimits();
        }
        osFamilies = osFamilies == null ? Set.of() : Sets.copyOf(OsFamily.class, osFamilies);
    }

    /** A builder for a backend on rung {@code isolation}, every other part silent. */
    public static Builder builder(Isolation isolation) {
        return new Builder(isolation);
    }

    private static SandboxTransferLimitsNotPermitted malformedLimits() {
        return new SandboxTransferLimitsNotPermitted("the backend declares null in place of SandboxLimits; declare a "
                + "SandboxLimits, or declare nothing to take the defaults");
    }

    /** Mutable, single-use builder. */
    public static final class Builder {
        private final Isolation isolation;
        private Set<Capability> capabilities;
        private Set<Egress> egressModes;
        private SandboxLimits limits = SandboxLimits.DEFAULT;
        private Set<OsFamily> osFamilies;

        private Builder(Isolation isolation) {
            this.isolation = isolation;
        }

        public Builder capabilities(Capability... capabilities) {
            return capabilities(List.of(capabilities));
        }

        public Builder capabilities(Collection<Capability> capabilities) {
            this.capabilities = capabilities.isEmpty() ? EnumSet.noneOf(Capability.class) : EnumSet.copyOf(capabilities);
            return this;
        }

        public Builder egressModes(Egress... modes) {
            return egressModes(List.of(modes));
        }

        public Builder egressModes(Collection<Egress> modes) {
            this.egressModes = modes.isEmpty() ? EnumSet.noneOf(Egress.class) : EnumSet.copyOf(modes);
            return this;
        }

        /** @throws SandboxTransferLimitsNotPermitted for null: declare limits or declare nothing */
        public Builder limits(SandboxLimits limits) {
            if (limits == null) {
                throw malformedLimits();
            }
            this.limits = limits;
            return this;
        }

        public Builder osFamilies(OsFamily... families) {
            return osFamilies(List.of(families));
        }

        public Builder osFamilies(Collection<OsFamily> families) {
            this.osFamilies = families.isEmpty() ? EnumSet.noneOf(OsFamily.class) : EnumSet.copyOf(families);
            return this;
        }

        public BackendDeclarations build() {
            return new BackendDeclarations(isolation, capabilities, egressModes, limits, osFamilies);
        }
    }
}
