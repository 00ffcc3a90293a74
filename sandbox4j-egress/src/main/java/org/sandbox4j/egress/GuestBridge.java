package org.sandbox4j.egress;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;

/**
 * The guest half of the egress path: a fixed POSIX {@code sh} script that forwards
 * {@code 127.0.0.1:3128} inside the guest to the proxy's unix socket mounted there, then
 * {@code exec}s the real command. Run it as
 *
 * <pre>sh -c SCRIPT sandbox4j-bridge SOCKET_PATH COMMAND [ARG...]</pre>
 *
 * which {@link #argv} builds. The script is a constant: the socket path and the command reach it
 * only as positional parameters, never as shell text, and the path must be absolute and made of
 * {@code [A-Za-z0-9._/-]} (socat would read a comma or colon as syntax).
 *
 * <p>It uses {@code socat} when the guest has it, else an embedded {@code python3} bridge
 * (a thread per connection, 64 KiB buffers); it waits up to about 2 s, polling
 * {@code /proc/net/tcp} for the listening socket, before the command starts, so the command's
 * first request finds the bridge up. With neither tool it prints one line to stderr and exits
 * {@value #EXIT_NO_BRIDGE}; run {@link #PROBE} at acquire to refuse such an image up front.
 *
 * <p>The listening port is {@value GuestProxyEnvironment#GUEST_BRIDGE_PORT} unless
 * {@value #PORT_VARIABLE} says otherwise; only tests that run the script on a shared host need that.
 */
public final class GuestBridge {

    /** {@code $0} of the script, shown in its messages. */
    public static final String NAME = "sandbox4j-bridge";
    /** The environment variable that overrides the listening port. */
    public static final String PORT_VARIABLE = "SANDBOX4J_BRIDGE_PORT";
    /** The exit code when the guest has neither socat nor python3 (the shell's "command not found"). */
    public static final int EXIT_NO_BRIDGE = 127;
    /** The exit code for a bad socket path or port, or a bridge that did not come up. */
    public static final int EXIT_BRIDGE_FAILED = 2;

    /** The bridge in Python 3: no single quotes, so it sits inside the script's single quotes. */
    static final String PYTHON_BRIDGE = """
            import socket, sys, threading
            PORT = int(sys.argv[1]); PATH = sys.argv[2]; CHUNK = 65536
            def pipe(src, dst):
                try:
                    while True:
                        data = src.recv(CHUNK)
                        if not data:
                            break
                        dst.sendall(data)
                except OSError:
                    pass
                try:
                    dst.shutdown(socket.SHUT_WR)
                except OSError:
                    pass
            def serve(conn):
                up = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                try:
                    up.connect(PATH)
                except OSError:
                    conn.close(); up.close(); return
                back = threading.Thread(target=pipe, args=(up, conn), daemon=True)
                back.start(); pipe(conn, up); back.join(); conn.close(); up.close()
            srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            srv.bind(("127.0.0.1", PORT)); srv.listen(64)
            while True:
                conn, _ = srv.accept()
                threading.Thread(target=serve, args=(conn,), daemon=True).start()
            """;

    /** The script; see the class comment for how to run it. */
    public static final String SCRIPT = """
            set -u
            if [ "$#" -lt 2 ]; then
              echo "sandbox4j-bridge: usage: sh -c SCRIPT sandbox4j-bridge SOCKET_PATH COMMAND [ARG...]" >&2
              exit 2
            fi
            sock=$1
            shift
            case $sock in
              /*) ;;
              *) echo "sandbox4j-bridge: the proxy socket path must be absolute" >&2; exit 2 ;;
            esac
            case $sock in
              *[!A-Za-z0-9._/-]*) echo "sandbox4j-bridge: the proxy socket path may hold only letters, digits and . _ - /" >&2; exit 2 ;;
            esac
            port=${SANDBOX4J_BRIDGE_PORT:-3128}
            case $port in
              ''|*[!0-9]*) echo "sandbox4j-bridge: SANDBOX4J_BRIDGE_PORT must be a port number" >&2; exit 2 ;;
            esac
            if command -v socat >/dev/null 2>&1; then
              tool=socat
              socat TCP-LISTEN:"$port",bind=127.0.0.1,reuseaddr,fork UNIX-CONNECT:"$sock" </dev/null >/dev/null 2>&1 &
            elif command -v python3 >/dev/null 2>&1; then
              tool=python3
              python3 -c '%s' "$port" "$sock" </dev/null >/dev/null 2>&1 &
            else
              echo "sandbox4j-bridge: neither socat nor python3 is on PATH; the guest image needs one to reach the egress proxy" >&2
              exit 127
            fi
            hex=$(printf '%%04X' "$port")
            if sleep 0.05 2>/dev/null; then step=0.05; tries=40; else step=1; tries=2; fi
            until grep -q " 0100007F:$hex 00000000:0000 0A " /proc/net/tcp 2>/dev/null; do
              tries=$((tries - 1))
              if [ "$tries" -le 0 ]; then
                if [ -r /proc/net/tcp ]; then
                  echo "sandbox4j-bridge: the $tool bridge did not listen on 127.0.0.1:$port within 2 s" >&2
                  exit 2
                fi
                break
              fi
              sleep "$step"
            done
            exec "$@"
            """.formatted(PYTHON_BRIDGE);

    /** Prints {@code socat} or {@code python3}, whichever bridge the guest would use, or nothing. */
    public static final String PROBE_SCRIPT = "if command -v socat >/dev/null 2>&1; then echo socat;"
            + " elif command -v python3 >/dev/null 2>&1; then echo python3; fi";

    /** {@link #PROBE_SCRIPT} as an argv. */
    public static final List<String> PROBE = List.of("sh", "-c", PROBE_SCRIPT);

    /** The tools the script can bridge with. */
    public enum Tool {
        /** {@code socat}, preferred. */
        SOCAT,
        /** The embedded {@code python3} bridge. */
        PYTHON3
    }

    private GuestBridge() {
    }

    /**
     * The argv that starts the bridge and then runs {@code command}.
     *
     * @param socketPath where the proxy socket is mounted in the guest: absolute, {@code [A-Za-z0-9._/-]} only
     * @param command    the command to run once the bridge listens; at least one word
     */
    public static List<String> argv(String socketPath, List<String> command) {
        Objects.requireNonNull(socketPath, "socketPath");
        Objects.requireNonNull(command, "command");
        if (!socketPath.startsWith("/") || !socketPath.chars().allMatch(GuestBridge::isSafePathChar)) {
            throw new IllegalArgumentException("the guest socket path '" + socketPath
                    + "' must be absolute and hold only letters, digits and . _ - / (socat reads others as syntax)");
        }
        if (command.isEmpty()) {
            throw new IllegalArgumentException("the bridge needs a command to run once it listens");
        }
        List<String> argv = new ArrayList<>(command.size() + 5);
        argv.add("sh");
        argv.add("-c");
        argv.add(SCRIPT);
        argv.add(NAME);
        argv.add(socketPath);
        argv.addAll(command);
        return List.copyOf(argv);
    }

    /** Reads what {@link #PROBE} printed: the tool, or empty when the guest has neither. */
    public static Optional<Tool> parseProbe(String output) {
        String word = output == null ? "" : output.strip().toLowerCase(Locale.ROOT);
        return switch (word) {
            case "socat" -> Optional.of(Tool.SOCAT);
            case "python3" -> Optional.of(Tool.PYTHON3);
            default -> Optional.empty();
        };
    }

    private static boolean isSafePathChar(int c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                || c == '.' || c == '_' || c == '-' || c == '/';
    }
}
