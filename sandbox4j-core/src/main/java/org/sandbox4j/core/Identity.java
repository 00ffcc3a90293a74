package org.sandbox4j.core;

/** The authority a host tool acts with when guest code dispatches it. */
public enum Identity implements WireValue {
    /** The host application's own, full authority. */
    APP,
    /** Authority delegated by the end user. Declarable, never servable at dispatch yet. */
    USER;

    public static Identity parse(String value) {
        return WireValue.parse(Identity.class, value);
    }
}
