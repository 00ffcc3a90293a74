package org.sandbox4j.testkit.tck;

import java.net.URI;
import java.util.Objects;
import java.util.Optional;

/**
 * One HTTP request a probe makes from the guest.
 *
 * @param url        where to
 * @param hostHeader a Host header naming another server than the URL does (a smuggling attempt)
 * @param tunnel     force a {@code CONNECT} tunnel through the guest's proxy
 * @param direct     drop every proxy setting first, as a guest that ignores the proxy would
 */
record HttpAttempt(URI url, Optional<String> hostHeader, boolean tunnel, boolean direct) {

    HttpAttempt {
        Objects.requireNonNull(url, "url");
        Objects.requireNonNull(hostHeader, "hostHeader");
    }

    /** A plain GET through whatever the guest is set up to use. */
    static HttpAttempt get(URI url) {
        return new HttpAttempt(url, Optional.empty(), false, false);
    }

    HttpAttempt withHostHeader(String authority) {
        return new HttpAttempt(url, Optional.of(authority), tunnel, direct);
    }

    HttpAttempt throughTunnel() {
        return new HttpAttempt(url, hostHeader, true, direct);
    }

    HttpAttempt ignoringTheProxy() {
        return new HttpAttempt(url, hostHeader, tunnel, true);
    }

    @Override
    public String toString() {
        return "GET " + url + hostHeader.map(h -> " with Host: " + h).orElse("")
                + (tunnel ? " through a CONNECT tunnel" : "") + (direct ? " with the proxy settings dropped" : "");
    }
}
