package org.sandbox4j.egress;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The bridge script run for real with /bin/sh on this host: a proxy on a temp unix socket, the
 * bridge on a free loopback port, and curl through it to a loopback server. Each run gets its own
 * session (setsid) so the background bridge is ended by process group afterwards.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class GuestBridgeTest {

    private static final Path SOCAT = Path.of("/usr/bin/socat");
    private static final Path PYTHON3 = Path.of("/usr/bin/python3");

    @TempDir
    Path dir;

    private Loopback.CountingServer http;
    private EgressProxy proxy;
    private Path socket;
    private final List<Long> groups = new ArrayList<>();

    record Run(int exit, String stdout, String stderr) {
    }

    @BeforeEach
    void setUp() throws IOException {
        http = new Loopback.CountingServer();
        socket = dir.resolve("egress.sock");
        proxy = EgressProxy.start(socket, EgressPolicy.parse(List.of("allowed.test:" + http.port() + "=127.0.0.1")),
                EgressProxy.Settings.defaults().withResolver(name -> {
                    throw new java.net.UnknownHostException(name);
                }));
    }

    @AfterEach
    void tearDown() throws Exception {
        for (long group : groups) {
            new ProcessBuilder("kill", "-TERM", "--", "-" + group).redirectErrorStream(true).start().waitFor(10, TimeUnit.SECONDS);
        }
        proxy.close();
        http.close();
    }

    private Run run(String path, int port, List<String> argv) throws Exception {
        List<String> command = new ArrayList<>();
        command.add("/usr/bin/setsid");
        command.add("/bin/sh");
        command.addAll(argv.subList(1, argv.size()));
        ProcessBuilder builder = new ProcessBuilder(command);
        Map<String, String> env = builder.environment();
        env.keySet().removeIf(k -> k.toLowerCase(java.util.Locale.ROOT).endsWith("_proxy"));
        env.put("PATH", path);
        env.put(GuestBridge.PORT_VARIABLE, Integer.toString(port));
        builder.redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        Path out = Files.createTempFile(dir, "out", ".txt");
        Path err = Files.createTempFile(dir, "err", ".txt");
        builder.redirectOutput(out.toFile()).redirectError(err.toFile());
        Process process = builder.start();
        groups.add(process.pid());
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("the bridge run finished").isTrue();
        return new Run(process.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
                Files.readString(err, StandardCharsets.UTF_8));
    }

    private List<String> curlThroughBridge(int port, String... args) {
        List<String> curl = new ArrayList<>(List.of("curl", "-sS", "--max-time", "20", "-x", "http://127.0.0.1:" + port));
        curl.addAll(List.of(args));
        return GuestBridge.argv(socket.toString(), curl);
    }

    /** A directory whose symlinks are the only tools on PATH. */
    private String pathWith(String... tools) throws IOException {
        Path bin = Files.createDirectories(dir.resolve("bin-" + String.join("-", tools)));
        for (String tool : tools) {
            Path target = tool.equals("python3") ? PYTHON3 : tool.equals("socat") ? SOCAT
                    : Files.exists(Path.of("/usr/bin", tool)) ? Path.of("/usr/bin", tool) : Path.of("/bin", tool);
            if (!Files.exists(bin.resolve(tool), java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                Files.createSymbolicLink(bin.resolve(tool), target);
            }
        }
        return bin.toString();
    }

    @Test
    void theSocatBridgeCarriesForwardAndConnectRequests() throws Exception {
        assertThat(SOCAT).as("this test runs the real socat bridge: apt-get install socat").exists();
        int port = Loopback.freePort();
        Run get = run(pathWith("socat", "grep", "sleep", "curl"), port,
                curlThroughBridge(port, "http://allowed.test:" + http.port() + "/via-socat"));
        assertThat(get.stderr()).isEmpty();
        assertThat(get.exit()).isZero();
        assertThat(get.stdout()).isEqualTo("hello from loopback /via-socat");

        int port2 = Loopback.freePort();
        Run tunnel = run(pathWith("socat", "grep", "sleep", "curl"), port2,
                curlThroughBridge(port2, "-p", "http://allowed.test:" + http.port() + "/tunnel"));
        assertThat(tunnel.exit()).as(tunnel.stderr()).isZero();
        assertThat(tunnel.stdout()).isEqualTo("hello from loopback /tunnel");
        // A decision is recorded when its connection ends, which may be just after curl exits.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (proxy.decisions().size() < 2 && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(proxy.decisions()).extracting(EgressDecision::method).contains("GET", "CONNECT");
    }

    @Test
    void thePython3BridgeIsUsedWhenSocatIsMissingAndRefusalsComeThrough() throws Exception {
        assertThat(PYTHON3).as("this test runs the real python3 bridge: apt-get install python3").exists();
        String path = pathWith("python3", "grep", "sleep", "curl");
        int port = Loopback.freePort();
        Run get = run(path, port, curlThroughBridge(port, "http://allowed.test:" + http.port() + "/via-python"));
        assertThat(get.stderr()).isEmpty();
        assertThat(get.exit()).isZero();
        assertThat(get.stdout()).isEqualTo("hello from loopback /via-python");

        int port2 = Loopback.freePort();
        Run refused = run(path, port2, curlThroughBridge(port2, "-w", "%{http_code}", "http://unlisted.example/"));
        assertThat(refused.stdout()).isEqualTo(
                "sandbox4j egress: unlisted.example:80 is not on this sandbox's allowlist\n403");
        assertThat(http.requests).hasValue(1);
    }

    @Test
    void withNeitherToolItPrintsOneLineAndExits127() throws Exception {
        Run run = run(pathWith("grep", "sleep"), Loopback.freePort(),
                GuestBridge.argv(socket.toString(), List.of("true")));
        assertThat(run.exit()).isEqualTo(GuestBridge.EXIT_NO_BRIDGE);
        assertThat(run.stdout()).isEmpty();
        assertThat(run.stderr()).isEqualTo("sandbox4j-bridge: neither socat nor python3 is on PATH;"
                + " the guest image needs one to reach the egress proxy\n");
    }

    @Test
    void theCommandKeepsItsArgumentsAndExitCode() throws Exception {
        int port = Loopback.freePort();
        Run run = run(pathWith("socat", "grep", "sleep"), port,
                GuestBridge.argv(socket.toString(), List.of("/bin/sh", "-c", "echo \"$1|$2\"; exit 7", "x", "a b", "$HOME;`id`")));
        assertThat(run.exit()).isEqualTo(7);
        assertThat(run.stdout()).isEqualTo("a b|$HOME;`id`\n");
    }

    @Test
    void badPortsAndSocketPathsAreRefused() throws Exception {
        Run badPort = run(pathWith("socat", "grep", "sleep"), 0, List.of("sh", "-c", GuestBridge.SCRIPT,
                GuestBridge.NAME, socket.toString(), "true"));
        // Port 0 passes the digit check; a bridge that cannot listen on it is reported.
        assertThat(badPort.exit()).isEqualTo(GuestBridge.EXIT_BRIDGE_FAILED);
        assertThat(badPort.stderr()).contains("did not listen on 127.0.0.1:0");

        Run badPath = run(pathWith("socat", "grep", "sleep"), Loopback.freePort(), List.of("sh", "-c", GuestBridge.SCRIPT,
                GuestBridge.NAME, "/tmp/x,fork", "true"));
        assertThat(badPath.exit()).isEqualTo(GuestBridge.EXIT_BRIDGE_FAILED);
        assertThat(badPath.stderr()).contains("may hold only letters");

        assertThatThrownBy(() -> GuestBridge.argv("/tmp/a:b", List.of("true"))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("/tmp/a:b");
        assertThatThrownBy(() -> GuestBridge.argv("relative.sock", List.of("true")))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> GuestBridge.argv("/run/egress.sock", List.of()))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void theProbeNamesTheBridgeTheGuestHas() throws Exception {
        assertThat(probe(pathWith("socat", "python3"))).isEqualTo("socat\n");
        assertThat(probe(pathWith("python3"))).isEqualTo("python3\n");
        assertThat(probe(dir.resolve("empty").toString())).isEmpty();
        assertThat(GuestBridge.parseProbe("socat\n")).contains(GuestBridge.Tool.SOCAT);
        assertThat(GuestBridge.parseProbe("python3")).contains(GuestBridge.Tool.PYTHON3);
        assertThat(GuestBridge.parseProbe("")).isEmpty();
    }

    @Test
    void theScriptIsAConstantThatTakesTheSocketOnlyAsAParameter() {
        List<String> argv = GuestBridge.argv("/run/sandbox4j/egress.sock", List.of("python3", "main.py"));
        assertThat(argv).containsExactly("sh", "-c", GuestBridge.SCRIPT, "sandbox4j-bridge",
                "/run/sandbox4j/egress.sock", "python3", "main.py");
        assertThat(GuestBridge.SCRIPT).doesNotContain("/run/sandbox4j").contains("exec \"$@\"");
        assertThat(GuestBridge.PYTHON_BRIDGE).doesNotContain("'");
    }

    private String probe(String path) throws Exception {
        ProcessBuilder builder = new ProcessBuilder(new ArrayList<>(List.of("/bin/sh", "-c", GuestBridge.PROBE_SCRIPT)));
        builder.environment().put("PATH", path);
        builder.redirectErrorStream(true);
        Process process = builder.start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
        return out;
    }
}
