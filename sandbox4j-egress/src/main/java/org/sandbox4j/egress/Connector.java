package org.sandbox4j.egress;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.time.Duration;

/**
 * Opens the proxy's connection to a checked destination. A seam so tests can prove that a refused
 * destination is never even attempted, without ever sending a packet to a private address.
 */
@FunctionalInterface
interface Connector {

    /** A TCP connect bounded by {@code timeout}; the channel comes back in blocking mode. */
    Connector TCP = (address, timeout) -> {
        SocketChannel channel = SocketChannel.open();
        try {
            channel.configureBlocking(false);
            if (!channel.connect(address)) {
                try (Selector selector = Selector.open()) {
                    channel.register(selector, SelectionKey.OP_CONNECT);
                    if (selector.select(Math.max(1, timeout.toMillis())) == 0) {
                        throw new ConnectTimeout("no answer within " + timeout.toMillis() + " ms");
                    }
                    channel.finishConnect();
                }
            }
            // Closing the selector deregistered the channel, so it may block again.
            channel.configureBlocking(true);
            return channel;
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
    };

    SocketChannel connect(InetSocketAddress address, Duration timeout) throws IOException;
}
