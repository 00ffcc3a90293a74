package org.sandbox4j.bench;

/**
 * One measured call of one contender: it times the part that counts itself (with
 * {@link System#nanoTime()}) and checks what it got outside that part, so a check never adds to
 * the time.
 */
@FunctionalInterface
interface Sample {

    /** Runs the call once; returns the nanoseconds the measured part took. */
    long measureNanos() throws Exception;

    /** A sample that is all measured part. */
    static Sample timed(Call call) {
        return () -> {
            long start = System.nanoTime();
            call.run();
            return System.nanoTime() - start;
        };
    }

    /** A call whose whole duration counts. */
    @FunctionalInterface
    interface Call {
        void run() throws Exception;
    }
}
