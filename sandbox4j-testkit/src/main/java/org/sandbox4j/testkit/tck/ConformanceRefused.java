package org.sandbox4j.testkit.tck;

/**
 * A suite was asked of a backend that cannot be tested by it (it lacks the suite's gate
 * capability, rung or fixture), or a run tested nothing. Refused, because a suite that skips
 * everything would pass without testing anything.
 */
public class ConformanceRefused extends IllegalStateException {

    private static final long serialVersionUID = 1L;

    public ConformanceRefused(String message) {
        super(message);
    }
}
