package org.sandbox4j.agent;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicContainer;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.TestFactory;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.core.spi.TreeRemoval;
import org.sandbox4j.testkit.tck.Conformance;
import org.sandbox4j.testkit.tck.ConformanceTarget;
import org.sandbox4j.testkit.tck.Suites;

/**
 * Every suite {@link AgentTestBackend} declares, EXEC and INTERACTIVE_EXEC included, through the
 * agent as the resident backends will run it: with {@code --marker-kill} in a PID namespace of its
 * own (a container's shape), and with {@code --exec-namespaces --exec-user 65534:65534} in a
 * bubblewrap sandbox. Both kill a command's whole tree without a cgroup.
 */
class ResidentAgentConformanceTest {

    @TestFactory
    Stream<DynamicNode> withMarkerKill() throws IOException {
        return suites("marker-kill", ResidentLaunchers.pidNamespace(), ResidentLaunchers.MARKER_KILL_OPTIONS, null);
    }

    @TestFactory
    Stream<DynamicNode> withExecNamespaces() throws IOException {
        Path root = ResidentLaunchers.workRoot("agent-tck-ns-");
        return suites("exec-namespaces", ResidentLaunchers.bubblewrap(root), ResidentLaunchers.EXEC_NAMESPACES_OPTIONS,
                root);
    }

    /** One agent for the whole run of the suites, stopped (and its root removed) after the last. */
    private static Stream<DynamicNode> suites(String name, List<String> launcher, List<String> options, Path given)
            throws IOException {
        Path root = given != null ? given : ResidentLaunchers.workRoot("agent-tck-marker-");
        ResidentAgent agent = ResidentAgent.start(launcher, AgentBinary.path(), options, AgentTestBackend.NAME);
        ConformanceTarget target = new ConformanceTarget() {
            @Override
            public SandboxBackend newBackend() {
                return new AgentTestBackend(root, agent.connection(), true);
            }
        };
        Stream<DynamicNode> tests = Stream.of(DynamicContainer.dynamicContainer(name,
                Conformance.declaredTests(target, Suites.all())));
        return tests.onClose(() -> {
            agent.close();
            try {
                TreeRemoval.remove(root, TreeRemoval.Mode.PROCESSES_STOPPED, TreeRemoval.DEFAULT_DEADLINE);
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
    }
}
