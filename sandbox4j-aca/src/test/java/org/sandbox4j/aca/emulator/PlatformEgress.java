package org.sandbox4j.aca.emulator;

import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.function.Supplier;

/**
 * The platform side of one sandbox's transparent egress, as the service's egress proxy sits outside its microVM: the
 * guest is handed no proxy setting. Inside the guest's network namespace (entered by host root, outside the guest's
 * reach) iptables sends every TCP connection that would leave by anything but {@code lo} to {@link #HELPER_SCRIPT}, a
 * small relay listening on the guest's {@code 127.0.0.1:}{@value #REDIRECT_PORT}; it learns each connection's original
 * destination ({@code SO_ORIGINAL_DST}) and hands the connection here over a unix socket, with one header line. The
 * relay also serves the guest's resolver on {@value #DNS_ADDRESS}:53, passing each query here.
 *
 * <p>Here: a name the guest resolves gets an address of its own from a pool ({@value #POOL_PREFIX}128-254, inside the
 * guest's 100.96.0.0/24), so a connection to that address is a connection to that name. Each connection is carried
 * as a {@code CONNECT name:port} (or {@code CONNECT address:port} for an address the guest wrote itself) to the
 * sandbox's {@link org.sandbox4j.egress.EgressProxy}, which applies the policy: its allowlist, its own resolver, its
 * refusal of internal addresses. With no proxy (a Deny policy without Allow rules) nothing is carried and no name
 * resolves. The guest chooses neither the name (it comes from the address) nor the route; a Host header or SNI it sends
 * is only bytes to the destination the proxy checked.
 *
 * <p>Bounded: at most {@value #MAX_CONNECTIONS} connections at once (here and in the relay), a header line of at most
 * {@value #MAX_LINE} bytes, a DNS message of at most {@value #MAX_DNS} bytes, a proxy answer head of at most
 * {@value #MAX_HEAD} bytes, and the proxy's own idle timeout on every tunnel.
 */
final class PlatformEgress implements AutoCloseable {

    /** Where the guest's outbound TCP is redirected to, on its own loopback. */
    static final int REDIRECT_PORT = 15001;
    /** The guest's resolver (its {@code /etc/resolv.conf}), on its own loopback. */
    static final String DNS_ADDRESS = "127.0.0.53";
    static final String POOL_PREFIX = "100.96.0.";
    private static final int POOL_FIRST = 128;
    private static final int POOL_LAST = 254;
    static final int MAX_CONNECTIONS = 64;
    private static final int MAX_LINE = 128;
    private static final int MAX_DNS = 512;
    private static final int MAX_HEAD = 8 * 1024;
    private static final int CHUNK = 64 * 1024;
    private static final int DNS_HEADER = 12;
    private static final int TYPE_A = 1;
    private static final int CLASS_IN = 1;
    private static final int RCODE_NXDOMAIN = 3;
    private static final int RCODE_REFUSED = 5;
    private static final int ANSWER_TTL_SECONDS = 5;

