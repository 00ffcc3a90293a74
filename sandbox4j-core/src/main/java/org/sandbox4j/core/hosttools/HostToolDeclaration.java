package org.sandbox4j.core.hosttools;

import java.util.Objects;
import java.util.Optional;

import org.sandbox4j.core.Identity;
import org.sandbox4j.core.SourceIntegrity;

/**
 * What a host tool tells the policy about itself. There are no defaults: each of the three roles
 * is answered explicitly, and an empty component is an answer ("this tool plays no part in that
 * role"), not silence.
 *
 * @param source   how far the tool's results can be trusted, or empty when it is no source of data
 * @param sink     the outward channel the tool writes to, in the host's own opaque vocabulary (kept
 *                 verbatim: never ordered, folded or interpreted), or empty when it sends nothing out
 * @param identity the authority the tool acts with, or empty when it acts with none
 */
public record HostToolDeclaration(Optional<SourceIntegrity> source, Optional<String> sink, Optional<Identity> identity) {

    public HostToolDeclaration {
        Objects.requireNonNull(source, "source: pass Optional.empty() for a tool that is no source of data");
        Objects.requireNonNull(sink, "sink: pass Optional.empty() for a tool that sends nothing out");
        Objects.requireNonNull(identity, "identity: pass Optional.empty() for a tool that acts with no identity");
    }
}
