package org.sandbox4j.bench;

import java.util.Locale;

/** What a row of {@link SideBySide} aims at, and whether a measurement meets it. */
record Target(Measure measure, double bound) {

    /** What the bound limits. */
    enum Measure {
        /** sandbox4j's median over the raw mechanism's. */
        RATIO,
        /** sandbox4j's median, in milliseconds. */
        MILLIS,
        /** sandbox4j's peak heap bytes per byte of output. */
        BYTES_PER_BYTE,
        /** Nothing: the row is for reading. */
        NONE
    }

    static final Target NONE = new Target(Measure.NONE, 0);

    static Target ratioAtMost(double bound) {
        return new Target(Measure.RATIO, bound);
    }

    static Target millisAtMost(double bound) {
        return new Target(Measure.MILLIS, bound);
    }

    static Target bytesPerByteAtMost(double bound) {
        return new Target(Measure.BYTES_PER_BYTE, bound);
    }

    String text() {
        return switch (measure) {
            case RATIO -> String.format(Locale.ROOT, "<= %.1fx", bound);
            case MILLIS -> String.format(Locale.ROOT, "<= %.0f ms", bound);
            case BYTES_PER_BYTE -> String.format(Locale.ROOT, "<= %.1f B/B", bound);
            case NONE -> "-";
        };
    }

    /** "yes", "no", or "-" when there is no target. */
    String met(double sandbox4j, double ratio) {
        double measured = switch (measure) {
            case RATIO -> ratio;
            case MILLIS, BYTES_PER_BYTE -> sandbox4j;
            case NONE -> Double.NaN;
        };
        if (measure == Measure.NONE || Double.isNaN(measured)) {
            return "-";
        }
        return measured <= bound ? "yes" : "no";
    }
}