    /**
     * The relay, run by host root with {@code nsenter --net} into the guest's namespace (argv: port, gate socket, DNS
     * address, ready file, the guest's host pid: the relay ends with the guest, even when the emulator could not end
     * it). It parses nothing the guest sends: the original destination comes from the kernel, and a
     * DNS datagram is passed on whole (at most 512 bytes). A connection that was not redirected (a guest connecting
     * to the port itself) has no original destination and is closed.
     */
    static final String HELPER_SCRIPT = String.join("\n",
            "import os, socket, struct, sys, threading, time",
            "PORT, GATE, DNS, READY, GUEST = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])",
            "def watch():",
            "    while os.path.exists('/proc/%d' % GUEST):",
            "        time.sleep(1)",
            "    os._exit(0)",
            "SLOTS = threading.BoundedSemaphore(" + MAX_CONNECTIONS + ")",
            "def pipe(src, dst):",
            "    try:",
            "        while True:",
            "            data = src.recv(65536)",
            "            if not data:",
            "                break",
            "            dst.sendall(data)",
            "    except OSError:",
            "        pass",
            "    for s, how in ((dst, socket.SHUT_WR), (src, socket.SHUT_RD)):",
            "        try:",
            "            s.shutdown(how)",
            "        except OSError:",
            "            pass",
            "def tcp(conn):",
            "    up = None",
            "    try:",
            "        raw = conn.getsockopt(socket.SOL_IP, 80, 16)",
            "        port = struct.unpack('!H', raw[2:4])[0]",
            "        addr = socket.inet_ntoa(raw[4:8])",
            "        up = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)",
            "        up.connect(GATE)",
            "        up.sendall(('TCP %s %d\\n' % (addr, port)).encode())",
            "        t = threading.Thread(target=pipe, args=(up, conn), daemon=True)",
            "        t.start()",
            "        pipe(conn, up)",
            "        t.join()",
            "    except OSError:",
            "        pass",
            "    finally:",
            "        conn.close()",
            "        if up is not None:",
            "            up.close()",
            "        SLOTS.release()",
            "def dns():",
            "    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)",
            "    s.bind((DNS, 53))",
            "    while True:",
            "        query, peer = s.recvfrom(" + MAX_DNS + ")",
            "        try:",
            "            up = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)",
            "            up.settimeout(5)",
            "            up.connect(GATE)",
            "            up.sendall(('DNS %d\\n' % len(query)).encode() + query)",
            "            answer = b''",
            "            while len(answer) <= " + MAX_DNS + ":",
            "                data = up.recv(" + MAX_DNS + ")",
            "                if not data:",
            "                    break",
            "                answer += data",
            "            up.close()",
            "            if 0 < len(answer) <= " + MAX_DNS + ":",
            "                s.sendto(answer, peer)",
            "        except OSError:",
            "            pass",
            "server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)",
            "server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)",
            "server.bind(('127.0.0.1', PORT))",
            "server.listen(64)",
            "threading.Thread(target=dns, daemon=True).start()",
            "threading.Thread(target=watch, daemon=True).start()",
            "open(READY, 'w').close()",
            "while True:",
            "    conn, _ = server.accept()",
            "    if SLOTS.acquire(blocking=False):",
            "        threading.Thread(target=tcp, args=(conn,), daemon=True).start()",
            "    else:",
            "        conn.close()",
            "");

    private final Path gate;
    private final Supplier<Optional<Path>> proxySocket;
    private final ServerSocketChannel server;
    private final Semaphore slots = new Semaphore(MAX_CONNECTIONS);
    private final Map<String, Inet4Address> byName = new ConcurrentHashMap<>();
    private final Map<Inet4Address, String> byAddress = new ConcurrentHashMap<>();
    private final Thread acceptor;
    private volatile boolean closed;

