package org.sandbox4j.testkit.tck;

import java.util.ArrayList;
import java.util.List;

/** Every suite the TCK has, by name. */
public final class Suites {

    private Suites() {
    }

    /** Every suite, in the order they should run (EXEC last: a timeout may take its sandbox down). */
    public static List<Suite> all() {
        List<Suite> all = new ArrayList<>();
        // Suites are added here as they land.
        all.add(lifecycle());
        all.add(reclaim());
        all.add(isolation());
        return List.copyOf(all);
    }

    /** Warm reuse, separation by key and kind, racing acquires, dispose and disposeScope from another instance. */
    public static Suite lifecycle() {
        return LifecycleSuite.suite();
    }

    /** The per-call reclaim helper's guards, quoting and refusal reporting, against a real guest. */
    public static Suite reclaim() {
        return ReclaimSuite.suite();
    }

    /** The container rung's boundary, checked from inside the guest. */
    public static Suite isolation() {
        return IsolationSuite.suite();
    }
}
