package org.sandbox4j.agent;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.channels.Channels;
import java.nio.channels.Pipe;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * The agent's end of a pair of pipes, played by a test: it reads the host's frames and writes
 * whatever bytes the test wants, well-formed or hostile. For protocol-level tests only.
 */
final class FakeAgent implements AutoCloseable {

    private final Pipe toHost;
    private final Pipe fromHost;
    private final FrameStream hostFrames;
    private final OutputStream agentOut;

    FakeAgent() {
        try {
            toHost = Pipe.open();
            fromHost = Pipe.open();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        hostFrames = new FrameStream(Channels.newInputStream(fromHost.source()));
        agentOut = Channels.newOutputStream(toHost.sink());
    }

    InputStream hostIn() {
        return Channels.newInputStream(toHost.source());
    }

    OutputStream hostOut() {
        return Channels.newOutputStream(fromHost.sink());
    }

    /** The next frame the host sent. */
    Frame read() {
        try {
            return hostFrames.read(false);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    void send(int type, int id, byte[] payload) {
        raw(FrameStream.encode(type, id, payload));
    }

    void raw(byte[] bytes) {
        try {
            agentOut.write(bytes);
            agentOut.flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The HELLO_OK answering {@code hello}, with the nonce it carries. */
    static byte[] helloOk(Frame hello) {
        PayloadReader reader = hello.reader();
        reader.u16();
        reader.u16();
        byte[] nonce = reader.bytes(64, "nonce");
        return helloOk(nonce);
    }

    static byte[] helloOk(byte[] nonce) {
        return Payload.create().u16(1).bytes(nonce).u32(AgentProtocol.MAX_PAYLOAD).u32(0).text("fake").text("0.0")
                .build();
    }

    /** Opens a connection on this fake, answering its first HELLO; then reads and drops what the host sends. */
    AgentConnection openAnswering() {
        CompletableFuture<Void> answering = CompletableFuture.runAsync(() -> {
            Frame hello = read();
            send(AgentProtocol.HELLO_OK, hello.id(), helloOk(hello));
        });
        AgentConnection connection = AgentConnection.open(hostIn(), hostOut(), "fake", Duration.ofSeconds(10));
        answering.join();
        drainHost();
        return connection;
    }

    /** Reads and drops every frame the host sends from now on, so its writes never block. */
    void drainHost() {
        Thread drain = new Thread(() -> {
            try {
                while (true) {
                    read();
                }
            } catch (RuntimeException ended) {
                // The host closed its end.
            }
        }, "fake-agent-drain");
        drain.setDaemon(true);
        drain.start();
    }

    @Override
    public void close() throws IOException {
        toHost.sink().close();
        fromHost.source().close();
    }
}
