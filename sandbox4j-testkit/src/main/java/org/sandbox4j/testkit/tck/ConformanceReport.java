package org.sandbox4j.testkit.tck;

import java.util.List;
import java.util.Objects;
import java.util.stream.Collectors;

/**
 * Every probe's result for one suite run, in probe order.
 *
 * @param suite    the suite's name
 * @param backend  the backend's name
 * @param measured true for a measure-only run (no gate, no verdict)
 * @param results  one per probe
 */
public record ConformanceReport(String suite, String backend, boolean measured, List<ProbeResult> results) {

    public ConformanceReport {
        Objects.requireNonNull(suite, "suite");
        Objects.requireNonNull(backend, "backend");
        results = List.copyOf(results);
    }

    public List<ProbeResult> failures() {
        return results.stream().filter(ProbeResult::failed).collect(Collectors.toUnmodifiableList());
    }

    public List<ProbeResult> skipped() {
        return results.stream().filter(ProbeResult::skipped).collect(Collectors.toUnmodifiableList());
    }

    public List<ProbeResult> passed() {
        return results.stream().filter(ProbeResult::passed).collect(Collectors.toUnmodifiableList());
    }

    /** The result of the probe named {@code probe}. */
    public ProbeResult result(String probe) {
        return results.stream().filter(r -> r.probe().equals(probe)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no probe named '" + probe + "' in " + suite));
    }

    /**
     * @return this report, when no probe failed
     * @throws ConformanceFailure listing each failed probe, what was seen, and what it means
     */
    public ConformanceReport assertPassed() {
        List<ProbeResult> failed = failures();
        if (failed.isEmpty()) {
            return this;
        }
        StringBuilder message = new StringBuilder().append(failed.size()).append(" of ").append(results.size())
                .append(' ').append(suite).append(" conformance probes failed for backend '").append(backend)
                .append("':");
        for (ProbeResult failure : failed) {
            message.append("\n  - ").append(failure.probe()).append(": ").append(failure.detail())
                    .append("\n    (").append(failure.why()).append(')');
        }
        throw new ConformanceFailure(message.toString());
    }
}
