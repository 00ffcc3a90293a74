package org.sandbox4j.testkit.tck;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The HTTP clients the egress probes can drive in the guest. Each runs a fixed script that prints
 * only the final HTTP status as three digits ({@code 000} when no response came); the URL, the
 * Host header and every other variable reach the script only as positional parameters.
 *
 * <p>Positional parameters of every script: {@code $1} the client's own timeout in seconds,
 * {@code $2} the URL, {@code $3} a Host header to send instead of the URL's (empty = none),
 * {@code $4} {@code yes} to force a {@code CONNECT} tunnel through the guest's proxy, {@code $5}
 * {@code yes} to drop every proxy setting first (a guest that ignores the proxy).
 */
enum GuestHttpClient {

    /** curl: {@code --url} keeps a hostile URL from ever being read as an option. */
    CURL("curl", true, List.of("sh", "-c", Scripts.CURL, "egress-probe")),

    /** GNU or busybox wget: the status is the last {@code HTTP/} line of {@code -S}. No tunnel. */
    WGET("wget", false, List.of("sh", "-c", Scripts.WGET, "egress-probe")),

    /** python3's urllib (honours the proxy variables) and http.client for the tunnel. */
    PYTHON3("python3", true, List.of("python3", "-c", Scripts.PYTHON));

    /** The order the probes look for a client in the guest. */
    static final List<GuestHttpClient> SEARCH_ORDER = List.of(CURL, WGET, PYTHON3);

    private static final String YES = "yes";
    private static final String NO = "no";

    private final String command;
    private final boolean tunnels;
    private final List<String> prefix;

    GuestHttpClient(String command, boolean tunnels, List<String> prefix) {
        this.command = command;
        this.tunnels = tunnels;
        this.prefix = prefix;
    }

    /** The command looked for in the guest, e.g. {@code curl}. */
    String command() {
        return command;
    }

    /** Whether it can force a {@code CONNECT} tunnel through the guest's proxy. */
    boolean tunnels() {
        return tunnels;
    }

    /** The client a backend names, by its command. */
    static Optional<GuestHttpClient> named(String command) {
        String wanted = command.strip().toLowerCase(Locale.ROOT);
        return SEARCH_ORDER.stream().filter(client -> client.command.equals(wanted)).findFirst();
    }

    /** The argv that makes {@code attempt}, bounded by {@code timeoutSeconds}. */
    List<String> argv(HttpAttempt attempt, long timeoutSeconds) {
        List<String> argv = new ArrayList<>(prefix);
        argv.add(Long.toString(timeoutSeconds));
        argv.add(attempt.url().toString());
        argv.add(attempt.hostHeader().orElse(""));
        argv.add(attempt.tunnel() ? YES : NO);
        argv.add(attempt.direct() ? YES : NO);
        return List.copyOf(argv);
    }

    /** The scripts, apart so the constants above can name them. */
    private static final class Scripts {

        private static final String DROP_PROXY = "if [ \"$5\" = yes ]; then "
                + "unset http_proxy HTTP_PROXY https_proxy HTTPS_PROXY all_proxy ALL_PROXY; fi\n";

        static final String CURL = DROP_PROXY
                + "t=$1 u=$2 h=$3 tunnel=$4\n"
                + "set -- -s -o /dev/null -w '%{http_code}' --max-time \"$t\"\n"
                + "if [ -n \"$h\" ]; then set -- \"$@\" -H \"Host: $h\"; fi\n"
                + "if [ \"$tunnel\" = yes ]; then set -- \"$@\" --proxytunnel; fi\n"
                + "curl \"$@\" --url \"$u\"\n";

        static final String WGET = DROP_PROXY
                + "t=$1 u=$2 h=$3\n"
                + "set -- -S -q -O /dev/null -T \"$t\" -t 1\n"
                + "if [ -n \"$h\" ]; then set -- \"$@\" --header \"Host: $h\"; fi\n"
                + "wget \"$@\" -- \"$u\" 2>&1 | awk '$1 ~ /^HTTP\\// { code = $2 } "
                + "END { print (code == \"\" ? \"000\" : code) }'\n";

        static final String PYTHON = String.join("\n",
                "import sys, urllib.error, urllib.parse, urllib.request, http.client",
                "timeout, url, host = float(sys.argv[1]), sys.argv[2], sys.argv[3]",
                "tunnel, direct = sys.argv[4] == 'yes', sys.argv[5] == 'yes'",
                "headers = {'Host': host} if host else {}",
                "def fetch():",
                "    target = urllib.parse.urlsplit(url)",
                "    proxy = None if direct else urllib.request.getproxies().get(target.scheme)",
                "    if tunnel and proxy:",
                "        via = urllib.parse.urlsplit(proxy)",
                "        connection = http.client.HTTPConnection(via.hostname, via.port or 80, timeout=timeout)",
                "        connection.set_tunnel(target.hostname, target.port or 80)",
                "        connection.request('GET', target.path or '/', headers=headers)",
                "        return connection.getresponse().status",
                "    opener = urllib.request.build_opener(*([urllib.request.ProxyHandler({})] if direct else []))",
                "    try:",
                "        return opener.open(urllib.request.Request(url, headers=headers), timeout=timeout).status",
                "    except urllib.error.HTTPError as error:",
                "        return error.code",
                "try:",
                "    status = fetch()",
                "except Exception:",
                "    status = 0",
                "print('%03d' % status)",
                "");
    }
}
