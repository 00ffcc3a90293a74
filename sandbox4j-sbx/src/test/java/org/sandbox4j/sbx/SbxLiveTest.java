package org.sandbox4j.sbx;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.Egress;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.testkit.tck.Conformance;
import org.sandbox4j.testkit.tck.ConformanceTarget;
import org.sandbox4j.testkit.tck.Suites;

/**
 * The live suite: every TCK suite {@link SbxBackend} declares, against a real Docker Sandboxes
 * {@code sbx} on this machine, and a check that a guest request to a public name gets no answer. Enabled only by
 * {@code SANDBOX4J_SBX_E2E=1}; the binary is {@code SANDBOX4J_SBX_PATH}, else {@code sbx} on
 * {@code PATH} (or the Windows install location). See the module README for host preparation
 * (sbx login, SSH agent forwarding off, no MCP server, {@code sbx daemon restart}).
 *
 * <p>Workspaces go to the default per-user workspace root; every sandbox the suite makes carries
 * the prefix {@value #PREFIX} and is removed by the TCK's disposal probes and the network check.
 */
@EnabledIfEnvironmentVariable(named = SbxLiveTest.ENABLE, matches = "1")
class SbxLiveTest {

    static final String ENABLE = "SANDBOX4J_SBX_E2E";
    static final String PATH_VARIABLE = "SANDBOX4J_SBX_PATH";
    static final String PREFIX = "sandbox4j-live-";
    /** A public name: with {@code --deny-network "**"} no request to it may succeed. */
    static final String PUBLIC_URL = "https://www.docker.com/";

    static SbxConfig config() {
        String path = System.getenv(PATH_VARIABLE);
        SbxConfig.Builder builder = SbxConfig.builder().namePrefix(PREFIX);
        if (path != null && !path.isBlank()) {
            builder.sbxPath(path);
        }
        return builder.build();
    }

    static final ConformanceTarget TARGET = new ConformanceTarget() {
        @Override
        public SandboxBackend newBackend() {
            return new SbxBackend(config());
        }

        /** The one egress mode it declares (see SbxConformanceTest). */
        @Override
        public SandboxSpec spec(SandboxSpec.Builder suiteSpec) {
            return suiteSpec.egress(Egress.DENY_ALL).build();
        }

        /** A microVM keeps its disk between commands and across idle stops. */
        @Override
        public boolean persistentRoot() {
            return true;
        }
    };

    @TestFactory
    Stream<DynamicNode> everySuiteTheBackendDeclares() {
        return Conformance.declaredTests(TARGET, Suites.all());
    }

    /**
     * A request from the guest to a public name fails: by name resolution, connection, a
     * "Blocked" answer from Docker's proxy (a 403, which each client here treats as a failure), or
     * a missing client, but never with the site's answer. Nothing is pointed at a private address.
     */
    @Test
    void theGuestCannotReachAPublicName() {
        SbxBackend backend = new SbxBackend(config());
        SandboxKey key = new SandboxKey("sbx-live", UUID.randomUUID().toString(), "agent");
        SandboxSpec spec = SandboxSpec.builder("live-network").egress(Egress.DENY_ALL).build();
        try {
            Sandbox sandbox = backend.acquire(key, spec);
            sandbox.writeFile(".keep", "", SandboxSpec.DEFAULT_WORK_DIR);
            ExecResult result = sandbox.exec(Command.shell(String.join("\n",
                    "url=" + PUBLIC_URL,
                    "if command -v curl >/dev/null 2>&1; then curl -sS --fail --max-time 20 -o /dev/null \"$url\"; exit $?; fi",
                    "if command -v python3 >/dev/null 2>&1; then",
                    "  exec python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=20)' \"$url\"",
                    "fi",
                    "if command -v wget >/dev/null 2>&1; then wget -q -T 20 -O /dev/null \"$url\"; exit $?; fi",
                    "echo 'no client in the guest' >&2; exit 99")),
                    ExecOptions.in(SandboxSpec.DEFAULT_WORK_DIR, Duration.ofSeconds(90)));
            assertThat(result.exitCode()).as("stdout %s stderr %s", result.stdoutText(), result.stderrText())
                    .isNotZero().isNotEqualTo(99);
        } finally {
            backend.disposeScope(key.scope(), key.threadId());
        }
    }
}
