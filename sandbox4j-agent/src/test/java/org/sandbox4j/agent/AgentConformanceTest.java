package org.sandbox4j.agent;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.TestFactory;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.core.spi.TreeRemoval;
import org.sandbox4j.testkit.tck.Conformance;
import org.sandbox4j.testkit.tck.ConformanceTarget;
import org.sandbox4j.testkit.tck.Suites;

/** Every suite {@link AgentTestBackend} declares, against the real agent resident on this host. */
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
        return Conformance.declaredTests(target, Suites.all());
    }
}
