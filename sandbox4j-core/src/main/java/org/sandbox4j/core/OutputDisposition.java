package org.sandbox4j.core;

/** What happens to a declared output once it is read from the sandbox. */
public enum OutputDisposition implements WireValue {
    /** Delivered to the host's sink; the model gets a reference to it. */
    LAND,
    /** Parsed by the kind itself and never delivered. */
    CONSUME;

    public static OutputDisposition parse(String value) {
        return WireValue.parse(OutputDisposition.class, value);
    }
}
