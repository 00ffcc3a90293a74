package org.sandbox4j.egress;

import java.util.Locale;

/**
 * Where a request wants to go, read from its request target: the authority of a {@code CONNECT}
 * ({@code host:port}) or of an absolute-form {@code http://} URL. Only the host and port leave
 * this class, so the rule check and the connection can never see two different hosts.
 *
 * @param host       the host as written, brackets removed from an IPv6 literal
 * @param port       the port, 80 when an {@code http://} URL names none
 * @param originForm the path and query to send to the origin ({@code /} when empty); empty for CONNECT
 */
record ProxyTarget(String host, int port, String originForm) {

    static final int HTTP_DEFAULT_PORT = 80;
    private static final String HTTP = "http://";
    private static final String HTTPS = "https://";

    /** The target of a request head, or a 400 refusal naming what is wrong. */
    static ProxyTarget of(RequestHead head) {
        String target = head.target();
        if (head.isConnect()) {
            return authority(target, -1, "");
        }
        String lower = target.toLowerCase(Locale.ROOT);
        if (lower.startsWith(HTTPS)) {
            throw bad("an https:// URL cannot be forwarded in the clear; use CONNECT " + "host:443");
        }
        if (target.startsWith("/") || target.equals("*")) {
            throw bad("'" + head.method() + " " + target + "' is not a proxy request (send an absolute http:// URL"
                    + " or CONNECT host:port)");
        }
        if (!lower.startsWith(HTTP)) {
            throw bad("the target must be an absolute http:// URL or, for CONNECT, host:port");
        }
        String rest = target.substring(HTTP.length());
        int end = rest.length();
        for (char c : new char[] {'/', '?', '#'}) {
            int at = rest.indexOf(c);
            if (at >= 0 && at < end) {
                end = at;
            }
        }
        String path = rest.substring(end);
        int fragment = path.indexOf('#');
        if (fragment >= 0) {
            path = path.substring(0, fragment);
        }
        if (path.isEmpty()) {
            path = "/";
        } else if (path.startsWith("?")) {
            path = "/" + path;
        }
        return authority(rest.substring(0, end), HTTP_DEFAULT_PORT, path);
    }

    private static ProxyTarget authority(String authority, int defaultPort, String originForm) {
        if (authority.indexOf('@') >= 0) {
            throw bad("a user part in the URL is not accepted");
        }
        String host;
        String portText;
        if (authority.startsWith("[")) {
            int close = authority.indexOf(']');
            if (close < 0) {
                throw bad("the IPv6 address in '" + authority + "' has no closing ']'");
            }
            host = authority.substring(1, close);
            String rest = authority.substring(close + 1);
            if (!rest.isEmpty() && !rest.startsWith(":")) {
                throw bad("'" + authority + "' is not host:port");
            }
            portText = rest.isEmpty() ? null : rest.substring(1);
        } else {
            int colon = authority.lastIndexOf(':');
            host = colon < 0 ? authority : authority.substring(0, colon);
            portText = colon < 0 ? null : authority.substring(colon + 1);
            if (host.indexOf(':') >= 0) {
                throw bad("an IPv6 address must be in brackets, as in [2001:db8::1]:443");
            }
        }
        if (host.isEmpty()) {
            throw bad("'" + authority + "' names no host");
        }
        int port;
        if (portText == null) {
            if (defaultPort < 0) {
                throw bad("CONNECT needs host:port, not '" + authority + "'");
            }
            port = defaultPort;
        } else {
            port = HostSyntax.parsePort(portText);
            if (port < 0) {
                throw bad("the port in '" + authority + "' is not 1-65535");
            }
        }
        return new ProxyTarget(host, port, originForm);
    }

    private static ProxyRefusal bad(String why) {
        return new ProxyRefusal(HttpStatus.BAD_REQUEST, why);
    }
}
