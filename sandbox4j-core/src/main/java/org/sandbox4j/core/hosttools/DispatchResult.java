package org.sandbox4j.core.hosttools;

/**
 * The outcome of one dispatch: exactly one of a JSON value for the guest or a refusal sentence.
 *
 * @param valueJson the tool's result as strict JSON, or {@code null} when refused
 * @param refusal   a fixed, sanitised sentence starting {@code Error:}, or {@code null} when delivered
 */
public record DispatchResult(String valueJson, String refusal) {

    public DispatchResult {
        if ((valueJson == null) == (refusal == null)) {
            throw new IllegalArgumentException(
                    "a dispatch result carries exactly one of a value or a refusal, not "
                            + (valueJson == null ? "neither" : "both"));
        }
    }

    public static DispatchResult delivered(String valueJson) {
        return new DispatchResult(valueJson, null);
    }

    public static DispatchResult refused(String refusal) {
        return new DispatchResult(null, refusal);
    }

    /** Whether the tool's value was delivered. */
    public boolean ok() {
        return refusal == null;
    }
}
