package org.sandbox4j.testkit.tck;

import java.net.URI;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * What the egress suites need from a backend author: servers the TCK may contact (on loopback, or
 * in a network namespace the test made), named so the backend's own resolver sends them there, and
 * the allowlist that admits exactly one of them. Every URL answers 2xx when reached.
 *
 * <p>Name the servers so that resolving them needs no DNS query (a {@code *.localhost} name with
 * curl, which resolves it itself, or a name in the guest's hosts file): a backend that is not
 * really confined would otherwise send the query to the host's resolver.
 *
 * @param allowlist    the hosts the ALLOWLIST spec names
 * @param allowedUrl   on the allowlist: must be reached
 * @param unlistedUrl  a host not on the allowlist: must not be reached
 * @param ipLiteralUrl an IP literal not on the allowlist: must not be reached
 * @param internalUrls hostnames, not on the allowlist, resolving to loopback, private, link-local or
 *                     metadata addresses: none may be reached
 * @param httpClient   the guest's HTTP client the backend names ({@code curl}, {@code wget} or
 *                     {@code python3}); empty = the probes look for one
 * @param witness      how many requests each fixture server has seen, so a refusal probe can prove
 *                     nothing was sent; {@link RequestWitness#NONE} when the servers cannot tell
 */
public record EgressFixture(
        List<String> allowlist,
        URI allowedUrl,
        URI unlistedUrl,
        URI ipLiteralUrl,
        List<URI> internalUrls,
        Optional<String> httpClient,
        RequestWitness witness) {

    /** Counts the requests the server behind a fixture URL has received. */
    @FunctionalInterface
    public interface RequestWitness {

        /** A witness that cannot tell: probes that need one are skipped, and say so. */
        RequestWitness NONE = url -> OptionalLong.empty();

        /** The requests the server behind {@code url} has seen so far; empty when unknown. */
        OptionalLong requestsSeen(URI url);
    }

    public EgressFixture {
        allowlist = List.copyOf(allowlist);
        Objects.requireNonNull(allowedUrl, "allowedUrl");
        Objects.requireNonNull(unlistedUrl, "unlistedUrl");
        Objects.requireNonNull(ipLiteralUrl, "ipLiteralUrl");
        internalUrls = List.copyOf(internalUrls);
        Objects.requireNonNull(httpClient, "httpClient");
        Objects.requireNonNull(witness, "witness");
    }

    /** A fixture whose servers cannot count requests. */
    public EgressFixture(List<String> allowlist, URI allowedUrl, URI unlistedUrl, URI ipLiteralUrl,
            List<URI> internalUrls, Optional<String> httpClient) {
        this(allowlist, allowedUrl, unlistedUrl, ipLiteralUrl, internalUrls, httpClient, RequestWitness.NONE);
    }

    /** This fixture with {@code counts} as its witness. */
    public EgressFixture withWitness(RequestWitness counts) {
        return new EgressFixture(allowlist, allowedUrl, unlistedUrl, ipLiteralUrl, internalUrls, httpClient, counts);
    }
}
