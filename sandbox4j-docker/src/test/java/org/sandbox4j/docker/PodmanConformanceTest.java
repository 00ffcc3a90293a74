package org.sandbox4j.docker;

import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.TestFactory;
import org.sandbox4j.testkit.tck.Conformance;
import org.sandbox4j.testkit.tck.Suites;

/** The whole TCK against a real {@link DockerBackend}: Podman's Docker-compatible service with runc (container). */
class PodmanConformanceTest {

    private static DockerTarget target;

    @AfterAll
    static void cleanUp() {
        if (target != null) {
            target.close();
        }
    }

    @TestFactory
    Stream<DynamicNode> everySuiteTheBackendDeclares() {
        target = DockerTarget.podman();
        return Conformance.declaredTests(target, Suites.all());
    }
}
