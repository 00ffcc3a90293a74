package org.sandbox4j.testkit.tck;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.DatagramChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A DNS-shaped UDP listener on {@code 127.0.0.1} and an ephemeral port: it counts the datagrams
 * it receives and answers each one (QR bit set, no records), so a guest that can reach it would
 * also see its name "resolve". A fence datagram from the host marks the end of a probe's
 * attempt: once the fence is in, anything the guest sent before it has been counted, without a
 * timing guess (a socket's receive queue is first in, first out).
 */
final class LoopbackDnsListener implements AutoCloseable {

    /** A DNS message larger than this is not a query the probe sent; it is counted and truncated. */
    private static final int DATAGRAM_LIMIT = 512;
    private static final int EPHEMERAL_PORT = 0;
    private static final int FLAGS_OFFSET = 2;
    private static final int QUERY_RESPONSE_BIT = 0x80;
    private static final int HEADER_LENGTH = 12;
    private static final byte[] FENCE = "sandbox4j-tck-fence".getBytes(StandardCharsets.US_ASCII);
    /** How long the host waits for its own fence (or control) datagram on loopback. */
    static final Duration FENCE_WAIT = Duration.ofSeconds(10);

    private final DatagramChannel channel;
    private final Thread receiver;
    private final AtomicLong queries = new AtomicLong();
    private volatile CountDownLatch fence = new CountDownLatch(1);

    private LoopbackDnsListener() throws IOException {
        channel = DatagramChannel.open();
        channel.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), EPHEMERAL_PORT));
        receiver = new Thread(this::receive, "sandbox4j-tck-loopback-dns");
        receiver.setDaemon(true);
        receiver.start();
    }

    static LoopbackDnsListener start() {
        try {
            return new LoopbackDnsListener();
        } catch (IOException failure) {
            throw new UncheckedIOException("could not start the loopback DNS listener", failure);
        }
    }

    int port() {
        return ((InetSocketAddress) localAddress()).getPort();
    }

    /** Datagrams received other than the host's fences. */
    long queries() {
        return queries.get();
    }

    /**
     * Sends a fence from the host and waits for it: afterwards {@link #queries()} includes every
     * datagram sent before. Fails when even the host's own datagram does not arrive.
     */
    void awaitFence() throws IOException, InterruptedException {
        CountDownLatch awaited = new CountDownLatch(1);
        fence = awaited;
        try (DatagramSocket sender = new DatagramSocket(new InetSocketAddress(InetAddress.getLoopbackAddress(),
                EPHEMERAL_PORT))) {
            sender.send(new DatagramPacket(FENCE, FENCE.length, localAddress()));
        }
        Check.that(awaited.await(FENCE_WAIT.toMillis(), TimeUnit.MILLISECONDS), "the host's own datagram to its "
                + "loopback listener did not arrive within " + FENCE_WAIT + ": the probe cannot tell anything");
    }

    /**
     * Sends {@code query} from the host and returns the answer: proves the listener works. The
     * query is counted in {@link #queries()} like any other.
     *
     * @throws java.net.SocketTimeoutException no answer came within {@link #FENCE_WAIT}
     */
    byte[] askFromTheHost(byte[] query) throws IOException {
        try (DatagramSocket asker = new DatagramSocket(new InetSocketAddress(InetAddress.getLoopbackAddress(),
                EPHEMERAL_PORT))) {
            asker.setSoTimeout((int) FENCE_WAIT.toMillis());
            asker.send(new DatagramPacket(query, query.length, localAddress()));
            DatagramPacket answer = new DatagramPacket(new byte[DATAGRAM_LIMIT], DATAGRAM_LIMIT);
            asker.receive(answer);
            return Arrays.copyOf(answer.getData(), answer.getLength());
        }
    }

    @Override
    public void close() {
        try {
            channel.close();
        } catch (IOException ignored) {
            // closing a datagram socket on loopback cannot lose anything the probe needs
        }
        receiver.interrupt();
    }

    private SocketAddress localAddress() {
        try {
            return channel.getLocalAddress();
        } catch (IOException failure) {
            throw new UncheckedIOException(failure);
        }
    }

    private void receive() {
        ByteBuffer buffer = ByteBuffer.allocate(DATAGRAM_LIMIT);
        try {
            while (channel.isOpen()) {
                buffer.clear();
                SocketAddress from = channel.receive(buffer);
                byte[] datagram = Arrays.copyOf(buffer.array(), buffer.position());
                if (Arrays.equals(datagram, FENCE)) {
                    fence.countDown();
                    continue;
                }
                queries.incrementAndGet();
                if (datagram.length >= HEADER_LENGTH) {
                    datagram[FLAGS_OFFSET] |= (byte) QUERY_RESPONSE_BIT;
                    channel.send(ByteBuffer.wrap(datagram), from);
                }
            }
        } catch (ClosedChannelException closed) {
            // closed by the probe: done
        } catch (IOException failure) {
            throw new UncheckedIOException("the loopback DNS listener failed", failure);
        }
    }
}
