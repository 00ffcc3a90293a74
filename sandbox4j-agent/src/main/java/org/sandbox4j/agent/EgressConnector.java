package org.sandbox4j.agent;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;

/**
 * Opens a new connection to the host's egress proxy, once for every stream a guest program opens
 * through the {@link EgressTunnel}. The channel returned must be in blocking mode; the tunnel owns
 * and closes it.
 */
@FunctionalInterface
public interface EgressConnector {

    /** A new connection; an exception refuses the guest's stream (it sees its connection closed). */
    SocketChannel connect() throws IOException;

    /** Connects to a proxy listening on a unix socket (the egress proxy's per-sandbox socket). */
    static EgressConnector unixSocket(Path socket) {
        UnixDomainSocketAddress address = UnixDomainSocketAddress.of(socket);
        return () -> SocketChannel.open(address);
    }

    /** Connects to a proxy listening on a TCP address. */
    static EgressConnector tcp(InetSocketAddress address) {
        return () -> SocketChannel.open(address);
    }
}
