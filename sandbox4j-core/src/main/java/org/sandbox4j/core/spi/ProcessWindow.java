package org.sandbox4j.core.spi;

/**
 * One stream of a started process, bounded: the producer's bytes wait here until the consumer takes
 * them, and never more than the capacity. A producer that finds it full waits, which is how a guest
 * that writes faster than its caller reads is made to wait in its own {@code write}. Guarded by the
 * process's one lock, so that one wait can watch several windows.
 */
final class ProcessWindow {

    private final Object lock;
    private final byte[] ring;
    private int head;
    private int size;
    private boolean ended;
    private boolean discarded;

    ProcessWindow(Object lock, int capacity) {
        this.lock = lock;
        this.ring = new byte[capacity];
    }

    /**
     * Puts all of {@code bytes[off, off + len)}, waiting for room; false once the window was
     * ended or discarded (nobody will read more: the producer should stop).
     */
    boolean put(byte[] bytes, int off, int len) throws InterruptedException {
        synchronized (lock) {
            while (len > 0) {
                while (size == ring.length && !ended) {
                    lock.wait();
                }
                if (ended) {
                    return false;
                }
                int moved = copyIn(bytes, off, len);
                off += moved;
                len -= moved;
            }
            return true;
        }
    }

    /** Puts as much of {@code bytes[off, off + len)} as room allows before {@code deadline}; how much went in. */
    int offer(byte[] bytes, int off, int len, long deadline) throws InterruptedException {
        synchronized (lock) {
            int moved = 0;
            while (moved < len && !discarded && !ended) {
                if (size == ring.length) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        break;
                    }
                    lock.wait(Math.max(1, left / 1_000_000));
                    continue;
                }
                moved += copyIn(bytes, off + moved, len - moved);
            }
            return moved;
        }
    }

    private int copyIn(byte[] bytes, int off, int len) {
        int moved = 0;
        while (moved < len && size < ring.length) {
            int tail = (head + size) % ring.length;
            int run = Math.min(len - moved, Math.min(ring.length - size, ring.length - tail));
            System.arraycopy(bytes, off + moved, ring, tail, run);
            size += run;
            moved += run;
        }
        lock.notifyAll();
        return moved;
    }

    /** Takes everything here (at most the capacity), making room for the producer. Call holding the lock. */
    byte[] takeAll() {
        byte[] taken = new byte[size];
        int first = Math.min(size, ring.length - head);
        System.arraycopy(ring, head, taken, 0, first);
        System.arraycopy(ring, 0, taken, first, size - first);
        head = 0;
        size = 0;
        lock.notifyAll();
        return taken;
    }

    /** Nothing will be put any more. */
    void end() {
        synchronized (lock) {
            ended = true;
            lock.notifyAll();
        }
    }

    /** Nobody will take any more: what is here is dropped and producers stop waiting. */
    void discard() {
        synchronized (lock) {
            discarded = true;
            ended = true;
            size = 0;
            lock.notifyAll();
        }
    }

    /** Call holding the lock. */
    boolean hasBytes() {
        return size > 0;
    }

    /** Ended and emptied: nothing more will come out. Call holding the lock. */
    boolean drained() {
        return ended && size == 0;
    }

    /** Ended: nothing more will be put. Call holding the lock. */
    boolean ended() {
        return ended;
    }
}
