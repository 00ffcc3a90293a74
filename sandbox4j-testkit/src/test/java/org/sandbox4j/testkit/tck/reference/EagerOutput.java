package org.sandbox4j.testkit.tck.reference;

import java.io.IOException;
import java.io.InputStream;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.io.UncheckedIOException;
import org.sandbox4j.core.spi.ProcessPump;

/**
 * {@link NamespaceShellBackend.Flaw#BUFFERS_WITHOUT_BOUND}: a launcher whose stdout is drained at
 * once into a host buffer of {@value #BUFFER_BYTES} bytes, whatever the reader takes, so the guest
 * never waits for the window. Every other call goes to the launcher.
 */
final class EagerOutput extends ForwardingProcess {

    /** Far past any window and slack the TCK allows; a bound only so the test host survives. */
    static final int BUFFER_BYTES = 32 * 1024 * 1024;

    private final PipedInputStream stdout;

    EagerOutput(Process launcher) {
        super(launcher);
        try {
            this.stdout = new PipedInputStream(BUFFER_BYTES);
            PipedOutputStream sink = new PipedOutputStream(stdout);
            ProcessPump.daemon("eager-stdout", () -> {
                try (InputStream source = launcher.getInputStream(); sink) {
                    source.transferTo(sink);
                } catch (IOException e) {
                    // The reader went away or the launcher ended: nothing more to buffer.
                }
            }).start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public InputStream getInputStream() {
        return stdout;
    }
}
