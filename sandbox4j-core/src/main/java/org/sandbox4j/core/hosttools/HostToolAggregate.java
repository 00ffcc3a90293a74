package org.sandbox4j.core.hosttools;

import java.util.Objects;
import java.util.Optional;
import java.util.Set;

import org.sandbox4j.core.Identity;
import org.sandbox4j.core.SourceIntegrity;

/**
 * The policy facts a sealed registry's tools add up to. A sandbox spec's identities are derived
 * from {@link #identities()}, never invented.
 *
 * @param resultIntegrity the weakest declared source over every tool, counting an undeclared tool as
 *                        {@link SourceIntegrity#UNTRUSTED}; empty when no tool is a source at all
 * @param outboundCaps    every declared sink, verbatim: the outward channels the tools open
 * @param identities      {@link Identity#APP} for each undeclared tool plus every declared identity
 * @param hasUndeclared   whether any tool was registered without a declaration
 */
public record HostToolAggregate(
        Optional<SourceIntegrity> resultIntegrity,
        Set<String> outboundCaps,
        Set<Identity> identities,
        boolean hasUndeclared) {

    public HostToolAggregate {
        Objects.requireNonNull(resultIntegrity, "resultIntegrity");
        outboundCaps = Set.copyOf(outboundCaps);
        identities = Set.copyOf(identities);
    }

    /** Whether a tool acts with the user's delegated identity, so a human must approve the run. */
    public boolean requiresApproval() {
        return identities.contains(Identity.USER);
    }
}
