package org.sandbox4j.agent;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
import org.sandbox4j.core.spi.ErrorDetail;
import org.sandbox4j.core.spi.ProcessPump;

/**
 * One stream of an {@link EgressTunnel}: a guest program's TCP connection on one side, a proxy
 * connection on the other. The guest's bytes wait here for the proxy, at most
 * {@link EgressProtocol#WINDOW} of them (the guest gets credit back only once they are written);
 * the proxy's bytes are read only as far as the guest granted credit. Thread-safe: the tunnel's
 * reader calls the guest's side, the stream's two threads the proxy's.
 */
final class EgressStream {

    private static final System.Logger LOG = System.getLogger(EgressStream.class.getName());

    private final EgressTunnel tunnel;
    private final long id;
    private final int session;
    private final ArrayDeque<byte[]> toProxy = new ArrayDeque<>();
    /** Bytes the guest still accepts from the proxy. */
    private int sendCredit = EgressProtocol.WINDOW;
    /** Bytes the guest may still send before it is granted more. */
    private int receiveCredit = EgressProtocol.WINDOW;
    private boolean guestEof;
    private boolean hostEofSent;
    private boolean gone;
    private int directionsDone;
    private SocketChannel channel;

    EgressStream(EgressTunnel tunnel, long id, int session) {
        this.tunnel = tunnel;
        this.id = id;
        this.session = session;
    }

    long id() {
        return id;
    }

    void start() {
        ProcessPump.daemon("egress-" + tunnel.name() + "-" + id + "-to-proxy", this::toProxyLoop).start();
    }

    // ---------------------------------------------------------------- the guest's side (the tunnel's reader)

    synchronized void fromGuest(byte[] data) {
        if (guestEof) {
            throw new AgentProtocolViolation("DATA after EOF on stream " + id);
        }
        if (data.length > receiveCredit) {
            throw new AgentProtocolViolation(data.length + " bytes on stream " + id + ", beyond its credit of "
                    + receiveCredit);
        }
        receiveCredit -= data.length;
        if (!gone) {
            toProxy.add(data);
            notifyAll();
        }
    }

    synchronized void guestEof() {
        if (guestEof) {
            throw new AgentProtocolViolation("a second EOF on stream " + id);
        }
        guestEof = true;
        notifyAll();
    }

    synchronized void credit(long bytes) {
        if (sendCredit + bytes > EgressProtocol.WINDOW) {
            throw new AgentProtocolViolation("credit of " + bytes + " on stream " + id + " beyond the window of "
                    + EgressProtocol.WINDOW);
        }
        sendCredit += (int) bytes;
        notifyAll();
    }

    /** Whether the guest still counts this stream (it forgets it after both EOFs, or a CLOSE either way). */
    synchronized boolean guestLive() {
        return !gone && !(guestEof && hostEofSent);
    }

    /**
     * Ends the stream at once: both threads stop, the proxy connection is closed.
     *
     * @param tellGuest whether the guest is sent CLOSE (not when it sent one, or the session ended)
     */
    void abort(boolean tellGuest) {
        SocketChannel proxy;
        synchronized (this) {
            if (gone) {
                return;
            }
            gone = true;
            toProxy.clear();
            proxy = channel;
            notifyAll();
        }
        tunnel.forget(this);
        EgressTunnel.closeQuietly(proxy);
        if (tellGuest) {
            tunnel.send(session, id, EgressProtocol.CLOSE, EgressTunnel.empty());
        }
    }

    // ---------------------------------------------------------------- the proxy's side (the stream's threads)

    private void toProxyLoop() {
        SocketChannel proxy;
        try {
            proxy = tunnel.connector().connect();
        } catch (IOException | RuntimeException e) {
            tunnel.refused();
            LOG.log(System.Logger.Level.DEBUG, () -> "egress tunnel " + tunnel.name() + ": stream " + id
                    + " refused, the proxy could not be reached: " + ErrorDetail.of(e));
            abort(true);
            return;
        }
        synchronized (this) {
            if (gone) {
                EgressTunnel.closeQuietly(proxy);
                return;
            }
            channel = proxy;
        }
        ProcessPump.daemon("egress-" + tunnel.name() + "-" + id + "-from-proxy", () -> fromProxyLoop(proxy)).start();
        try {
            while (true) {
                byte[] chunk;
                synchronized (this) {
                    while (!gone && toProxy.isEmpty() && !guestEof) {
                        wait();
                    }
                    if (gone) {
                        return;
                    }
                    chunk = toProxy.poll();
                }
                if (chunk == null) { // the guest's EOF, after everything it sent
                    proxy.shutdownOutput();
                    directionDone();
                    return;
                }
                ByteBuffer buffer = ByteBuffer.wrap(chunk);
                while (buffer.hasRemaining()) {
                    proxy.write(buffer);
                }
                synchronized (this) {
                    // counted before the guest can use it: its next DATA never looks like too much
                    receiveCredit += chunk.length;
                }
                tunnel.send(session, id, EgressProtocol.CREDIT, EgressFrame.credit(chunk.length));
            }
        } catch (IOException e) {
            abort(true);
        } catch (InterruptedException e) {
            abort(true);
        }
    }

    private void fromProxyLoop(SocketChannel proxy) {
        ByteBuffer buffer = ByteBuffer.allocate(EgressProtocol.DATA_MAX);
        try {
            while (true) {
                int allowed;
                synchronized (this) {
                    while (!gone && sendCredit == 0) { // a guest that stops reading stalls this stream alone
                        wait();
                    }
                    if (gone) {
                        return;
                    }
                    allowed = Math.min(sendCredit, EgressProtocol.DATA_MAX);
                }
                buffer.clear().limit(allowed);
                int read = proxy.read(buffer);
                if (read < 0) {
                    synchronized (this) {
                        if (gone) {
                            return;
                        }
                        hostEofSent = true;
                    }
                    tunnel.send(session, id, EgressProtocol.EOF, EgressTunnel.empty());
                    directionDone();
                    return;
                }
                synchronized (this) {
                    if (gone) {
                        return;
                    }
                    sendCredit -= read;
                }
                if (read > 0) {
                    tunnel.send(session, id, EgressProtocol.DATA, buffer.array(), 0, read);
                }
            }
        } catch (IOException e) {
            abort(true);
        } catch (InterruptedException e) {
            abort(true);
        }
    }

    /** Both directions ended in order: the stream is done, without a CLOSE. */
    private void directionDone() {
        SocketChannel proxy;
        synchronized (this) {
            if (++directionsDone < 2 || gone) {
                return;
            }
            gone = true;
            proxy = channel;
        }
        tunnel.forget(this);
        EgressTunnel.closeQuietly(proxy);
    }
}
