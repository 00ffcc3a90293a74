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
        all.add(exec());
        return List.copyOf(all);
    }

    /** Runs, exit codes, streams, the output cap, environment, stdin, concurrency and timeouts. */
    public static Suite exec() {
        return ExecSuite.suite();
    }
}
