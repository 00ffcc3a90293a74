package org.sandbox4j.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.util.List;

/**
 * How much heap one call took at its peak: after a GC, every heap pool's peak is reset; the call
 * runs; the sum of the pools' peaks less what was in use before is the answer. Pools peak at
 * different moments, so the sum may overstate, never understate.
 */
final class HeapPeak {

    private HeapPeak() {
    }

    static long bytesAbove(Sample.Call call) throws Exception {
        List<MemoryPoolMXBean> pools = ManagementFactory.getMemoryPoolMXBeans().stream()
                .filter(pool -> pool.getType() == MemoryType.HEAP)
                .toList();
        System.gc();
        long before = 0;
        for (MemoryPoolMXBean pool : pools) {
            before += pool.getUsage().getUsed();
            pool.resetPeakUsage();
        }
        call.run();
        long peak = 0;
        for (MemoryPoolMXBean pool : pools) {
            peak += pool.getPeakUsage().getUsed();
        }
        return Math.max(0, peak - before);
    }
}
