package org.sandbox4j.docker;

import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * A bounded pipe from a started process's stdin writer to the feeder exec's attached stdin, which
 * docker-java copies from this stream to the engine. A writer waits while {@link #CAPACITY} bytes
 * are unread (the engine stopped taking them because the guest does not read): that is how the
 * guest's pace reaches {@code write}. {@link #end} is the end of input: a reader gets what is left,
 * then end of stream, and {@link #awaitDrained} tells when it got there; {@link #abort} drops what
 * is left and refuses later writes.
 */
final class FeedPipe extends InputStream {

    /** Bytes held between the writer and the engine. */
    static final int CAPACITY = 64 * 1024;

    private final byte[] ring = new byte[CAPACITY];
    private int start;
    private int count;
    private boolean ended;
    private boolean aborted;
    private boolean drained;

    /** Writes all of {@code bytes[off, off+len)}, waiting while the pipe is full. */
    synchronized void write(byte[] bytes, int off, int len) throws IOException {
        int done = 0;
        while (done < len) {
            while (count == CAPACITY && !aborted && !ended) {
                waitQuietly(0);
            }
            if (aborted || ended) {
                throw new IOException("the process's stdin is closed");
            }
            int at = (start + count) % CAPACITY;
            int chunk = Math.min(len - done, Math.min(CAPACITY - count, CAPACITY - at));
            System.arraycopy(bytes, off + done, ring, at, chunk);
            count += chunk;
            done += chunk;
            notifyAll();
        }
    }

    /** No more input: a reader drains what is here, then reads end of stream. */
    synchronized void end() {
        ended = true;
        notifyAll();
    }

    /** Drops what is here; writes fail and a reader reads end of stream. */
    synchronized void abort() {
        aborted = true;
        count = 0;
        notifyAll();
    }

    /**
     * Waits at most {@code wait} until a reader reached the end (after {@link #end}) or the pipe was
     * aborted; whether either happened.
     */
    synchronized boolean awaitDrained(Duration wait) {
        long deadline = System.nanoTime() + wait.toNanos();
        while (!drained && !aborted) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            waitQuietly(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
        }
        return true;
    }

    @Override
    public synchronized int read() throws IOException {
        byte[] one = new byte[1];
        return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public synchronized int read(byte[] into, int off, int len) throws IOException {
        if (len == 0) {
            return 0;
        }
        while (count == 0 && !ended && !aborted) {
            try {
                wait();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while waiting for stdin", e);
            }
        }
        if (count == 0) {
            drained = true;
            notifyAll();
            return -1;
        }
        int chunk = Math.min(len, Math.min(count, CAPACITY - start));
        System.arraycopy(ring, start, into, off, chunk);
        start = (start + chunk) % CAPACITY;
        count -= chunk;
        notifyAll();
        return chunk;
    }

    @Override
    public synchronized int available() {
        return count;
    }

    @Override
    public void close() {
        abort();
    }

    private void waitQuietly(long millis) {
        try {
            wait(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            aborted = true;
        }
    }
}