    private PlatformEgress(Path gate, Supplier<Optional<Path>> proxySocket) throws IOException {
        this.gate = gate;
        this.proxySocket = proxySocket;
        Files.deleteIfExists(gate);
        this.server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        server.bind(UnixDomainSocketAddress.of(gate));
        this.acceptor = new Thread(this::accept, "aca-emulator-egress");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /**
     * Listens on {@code gate} for the relay; {@code proxySocket} says where the sandbox's proxy is now (empty when its
     * policy lets nothing out), asked per connection so a replaced policy applies to the next one.
     */
    static PlatformEgress start(Path gate, Supplier<Optional<Path>> proxySocket) throws IOException {
        return new PlatformEgress(gate, proxySocket);
    }

    private void accept() {
        while (!closed) {
            SocketChannel relay;
            try {
                relay = server.accept();
            } catch (IOException e) {
                return;
            }
            if (!slots.tryAcquire()) {
                closeQuietly(relay);
                continue;
            }
            Thread worker = new Thread(() -> {
                try {
                    serve(relay);
                } catch (IOException | RuntimeException e) {
                    // the guest's connection ends; nothing was carried past the policy
                } finally {
                    closeQuietly(relay);
                    slots.release();
                }
            }, "aca-emulator-egress-conn");
            worker.setDaemon(true);
            worker.start();
        }
    }

    private void serve(SocketChannel relay) throws IOException {
        String[] header = readLine(relay).split(" ");
        if (header.length == 2 && header[0].equals("DNS")) {
            int length = Integer.parseInt(header[1]);
            if (length < DNS_HEADER || length > MAX_DNS) {
                return;
            }
            ByteBuffer query = ByteBuffer.allocate(length);
            while (query.hasRemaining() && relay.read(query) >= 0) {
                // fill
            }
            if (!query.hasRemaining()) {
                answerDns(query.array()).ifPresent(answer -> writeQuietly(relay, ByteBuffer.wrap(answer)));
            }
            return;
        }
        if (header.length == 3 && header[0].equals("TCP")) {
            InetAddress address = InetAddress.getByName(literal(header[1]));
            int port = Integer.parseInt(header[2]);
            carry(relay, destination(address), port);
        }
    }

    /** A dotted quad only: the relay sends what the kernel said, but nothing here resolves a name from the wire. */
    private static String literal(String text) throws UnknownHostException {
        if (!text.matches("[0-9]{1,3}(\\.[0-9]{1,3}){3}")) {
            throw new UnknownHostException("not an IPv4 literal");
        }
        return text;
    }

    /** The name the guest resolved to this address, or the address itself when the guest wrote it. */
    private String destination(InetAddress address) {
        String name = address instanceof Inet4Address v4 ? byAddress.get(v4) : null;
        return name != null ? name : address.getHostAddress();
    }

    /** Through the sandbox's proxy, or nowhere when its policy lets nothing out. */
    private void carry(SocketChannel relay, String host, int port) throws IOException {
        Optional<Path> proxy = proxySocket.get();
        if (proxy.isEmpty()) {
            return;
        }
        try (SocketChannel upstream = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            upstream.connect(UnixDomainSocketAddress.of(proxy.get()));
            String authority = host.contains(":") ? "[" + host + "]:" + port : host + ":" + port;
            writeFully(upstream, ByteBuffer.wrap(("CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority
                    + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII)));
            ByteBuffer leftover = establishedOrEmpty(upstream);
            if (leftover == null) {
                return;
            }
            writeFully(relay, leftover);
            Thread back = new Thread(() -> pipe(upstream, relay), "aca-emulator-egress-back");
            back.setDaemon(true);
            back.start();
            pipe(relay, upstream);
            try {
                back.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Reads the proxy's answer head: the bytes after it when it says 200, else null (refused). */
    private static ByteBuffer establishedOrEmpty(SocketChannel upstream) throws IOException {
        ByteBuffer head = ByteBuffer.allocate(MAX_HEAD);
        while (head.hasRemaining()) {
            if (upstream.read(head) < 0) {
                return null;
            }
            String text = new String(head.array(), 0, head.position(), StandardCharsets.ISO_8859_1);
            int end = text.indexOf("\r\n\r\n");
            if (end >= 0) {
                if (!text.startsWith("HTTP/1.1 200") && !text.startsWith("HTTP/1.0 200")) {
                    return null;
                }
                return ByteBuffer.wrap(head.array(), end + 4, head.position() - end - 4);
            }
        }
        return null;
    }

    private static void pipe(SocketChannel from, SocketChannel to) {
        ByteBuffer buffer = ByteBuffer.allocate(CHUNK);
        try {
            while (from.read(buffer) >= 0) {
                buffer.flip();
                writeFully(to, buffer);
                buffer.clear();
            }
        } catch (IOException e) {
            // either side went away
        }
        try {
            to.shutdownOutput();
        } catch (IOException e) {
            // already closed
        }
    }

    // ---------------------------------------------------------------- DNS

    /**
     * An answer to one A query: the name's own pool address, or REFUSED while the policy lets nothing out (no name
     * resolves then), NXDOMAIN when the pool is used up, and no records for any other type (so clients use IPv4).
     * Empty for anything that is not one well-formed question.
     */
    private Optional<byte[]> answerDns(byte[] query) {
        int questions = ((query[4] & 0xff) << 8) | (query[5] & 0xff);
        if ((query[2] & 0x80) != 0 || questions != 1) {
            return Optional.empty();
        }
        List<String> labels = new ArrayList<>();
        int at = DNS_HEADER;
        while (at < query.length && query[at] != 0) {
            int length = query[at] & 0xff;
            if (length > 63 || at + 1 + length >= query.length) {
                return Optional.empty();
            }
            labels.add(new String(query, at + 1, length, StandardCharsets.US_ASCII).toLowerCase(Locale.ROOT));
            at += 1 + length;
        }
        if (at + 5 > query.length || labels.isEmpty()) {
            return Optional.empty();
        }
        int questionEnd = at + 5;
        int type = ((query[at + 1] & 0xff) << 8) | (query[at + 2] & 0xff);
        int klass = ((query[at + 3] & 0xff) << 8) | (query[at + 4] & 0xff);
        String name = String.join(".", labels);
        Optional<Inet4Address> address = Optional.empty();
        int rcode = 0;
        if (proxySocket.get().isEmpty()) {
            rcode = RCODE_REFUSED;
        } else if (type == TYPE_A && klass == CLASS_IN) {
            address = poolAddress(name);
            rcode = address.isPresent() ? 0 : RCODE_NXDOMAIN;
        }
        ByteBuffer answer = ByteBuffer.allocate(questionEnd + 16);
        answer.put(query, 0, 2);
        answer.put((byte) (0x80 | (query[2] & 0x01)));
        answer.put((byte) (0x80 | rcode));
        answer.putShort((short) 1).putShort((short) (address.isPresent() ? 1 : 0)).putShort((short) 0)
                .putShort((short) 0);
        answer.put(query, DNS_HEADER, questionEnd - DNS_HEADER);
        address.ifPresent(a -> answer.putShort((short) 0xc00c).putShort((short) TYPE_A).putShort((short) CLASS_IN)
                .putInt(ANSWER_TTL_SECONDS).putShort((short) 4).put(a.getAddress()));
        byte[] out = new byte[answer.position()];
        answer.flip();
        answer.get(out);
        return Optional.of(out);
    }

    /** The name's address in the pool, given once; empty when the pool is used up. */
    private synchronized Optional<Inet4Address> poolAddress(String name) {
        Inet4Address known = byName.get(name);
        if (known != null) {
            return Optional.of(known);
        }
        int next = POOL_FIRST + byName.size();
        if (next > POOL_LAST) {
            return Optional.empty();
        }
        try {
            Inet4Address address = (Inet4Address) InetAddress.getByName(POOL_PREFIX + next);
            byName.put(name, address);
            byAddress.put(address, name);
            return Optional.of(address);
        } catch (UnknownHostException impossible) {
            throw new IllegalStateException(impossible);
        }
    }

    // ---------------------------------------------------------------- helpers

    private static String readLine(SocketChannel channel) throws IOException {
        ByteBuffer one = ByteBuffer.allocate(1);
        StringBuilder line = new StringBuilder();
        while (line.length() < MAX_LINE) {
            one.clear();
            if (channel.read(one) < 0) {
                break;
            }
            char c = (char) one.get(0);
            if (c == '\n') {
                return line.toString();
            }
            line.append(c);
        }
        throw new IOException("no header line");
    }

    private static void writeFully(SocketChannel channel, ByteBuffer buffer) throws IOException {
        while (buffer.hasRemaining()) {
            channel.write(buffer);
        }
    }

    private static void writeQuietly(SocketChannel channel, ByteBuffer buffer) {
        try {
            writeFully(channel, buffer);
        } catch (IOException e) {
            // the relay went away
        }
    }

    private static void closeQuietly(SocketChannel channel) {
        try {
            channel.close();
        } catch (IOException e) {
            // already closed
        }
    }

    @Override
    public void close() {
        closed = true;
        try {
            server.close();
        } catch (IOException e) {
            // already closed
        }
        try {
            Files.deleteIfExists(gate);
        } catch (IOException e) {
            // the directory goes with the sandbox
        }
    }
}
