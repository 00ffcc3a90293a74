package org.sandbox4j.core;

/** How far a tool's result can be trusted. Declaration order is the rank, weakest first. */
public enum SourceIntegrity implements WireValue {
    UNTRUSTED,
    TRUSTED;

    /** 0 for {@link #UNTRUSTED}. */
    public int rank() {
        return ordinal();
    }

    /** The weaker of the two. */
    public static SourceIntegrity weakest(SourceIntegrity a, SourceIntegrity b) {
        return a.rank() <= b.rank() ? a : b;
    }

    public static SourceIntegrity parse(String value) {
        return WireValue.parse(SourceIntegrity.class, value);
    }
}
