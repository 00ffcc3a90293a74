package org.sandbox4j.testkit.tck;

/** What a probe does. It fails by throwing {@link AssertionError} (see {@link Check}). */
@FunctionalInterface
public interface ProbeBody {
    void run(ProbeContext context) throws Exception;
}
