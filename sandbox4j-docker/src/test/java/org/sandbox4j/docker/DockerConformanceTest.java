package org.sandbox4j.docker;

import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;
import org.sandbox4j.testkit.tck.Conformance;
import org.sandbox4j.testkit.tck.Suites;

/**
 * The whole TCK against a real {@link DockerBackend} on each engine: Docker with runc (container),
 * Docker with gVisor's runsc (hardened_container), Podman's Docker-compatible service with runc
 * (container); every probe as it stands. An engine that is not provisioned fails its own run with
 * the reason, and the others still run.
 *
 * <p>The engines run at once (each mostly waits on its engine: container starts, execs, the TCK's
 * own timeouts); one engine's probes run one after another, in the TCK's order.
 */
@ParameterizedClass(name = "{0}")
@EnumSource(DockerTarget.Engine.class)
@Execution(ExecutionMode.CONCURRENT)
class DockerConformanceTest {

    @Parameter
    DockerTarget.Engine engine;

    private DockerTarget target;

    @AfterEach
    void cleanUp() {
        if (target != null) {
            target.close();
        }
    }

    @TestFactory
    @Execution(ExecutionMode.SAME_THREAD)
    Stream<DynamicNode> everySuiteTheBackendDeclares() {
        target = engine.target();
        return Conformance.declaredTests(target, Suites.all());
    }
}
