package org.sandbox4j.local;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxSpec;

/**
 * How a bubblewrap sandbox's acquire + first exec ({@code /bin/true}) and its dispose cost as
 * other sandboxes are held on the same state root: medians of {@code rounds} fresh keys with 0,
 * then each given count of others held (each acquired and run once). Not a test: timings belong
 * to benchmarks. Prints one line per count.
 *
 * <p>Arguments: rounds (default 21), then the counts of others to hold (default 0 100 1000).
 */
public final class FleetCostMain {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final String WORK = SandboxSpec.DEFAULT_WORK_DIR;
    private static final int WARM_UP = 5;

    private FleetCostMain() {
    }

    public static void main(String[] args) throws IOException {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 21;
        int[] counts = args.length > 1 ? Arrays.stream(args, 1, args.length).mapToInt(Integer::parseInt).toArray()
                : new int[] {0, 100, 1000};
        Path stateRoot = Files.createTempDirectory("s4jf");
        SandboxSpec spec = SandboxSpec.builder("fleet").build();
        ExecOptions options = ExecOptions.in(WORK, TIMEOUT);
        try (BubblewrapBackend backend = BubblewrapBackend.builder().stateRoot(stateRoot).build()) {
            int held = 0;
            for (int count : counts) {
                for (; held < count; held++) {
                    backend.acquire(key("held-" + held), spec).exec(Command.argv("/bin/true"), options);
                }
                // Warm up, then measure.
                measure(backend, spec, options, "warm-" + count, WARM_UP);
                long[][] times = measure(backend, spec, options, "round-" + count, rounds);
                System.out.printf("held=%d rounds=%d acquire+first-exec median=%.1f ms (acquire %.1f, first exec %.1f)"
                        + " dispose median=%.1f ms%n", count, rounds, median(times[0]), median(times[2]),
                        median(times[3]), median(times[1]));
            }
            for (int i = 0; i < held; i++) {
                backend.dispose(key("held-" + i));
            }
        } finally {
            LocalStore.deleteTree(stateRoot);
        }
    }

    private static long[][] measure(BubblewrapBackend backend, SandboxSpec spec, ExecOptions options, String prefix,
            int rounds) {
        long[] acquire = new long[rounds];
        long[] dispose = new long[rounds];
        long[] acquireAlone = new long[rounds];
        long[] execAlone = new long[rounds];
        for (int round = 0; round < rounds; round++) {
            SandboxKey key = key(prefix + "-" + round);
            long start = System.nanoTime();
            var sandbox = backend.acquire(key, spec);
            long handed = System.nanoTime();
            int exit = sandbox.exec(Command.argv("/bin/true"), options).exitCode();
            long acquired = System.nanoTime();
            backend.dispose(key);
            long disposed = System.nanoTime();
            if (exit != 0) {
                throw new IllegalStateException("/bin/true exited " + exit);
            }
            acquire[round] = acquired - start;
            dispose[round] = disposed - acquired;
            acquireAlone[round] = handed - start;
            execAlone[round] = acquired - handed;
        }
        return new long[][] {acquire, dispose, acquireAlone, execAlone};
    }

    private static SandboxKey key(String thread) {
        return new SandboxKey("fleet-scope", thread, "agent");
    }

    private static double median(long[] nanos) {
        long[] sorted = nanos.clone();
        Arrays.sort(sorted);
        int middle = sorted.length / 2;
        double value = sorted.length % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2.0;
        return value / 1e6;
    }
}
