package org.sandbox4j.testkit.tck;

/** A suite run with failed probes: the message lists each failure with what it means. */
public class ConformanceFailure extends AssertionError {

    private static final long serialVersionUID = 1L;

    public ConformanceFailure(String message) {
        super(message);
    }
}
