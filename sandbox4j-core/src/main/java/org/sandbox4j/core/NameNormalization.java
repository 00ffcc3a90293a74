package org.sandbox4j.core;

/** How a sink spells the names of the artifacts it lands. */
public enum NameNormalization implements WireValue {
    /** Unicode NFC, so one name has one spelling. The default. */
    NFC,
    /** Byte-exact: names are delivered as declared. */
    NONE;

    public static NameNormalization parse(String value) {
        return WireValue.parse(NameNormalization.class, value);
    }
}
