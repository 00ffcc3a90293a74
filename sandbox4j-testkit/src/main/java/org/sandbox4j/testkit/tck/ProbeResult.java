package org.sandbox4j.testkit.tck;

import java.util.Objects;

/**
 * How one probe ended.
 *
 * @param suite   the suite's name
 * @param probe   the probe's stable name
 * @param why     what a failure means
 * @param outcome passed, failed or skipped
 * @param detail  the failure text or the reason for skipping; empty when passed
 */
public record ProbeResult(String suite, String probe, String why, Outcome outcome, String detail) {

    public enum Outcome {
        PASSED,
        FAILED,
        SKIPPED
    }

    public ProbeResult {
        Objects.requireNonNull(suite, "suite");
        Objects.requireNonNull(probe, "probe");
        Objects.requireNonNull(why, "why");
        Objects.requireNonNull(outcome, "outcome");
        Objects.requireNonNull(detail, "detail");
    }

    public boolean passed() {
        return outcome == Outcome.PASSED;
    }

    public boolean failed() {
        return outcome == Outcome.FAILED;
    }

    public boolean skipped() {
        return outcome == Outcome.SKIPPED;
    }
}
