package org.sandbox4j.core;

/** The authority a host tool acts with when guest code dispatches it. */
public enum Identity implements WireValue {
    /** The host application's own, full authority. */
    APP("app"),
    /** Authority delegated by the end user. Declarable, never servable at dispatch yet. */
    USER("user");

    private final String wire;

    Identity(String wire) {
        this.wire = wire;
    }

    @Override
    public String wire() {
        return wire;
    }

    public static Identity parse(String value) {
        return WireValue.parse(Identity.class, value);
    }
}
