package org.sandbox4j.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.util.ArrayList;
import java.util.List;

/**
 * How much heap one call took at its peak: after a GC, every heap pool's peak is reset; the call
 * runs; the sum of the pools' peaks less what was in use before is the answer. Pools peak at
 * different moments, and a young pool's peak counts garbage not yet collected, so the sum may
 * overstate what was live at once, never understate it; {@link #pools()} says where it went.
 *
 * @param bytes the sum of the pools' peaks less the heap in use before the call
 * @param pools each pool's name and its peak less its use before, for reading
 */
record HeapPeak(long bytes, List<String> pools) {

    private static final long KIB = 1024;

    static HeapPeak of(Sample.Call call) throws Exception {
        List<MemoryPoolMXBean> heap = ManagementFactory.getMemoryPoolMXBeans().stream()
                .filter(pool -> pool.getType() == MemoryType.HEAP).toList();
        System.gc();
        long[] before = new long[heap.size()];
        for (int i = 0; i < before.length; i++) {
            before[i] = heap.get(i).getUsage().getUsed();
            heap.get(i).resetPeakUsage();
        }
        call.run();
        long total = 0;
        List<String> pools = new ArrayList<>();
        for (int i = 0; i < before.length; i++) {
            long above = heap.get(i).getPeakUsage().getUsed() - before[i];
            total += above;
            pools.add(heap.get(i).getName() + " +" + above / KIB + " KiB");
        }
        return new HeapPeak(Math.max(0, total), List.copyOf(pools));
    }
}
