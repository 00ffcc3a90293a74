package org.sandbox4j.testkit.tck.reference;

import java.io.ByteArrayOutputStream;
import java.util.function.Function;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.ExecStream;
import org.sandbox4j.core.ProcessSignal;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.spi.GuestProcess;
import org.sandbox4j.core.spi.ProcessPump;

/**
 * {@link NamespaceShellBackend.Flaw#REPLAYS_EXEC}: the naive "interactive" process that keeps what is
 * written to stdin, runs an exec with it once stdin is closed, and replays the exec's output.
 */
final class ReplayedExec implements GuestProcess.Driver {

    private final GuestProcess handle;
    private final Function<byte[], ExecResult> exec;
    private final ByteArrayOutputStream input = new ByteArrayOutputStream();

    ReplayedExec(GuestProcess handle, Function<byte[], ExecResult> exec) {
        this.handle = handle;
        this.exec = exec;
    }

    @Override
    public synchronized void writeStdin(byte[] bytes, int off, int len) {
        input.write(bytes, off, len);
    }

    @Override
    public void closeStdin() {
        byte[] all;
        synchronized (this) {
            all = input.toByteArray();
        }
        ProcessPump.daemon("replay", () -> {
            try {
                ExecResult result = exec.apply(all);
                handle.output(ExecStream.STDOUT, result.stdout(), 0, result.stdout().length);
                handle.output(ExecStream.STDERR, result.stderr(), 0, result.stderr().length);
                handle.outputEnded(ExecStream.STDOUT);
                handle.outputEnded(ExecStream.STDERR);
                handle.exited(result.exitCode());
            } catch (SandboxException e) {
                handle.lost(e);
            }
        }).start();
    }

    @Override
    public void signal(ProcessSignal signal) {
        // Nothing runs yet to signal.
    }

    @Override
    public void killTree() {
        // The exec is bounded by its own timeout.
    }

    @Override
    public boolean sandboxDisposed() {
        return false;
    }
}
