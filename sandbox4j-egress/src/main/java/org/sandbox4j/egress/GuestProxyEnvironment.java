package org.sandbox4j.egress;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The environment that points every common client in a guest at the egress proxy, reached
 * through {@link GuestBridge} on {@value #GUEST_BRIDGE_HOST}:{@value #GUEST_BRIDGE_PORT}.
 *
 * <ul>
 *   <li>curl, wget, Python ({@code urllib}, {@code requests}), Go, Node tools and most others read
 *       {@code http_proxy}/{@code https_proxy} (some only the lower-case names, some only the
 *       upper-case ones, so both are set) and {@code NO_PROXY}; curl also reads {@code ALL_PROXY}.
 *   <li>pip reads {@code PIP_PROXY}; npm reads {@code npm_config_proxy} and
 *       {@code npm_config_https_proxy}.
 *   <li>The JVM ignores all of those: it reads only its {@code http.proxyHost}-style system
 *       properties, so {@code JAVA_TOOL_OPTIONS} sets them for every JVM the guest starts. Maven
 *       and Gradle use the JVM's properties, so they need nothing more.
 * </ul>
 *
 * Loopback stays direct ({@code NO_PROXY}), so a guest still reaches its own servers.
 */
public final class GuestProxyEnvironment {

    /** Where the bridge listens inside the guest. */
    public static final String GUEST_BRIDGE_HOST = "127.0.0.1";
    /** The port the bridge listens on inside the guest: squid's customary port. */
    public static final int GUEST_BRIDGE_PORT = 3128;
    /** The proxy URL every client is given. */
    public static final String PROXY_URL = "http://" + GUEST_BRIDGE_HOST + ":" + GUEST_BRIDGE_PORT;
    /** Destinations that stay direct, in the comma-separated form most clients read. */
    public static final String NO_PROXY = "localhost,127.0.0.1,::1";
    /** The JVM's proxy properties; {@code |} separates non-proxy hosts in the JVM's own syntax. */
    public static final String JAVA_TOOL_OPTIONS = "-Dhttp.proxyHost=" + GUEST_BRIDGE_HOST
            + " -Dhttp.proxyPort=" + GUEST_BRIDGE_PORT
            + " -Dhttps.proxyHost=" + GUEST_BRIDGE_HOST
            + " -Dhttps.proxyPort=" + GUEST_BRIDGE_PORT
            + " -Dhttp.nonProxyHosts=localhost|127.0.0.1|[::1]";

    private GuestProxyEnvironment() {
    }

    /** Every variable above, in a stable order; an unmodifiable map. */
    public static Map<String, String> variables() {
        Map<String, String> env = new LinkedHashMap<>();
        for (String name : new String[] {"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy",
                "ALL_PROXY", "all_proxy", "PIP_PROXY", "npm_config_proxy", "npm_config_https_proxy"}) {
            env.put(name, PROXY_URL);
        }
        env.put("NO_PROXY", NO_PROXY);
        env.put("no_proxy", NO_PROXY);
        env.put("JAVA_TOOL_OPTIONS", JAVA_TOOL_OPTIONS);
        return java.util.Collections.unmodifiableMap(env);
    }
}
