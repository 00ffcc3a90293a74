package org.sandbox4j.testkit.tck;

import java.util.Arrays;
import java.util.Objects;

/** The TCK's assertions: each failure is an {@link AssertionError} whose message says what was seen. */
public final class Check {

    private Check() {
    }

    /** A call that must fail. */
    @FunctionalInterface
    public interface Call {
        void run() throws Exception;
    }

    public static void that(boolean condition, String failure) {
        if (!condition) {
            throw new AssertionError(failure);
        }
    }

    public static void equal(Object expected, Object actual, String what) {
        if (!Objects.deepEquals(expected, actual)) {
            throw new AssertionError(what + ": expected " + show(expected) + " but was " + show(actual));
        }
    }

    /**
     * The call must raise {@code expected} (or a subtype). Another exception, or a normal return,
     * fails the probe: a refusal of the wrong kind hides what really happened.
     */
    public static <T extends Throwable> T refusedWith(Class<T> expected, String what, Call call) {
        try {
            call.run();
        } catch (Throwable raised) {
            if (expected.isInstance(raised)) {
                return expected.cast(raised);
            }
            if (raised instanceof AssertionError assertion) {
                throw assertion;
            }
            AssertionError wrong = new AssertionError(what + ": expected " + expected.getSimpleName() + " but "
                    + "raised " + raised.getClass().getSimpleName() + ": " + raised.getMessage());
            wrong.initCause(raised);
            throw wrong;
        }
        throw new AssertionError(what + ": expected " + expected.getSimpleName() + " but the call returned normally");
    }

    static String show(Object value) {
        if (value instanceof byte[] bytes) {
            return bytes.length <= 64 ? Arrays.toString(bytes) : bytes.length + " bytes";
        }
        if (value instanceof String text) {
            return "\"" + (text.length() <= 200 ? text : text.substring(0, 200) + "…") + "\"";
        }
        return String.valueOf(value);
    }
}
