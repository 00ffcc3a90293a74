package org.sandbox4j.mcp;

import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpFilter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.sandbox4j.core.spi.GuestText;

/**
 * The door of the loopback HTTP endpoint, checked before the SDK sees a request. A page in a
 * browser can reach loopback too (DNS rebinding, a cross-site form), so a request must name a
 * loopback host and, when it carries an Origin, a loopback origin (the MCP specification requires
 * servers to check Origin); then, when the host set a token, carry {@code Authorization: Bearer}
 * with it, compared in constant time.
 */
final class HttpGuard extends HttpFilter {

    private static final long serialVersionUID = 1L;

    /** Host names that always mean this machine's loopback interface. */
    static final Set<String> LOOPBACK_HOSTS = Set.of("localhost", "127.0.0.1", "[::1]", "::1");

    static final String BEARER_PREFIX = "Bearer ";

    /** The header a client names its MCP protocol version in, after initialize. */
    static final String PROTOCOL_VERSION_HEADER = "MCP-Protocol-Version";

    private final transient Optional<byte[]> tokenDigest;
    private final List<String> protocolVersions;

    /** @param protocolVersions the versions the transport speaks; a request naming another is refused */
    HttpGuard(Optional<String> bearerToken, List<String> protocolVersions) {
        this.tokenDigest = bearerToken.map(HttpGuard::digest);
        this.protocolVersions = List.copyOf(protocolVersions);
    }

    @Override
    protected void doFilter(HttpServletRequest request, HttpServletResponse plain, FilterChain chain)
            throws IOException, ServletException {
        HttpServletResponse response = new JsonRpcErrors.Enveloping(plain);
        if (!isLoopbackHost(request.getHeader("Host"))) {
            JsonRpcErrors.send(response, HttpServletResponse.SC_FORBIDDEN,
                    "this MCP endpoint answers only on a loopback host name");
            return;
        }
        String origin = request.getHeader("Origin");
        if (origin != null && !isLoopbackOrigin(origin)) {
            JsonRpcErrors.send(response, HttpServletResponse.SC_FORBIDDEN, "cross-origin requests are refused");
            return;
        }
        if (!SandboxMcpServer.ENDPOINT_PATH.equals(request.getRequestURI())) {
            // Before the token: a 401 on /.well-known/oauth-* would send a client into OAuth discovery, and
            // this server has no OAuth; a client with a wrong token must hear "bad token" at the endpoint.
            JsonRpcErrors.send(response, HttpServletResponse.SC_NOT_FOUND, "not found: this server answers MCP at "
                    + SandboxMcpServer.ENDPOINT_PATH + " only, and has no OAuth (it takes a bearer token)");
            return;
        }
        if (tokenDigest.isPresent() && !authorized(request.getHeader("Authorization"))) {
            response.setHeader("WWW-Authenticate", "Bearer realm=\"sandbox4j\"");
            JsonRpcErrors.send(response, HttpServletResponse.SC_UNAUTHORIZED, "a bearer token is required and the "
                    + "request had none or a wrong one: send 'Authorization: Bearer <token>' with the server's token");
            return;
        }
        String version = request.getHeader(PROTOCOL_VERSION_HEADER);
        if (version != null && !protocolVersions.contains(version.strip())) {
            JsonRpcErrors.send(response, HttpServletResponse.SC_BAD_REQUEST, "unsupported " + PROTOCOL_VERSION_HEADER
                    + " " + GuestText.quote(version) + "; this server speaks " + String.join(", ", protocolVersions));
            return;
        }
        chain.doFilter(request, response);
    }

    private boolean authorized(String header) {
        if (header == null || !header.regionMatches(true, 0, BEARER_PREFIX, 0, BEARER_PREFIX.length())) {
            return false;
        }
        byte[] presented = digest(header.substring(BEARER_PREFIX.length()).strip());
        // Digests have one length, so the comparison's time says nothing about the token.
        return MessageDigest.isEqual(presented, tokenDigest.orElseThrow());
    }

    static boolean isLoopbackHost(String hostHeader) {
        if (hostHeader == null || hostHeader.isBlank()) {
            return false;
        }
        String host = hostHeader.strip().toLowerCase(Locale.ROOT);
        if (host.startsWith("[")) {
            int close = host.indexOf(']');
            return close > 0 && LOOPBACK_HOSTS.contains(host.substring(0, close + 1))
                    && (close == host.length() - 1 || host.charAt(close + 1) == ':');
        }
        int colon = host.indexOf(':');
        return LOOPBACK_HOSTS.contains(colon < 0 ? host : host.substring(0, colon));
    }

    static boolean isLoopbackOrigin(String origin) {
        try {
            URI uri = new URI(origin.strip());
            String scheme = uri.getScheme();
            String host = uri.getHost();
            return ("http".equalsIgnoreCase(scheme) || "https".equalsIgnoreCase(scheme))
                    && host != null && LOOPBACK_HOSTS.contains(host.toLowerCase(Locale.ROOT));
        } catch (URISyntaxException malformed) {
            return false;
        }
    }

    private static byte[] digest(String token) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException impossible) {
            throw new IllegalStateException("every JDK has SHA-256", impossible);
        }
    }
}
