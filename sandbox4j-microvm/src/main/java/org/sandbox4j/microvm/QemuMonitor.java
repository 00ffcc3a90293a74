package org.sandbox4j.microvm;

import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import org.sandbox4j.core.spi.Json;

/**
 * A minimal client of QEMU's QMP monitor: JSON lines over the unix socket QEMU serves. It reads the
 * greeting, enters command mode, and sends one command at a time, skipping the events QEMU sends in
 * between. Every line read is bounded; the caller bounds the wait by closing it
 * ({@link QemuSockets#closeAt}).
 */
final class QemuMonitor implements Closeable {

    /** Longer than any reply to the commands sent here (query-migrate's is well under 2 KiB). */
    private static final int MAX_LINE_BYTES = 64 * 1024;

    private final SocketChannel channel;
    private final InputStream in;
    private final OutputStream out;

    private QemuMonitor(SocketChannel channel) {
        this.channel = channel;
        this.in = QemuSockets.input(channel);
        this.out = QemuSockets.output(channel);
    }

    /** Connects, reads the greeting and negotiates capabilities (none). */
    static QemuMonitor connect(Path socket, ProcessHandle qemu, long until) throws IOException {
        QemuMonitor monitor = new QemuMonitor(QemuSockets.connect(socket, qemu, until));
        try {
            if (!monitor.readObject().containsKey("QMP")) {
                throw new IOException("QEMU's monitor did not greet with QMP");
            }
            monitor.execute("qmp_capabilities", null);
            return monitor;
        } catch (IOException | RuntimeException e) {
            monitor.close();
            throw e;
        }
    }

    /**
     * Runs one command and returns its {@code return} value.
     *
     * @param arguments the command's arguments as a JSON object, written by this class's callers from
     *                  constants and numbers only; null for none
     * @throws IOException QEMU answered with an error, or the monitor broke or sent something else
     */
    Object execute(String command, String arguments) throws IOException {
        String line = "{\"execute\":" + Json.quote(command) + (arguments == null ? "" : ",\"arguments\":" + arguments)
                + "}\n";
        out.write(line.getBytes(StandardCharsets.UTF_8));
        while (true) {
            Map<String, Object> reply = readObject();
            if (reply.containsKey("return")) {
                return reply.get("return");
            }
            if (reply.get("error") instanceof Map<?, ?> error) {
                throw new IOException("QEMU refused " + command + ": " + error.get("desc"));
            }
            if (!reply.containsKey("event")) {
                throw new IOException("QEMU's monitor answered " + command + " with neither a return nor an error");
            }
        }
    }

    private Map<String, Object> readObject() throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        while (true) {
            int b = in.read();
            if (b < 0) {
                throw new IOException("QEMU's monitor closed the connection");
            }
            if (b == '\n') {
                break;
            }
            if (line.size() == MAX_LINE_BYTES) {
                throw new IOException("QEMU's monitor sent a line longer than " + MAX_LINE_BYTES + " bytes");
            }
            line.write(b);
        }
        try {
            return Json.parseObject(line.toString(StandardCharsets.UTF_8).strip());
        } catch (Json.Malformed e) {
            throw new IOException("QEMU's monitor sent something that is not a JSON object: " + e.getMessage(), e);
        }
    }

    @Override
    public void close() throws IOException {
        channel.close();
    }
}
