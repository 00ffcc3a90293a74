package org.sandbox4j.local;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.Egress;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.egress.EgressProxy;
import org.sandbox4j.testkit.tck.LoopbackEgressServers;
import org.sandbox4j.testkit.tck.LoopbackHttpServer;

/**
 * A Java program inside the bubblewrap sandbox (the host's JDK bound read-only) reaches an
 * allowed loopback server through the egress proxy with nothing but {@code JAVA_TOOL_OPTIONS}
 * (the JVM ignores {@code HTTP_PROXY}), and is refused for an unlisted one: the proxy answers 403
 * and the unlisted server never sees a request.
 */
class JavaThroughTheProxyTest {

    /** A plain java.net client: no proxy code of its own, so only the JVM's properties can route it. */
    private static final String FETCH = """
            import java.net.HttpURLConnection;
            import java.net.URL;

            public class Fetch {
                public static void main(String[] args) throws Exception {
                    HttpURLConnection connection = (HttpURLConnection) new URL(args[0]).openConnection();
                    connection.setConnectTimeout(10_000);
                    connection.setReadTimeout(10_000);
                    try {
                        int status = connection.getResponseCode();
                        var stream = status < 400 ? connection.getInputStream() : connection.getErrorStream();
                        String body = stream == null ? "" : new String(stream.readAllBytes());
                        System.out.println("status=" + status + " body=" + body.strip());
                    } catch (java.io.IOException e) {
                        System.out.println("failed=" + e);
                    }
                }
            }
            """;
    private static final Duration JVM_BOUND = Duration.ofMinutes(2);

    private Path stateRoot;
    private LoopbackHttpServer allowed;
    private LoopbackHttpServer unlisted;
    private BubblewrapBackend backend;
    private Sandbox sandbox;
    private String workDir;

    @BeforeEach
    void start() throws Exception {
        stateRoot = Files.createTempDirectory("s4jj");
        allowed = LoopbackHttpServer.start("allowed");
        unlisted = LoopbackHttpServer.start("unlisted");
        Path javaHome = Path.of(System.getProperty("java.home")).toRealPath();
        BubblewrapBackend.Builder builder = BubblewrapBackend.builder().stateRoot(stateRoot)
                .egressSettings(EgressProxy.Settings.defaults().withResolver(BubblewrapTarget.resolver()));
        if (!javaHome.startsWith("/usr")) {
            builder.readOnlyBind(javaHome, javaHome.toString());
        }
        backend = builder.build();
        SandboxSpec spec = SandboxSpec.builder("java-e2e").egress(Egress.ALLOWLIST)
                .egressAllow(List.of(LoopbackEgressServers.ALLOWED_HOST + ":" + allowed.port() + "=127.0.0.1")).build();
        workDir = spec.workDir();
        sandbox = backend.acquire(new SandboxKey("e2e", "java", "agent"), spec);
        sandbox.writeFile("Fetch.java", FETCH, workDir);
    }

    @AfterEach
    void stop() {
        backend.disposeScope("e2e", "java");
        backend.close();
        allowed.close();
        unlisted.close();
        LocalStore.deleteTree(stateRoot);
    }

    @Test
    void aJavaProgramReachesTheAllowedHostAndIsRefusedTheUnlistedOne() {
        ExecResult reached = fetch(allowed.url(LoopbackEgressServers.ALLOWED_HOST).toString(), Map.of());
        assertThat(reached.stdoutText()).as("the Java program's view of the allowed host; stderr: %s",
                reached.stderrText()).contains("status=200", allowed.body().strip());
        assertThat(allowed.requests()).as("requests the allowed server saw").isEqualTo(1);

        ExecResult refused = fetch(unlisted.url(LoopbackEgressServers.UNLISTED_HOST).toString(), Map.of());
        assertThat(refused.stdoutText()).as("the Java program's view of the unlisted host; stderr: %s",
                refused.stderrText()).contains("status=403").doesNotContain(unlisted.body().strip());
        assertThat(unlisted.requests()).as("requests the unlisted server saw").isZero();
    }

    @Test
    void withoutJavaToolOptionsTheSameProgramReachesNothing() {
        // The control: the proxy variables alone do not move the JVM, so JAVA_TOOL_OPTIONS is what made it work.
        ExecResult direct = fetch(allowed.url(LoopbackEgressServers.ALLOWED_HOST).toString(),
                Map.of("JAVA_TOOL_OPTIONS", ""));
        assertThat(direct.stdoutText()).as("stderr: %s", direct.stderrText()).contains("failed=")
                .doesNotContain("status=");
        assertThat(allowed.requests()).isZero();
    }

    private ExecResult fetch(String url, Map<String, String> environment) {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        ExecResult result = sandbox.exec(Command.argv(java, "Fetch.java", url),
                ExecOptions.in(workDir, JVM_BOUND).withEnvironment(environment));
        assertThat(result.exitCode()).as("exit of the Java program; stderr: %s", result.stderrText()).isZero();
        return result;
    }
}
