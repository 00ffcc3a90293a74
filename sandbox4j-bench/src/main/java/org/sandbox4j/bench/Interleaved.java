package org.sandbox4j.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Runs contenders round by round, each once per round, the one that goes first moving on each
 * round, so a load that comes and goes falls on all of them alike; returns each one's median.
 */
final class Interleaved {

    private static final double NANOS_PER_MILLI = 1_000_000.0;

    private Interleaved() {
    }

    /**
     * @param warmup rounds run first and not counted
     * @param rounds counted rounds (at least one)
     * @return the median milliseconds of each contender, in the order given
     */
    static double[] medianMillis(int warmup, int rounds, List<Sample> contenders) throws Exception {
        int count = contenders.size();
        List<long[]> samples = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            samples.add(new long[rounds]);
        }
        for (int round = 0; round < warmup + rounds; round++) {
            for (int step = 0; step < count; step++) {
                int contender = (round + step) % count;
                long nanos = contenders.get(contender).measureNanos();
                if (round >= warmup) {
                    samples.get(contender)[round - warmup] = nanos;
                }
            }
        }
        double[] medians = new double[count];
        for (int i = 0; i < count; i++) {
            medians[i] = median(samples.get(i)) / NANOS_PER_MILLI;
        }
        return medians;
    }

    static double median(long[] values) {
        long[] sorted = values.clone();
        Arrays.sort(sorted);
        int middle = sorted.length / 2;
        return sorted.length % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2.0;
    }
}
