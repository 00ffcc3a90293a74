package org.sandbox4j.agent;

import java.util.ArrayDeque;

/**
 * The frames the agent sent about one request id, queued by the connection's reader for the
 * thread waiting on them. The queue is bounded in bytes by what the host let the agent send (an
 * exec's output credit, a read's cap): an agent that sends more breaks the protocol, and the
 * connection with it, before the host holds more than the bound.
 */
final class PendingCall {

    private final int id;
    private final long maxQueuedBytes;
    private final OutputSink sink;
    private final ArrayDeque<Frame> frames = new ArrayDeque<>();
    private long queuedBytes;
    private AgentConnectionFailed failure;

    PendingCall(int id, long maxQueuedBytes) {
        this(id, maxQueuedBytes, null);
    }

    /**
     * @param sink where the reader puts the call's OUT data, queueing only a note of it; {@code null}
     *             to queue OUT frames as they are
     */
    PendingCall(int id, long maxQueuedBytes, OutputSink sink) {
        this.id = id;
        this.maxQueuedBytes = maxQueuedBytes;
        this.sink = sink;
    }

    int id() {
        return id;
    }

    /** Where the reader puts this call's output, if anywhere. */
    java.util.Optional<OutputSink> sink() {
        return java.util.Optional.ofNullable(sink);
    }

    /** Called by the reader alone. */
    synchronized void deliver(Frame frame) {
        if (queuedBytes + frame.cost() > maxQueuedBytes) {
            throw new AgentProtocolViolation("the agent sent more about request " + id + " than the host let it (over "
                    + maxQueuedBytes + " bytes waiting)");
        }
        queuedBytes += frame.cost();
        frames.add(frame);
        notifyAll();
    }

    /** Fails every wait, now and later, once what was queued is taken. */
    synchronized void fail(AgentConnectionFailed cause) {
        if (failure == null) {
            failure = cause;
        }
        notifyAll();
    }

    /**
     * The next frame, or {@code null} once {@code deadlineNanos} ({@link System#nanoTime()}) passed.
     *
     * @throws AgentConnectionFailed the connection broke and nothing more will come
     */
    synchronized Frame next(long deadlineNanos) throws InterruptedException {
        while (frames.isEmpty()) {
            if (failure != null) {
                throw new AgentConnectionFailed(failure.getMessage(), failure);
            }
            long left = deadlineNanos - System.nanoTime();
            if (left <= 0) {
                return null;
            }
            long millis = left / 1_000_000;
            wait(millis, (int) (left % 1_000_000));
        }
        Frame frame = frames.poll();
        queuedBytes -= frame.cost();
        return frame;
    }
}
