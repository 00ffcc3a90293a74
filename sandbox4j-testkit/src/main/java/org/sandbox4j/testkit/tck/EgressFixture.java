package org.sandbox4j.testkit.tck;

import java.net.URI;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * What the egress suites need from a backend author: servers the TCK may contact (on loopback, or
 * in a network namespace the test made), named so the backend's own resolver sends them there, and
 * the allowlist that admits exactly one of them. Every URL answers 2xx when reached.
 *
 * @param allowlist    the hosts the ALLOWLIST spec names
 * @param allowedUrl   on the allowlist: must be reached
 * @param unlistedUrl  a host not on the allowlist: must not be reached
 * @param ipLiteralUrl an IP literal not on the allowlist: must not be reached
 * @param internalUrls hostnames, not on the allowlist, resolving to loopback, private, link-local or
 *                     metadata addresses: none may be reached
 * @param httpClient   the guest's HTTP client the backend names ({@code curl}, {@code wget} or
 *                     {@code python3}); empty = the probes look for one
 */
public record EgressFixture(
        List<String> allowlist,
        URI allowedUrl,
        URI unlistedUrl,
        URI ipLiteralUrl,
        List<URI> internalUrls,
        Optional<String> httpClient) {

    public EgressFixture {
        allowlist = List.copyOf(allowlist);
        Objects.requireNonNull(allowedUrl, "allowedUrl");
        Objects.requireNonNull(unlistedUrl, "unlistedUrl");
        Objects.requireNonNull(ipLiteralUrl, "ipLiteralUrl");
        internalUrls = List.copyOf(internalUrls);
        Objects.requireNonNull(httpClient, "httpClient");
    }
}
