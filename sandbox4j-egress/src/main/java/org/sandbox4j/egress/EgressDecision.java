package org.sandbox4j.egress;

import java.time.Instant;
import java.util.Objects;

/**
 * What the proxy did with one client connection: the host can read these to see what a sandbox
 * tried to reach. A connection the proxy could not even parse is recorded too, with an empty host
 * and port 0, so a probing guest leaves a trace.
 *
 * @param time          when the decision was taken
 * @param method        the request method ({@code CONNECT}, {@code GET}, ...); empty when none was read
 * @param host          the destination host as checked; empty when none was read
 * @param port          the destination port; 0 when none was read
 * @param verdict       whether the connection went through
 * @param reason        one line: the rule that admitted it, or why it was refused
 * @param bytesToServer bytes sent to the destination (the rewritten head included)
 * @param bytesToClient bytes sent back to the guest from the destination
 */
public record EgressDecision(
        Instant time, String method, String host, int port, Verdict verdict, String reason,
        long bytesToServer, long bytesToClient) {

    /** Whether a connection went through. */
    public enum Verdict {
        /** A rule admitted it and the proxy connected. */
        ALLOWED,
        /** Refused, malformed, unreachable or over a limit: the destination saw nothing. */
        REFUSED
    }

    public EgressDecision {
        Objects.requireNonNull(time, "time");
        Objects.requireNonNull(method, "method");
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(verdict, "verdict");
        Objects.requireNonNull(reason, "reason");
    }

    /** One line of JSON, no trailing newline: the audit file's format. */
    public String toJson() {
        return "{\"time\":" + Json.string(time.toString())
                + ",\"method\":" + Json.string(method)
                + ",\"host\":" + Json.string(host)
                + ",\"port\":" + port
                + ",\"verdict\":" + Json.string(verdict.name())
                + ",\"reason\":" + Json.string(reason)
                + ",\"bytesToServer\":" + bytesToServer
                + ",\"bytesToClient\":" + bytesToClient
                + "}";
    }
}
