package org.sandbox4j.testkit.tck;

import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.TestFactory;

/**
 * The shortest way to run the TCK: extend this in your backend's tests and say how to make the
 * backend.
 *
 * <pre>{@code
 * class MyBackendConformanceTest extends ConformanceTestSuite {
 *     @Override
 *     protected ConformanceTarget target() {
 *         return MyBackend::new;
 *     }
 * }
 * }</pre>
 *
 * Every suite the backend is eligible for runs, one dynamic test per probe; suites it is not
 * eligible for are reported as skipped, with the reason.
 */
public abstract class ConformanceTestSuite {

    /** How to make the backend under test, and where the defaults do not fit, how to reach its guest. */
    protected abstract ConformanceTarget target();

    /** The suites offered; default every suite the TCK has. */
    protected List<Suite> suites() {
        return Suites.all();
    }

    @TestFactory
    public Stream<DynamicNode> conformance() {
        return Conformance.declaredTests(target(), suites());
    }
}
