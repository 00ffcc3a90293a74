package org.sandbox4j.agent;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A loopback TCP server standing in for the egress proxy. Each connection names what it wants in
 * its first line: {@code ECHO} (sends back everything until EOF, then closes), {@code COUNT}
 * (reads to EOF, answers the byte count as a line, closes), {@code FLOOD n} (sends n pattern
 * bytes, closes) or {@code STALL} (reads nothing, until the server closes).
 */
final class Upstream implements AutoCloseable {

    private static final int MAX_LINE = 64;

    private final ServerSocket server;
    private final List<Socket> accepted = new CopyOnWriteArrayList<>();
    private final CountDownLatch closing = new CountDownLatch(1);
    private final AtomicInteger connections = new AtomicInteger();

    private Upstream(ServerSocket server) {
        this.server = server;
    }

    static Upstream start() throws IOException {
        Upstream upstream = new Upstream(new ServerSocket(0, 128, InetAddress.getLoopbackAddress()));
        Thread acceptor = new Thread(upstream::acceptLoop, "upstream-accept");
        acceptor.setDaemon(true);
        acceptor.start();
        return upstream;
    }

    InetSocketAddress address() {
        return new InetSocketAddress(InetAddress.getLoopbackAddress(), server.getLocalPort());
    }

    /** The connections accepted so far. */
    int connections() {
        return connections.get();
    }

    /** The byte at {@code index} of a FLOOD. */
    static byte pattern(long index) {
        return (byte) (index % 251);
    }

    private void acceptLoop() {
        try {
            while (true) {
                Socket socket = server.accept();
                accepted.add(socket);
                connections.incrementAndGet();
                Thread serving = new Thread(() -> serve(socket), "upstream-serve");
                serving.setDaemon(true);
                serving.start();
            }
        } catch (IOException closed) {
            // The server was closed.
        }
    }

    private void serve(Socket socket) {
        try (socket; InputStream in = socket.getInputStream(); OutputStream out = socket.getOutputStream()) {
            String[] words = line(in).split(" ");
            switch (words[0]) {
                case "ECHO" -> {
                    in.transferTo(out);
                    socket.shutdownOutput();
                }
                case "COUNT" -> {
                    long count = 0;
                    byte[] buffer = new byte[65536];
                    for (int n; (n = in.read(buffer)) >= 0; ) {
                        count += n;
                    }
                    out.write((count + "\n").getBytes(StandardCharsets.US_ASCII));
                }
                case "FLOOD" -> {
                    long total = Long.parseLong(words[1]);
                    byte[] chunk = new byte[65536];
                    for (long sent = 0; sent < total; ) {
                        int n = (int) Math.min(chunk.length, total - sent);
                        for (int i = 0; i < n; i++) {
                            chunk[i] = pattern(sent + i);
                        }
                        out.write(chunk, 0, n);
                        sent += n;
                    }
                }
                case "STALL" -> closing.await();
                default -> out.write("?\n".getBytes(StandardCharsets.US_ASCII));
            }
        } catch (IOException | InterruptedException ended) {
            // The client went away: this connection is done.
        }
    }

    private static String line(InputStream in) throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        for (int b; (b = in.read()) >= 0 && b != '\n' && line.size() < MAX_LINE; ) {
            line.write(b);
        }
        return line.toString(StandardCharsets.US_ASCII);
    }

    @Override
    public void close() throws IOException {
        closing.countDown();
        server.close();
        for (Socket socket : accepted) {
            socket.close();
        }
    }
}
