package org.sandbox4j.local;

import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.TestFactory;
import org.sandbox4j.testkit.tck.Conformance;
import org.sandbox4j.testkit.tck.Suites;

/**
 * The whole TCK against a real {@link BubblewrapBackend} on this host, as whoever runs the build
 * (root in CI). {@link UnprivilegedConformanceTest} runs it again as an unprivileged user.
 */
class BubblewrapConformanceTest {

    private static final BubblewrapTarget TARGET = BubblewrapTarget.fresh();

    @AfterAll
    static void cleanUp() {
        TARGET.close();
    }

    @TestFactory
    Stream<DynamicNode> everySuiteTheBackendDeclares() {
        return Conformance.declaredTests(TARGET, Suites.all());
    }
}
