package org.sandbox4j.agent;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.TestFactory;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.core.spi.TreeRemoval;
import org.sandbox4j.testkit.tck.Conformance;
import org.sandbox4j.testkit.tck.ConformanceTarget;
import org.sandbox4j.testkit.tck.ExecSuite;
import org.sandbox4j.testkit.tck.Suite;
import org.sandbox4j.testkit.tck.Suites;

/**
 * The suites {@link AgentTestBackend} declares, against the real agent resident on this host,
 * but EXEC. A resident agent started with {@code --no-cgroup} (this host has no cgroup v2 it may
 * use) can only kill a command's process group, and EXEC's {@code a-timeout-kills-the-whole-tree}
 * rightly fails it: a {@code setsid} child escapes. The agent's EXEC is proven where it has
 * {@code cgroup.kill}: {@code sandbox4j-microvm}'s conformance test runs the whole EXEC suite
 * through this client and this agent.
 */
class AgentConformanceTest {

    private static Path root;
    private static ResidentAgent agent;

    @BeforeAll
    static void start() throws IOException {
        root = Files.createTempDirectory("sandbox4j-agent-tck-");
        agent = ResidentAgent.start(AgentBinary.path(), AgentTestBackend.NAME);
    }

    @AfterAll
    static void stop() throws IOException {
        agent.close();
        TreeRemoval.remove(root, TreeRemoval.Mode.PROCESSES_STOPPED, TreeRemoval.DEFAULT_DEADLINE);
    }

    @TestFactory
    Stream<DynamicNode> everySuiteTheBackendDeclares() {
        ConformanceTarget target = new ConformanceTarget() {
            @Override
            public SandboxBackend newBackend() {
                return new AgentTestBackend(root, agent.connection());
            }
        };
        List<Suite> suites = Suites.all().stream().filter(suite -> !suite.name().equals(ExecSuite.NAME)).toList();
        return Conformance.declaredTests(target, suites);
    }
}
