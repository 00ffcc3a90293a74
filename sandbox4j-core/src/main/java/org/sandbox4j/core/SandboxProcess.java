package org.sandbox4j.core;

import java.time.Duration;
import java.util.OptionalInt;

/**
 * A command started by {@link Sandbox#start}, owned by this handle. Thread-safe. It holds at most
 * one window of each output stream and one of stdin in this JVM, whatever the guest writes: a guest
 * that writes faster than the caller reads waits in its {@code write}. It ends when its leader exits,
 * when its lifetime passes, when it is killed or closed, or when its sandbox is disposed of; when it
 * ends, nothing it started is left running. Use it in try-with-resources.
 */
public interface SandboxProcess extends AutoCloseable {

    /**
     * Writes {@code bytes} to stdin, in order and never interleaved with another write, waiting at
     * most {@code wait} while the guest does not read. Returns how many got in: all of them, unless
     * the wait ran out or the process stopped reading (a guest that exits or closes its stdin is no
     * error here; {@link #isAlive} and {@link #read} tell the rest).
     *
     * @throws IllegalArgumentException a non-positive wait
     * @throws IllegalStateException    after {@link #closeStdin} or {@link #close}
     * @throws SandboxDisposed          the sandbox was disposed of
     */
    int write(byte[] bytes, Duration wait);

    /** Ends stdin: the guest reads end of input once it has read what was written. Idempotent. */
    void closeStdin();

    /**
     * Takes what output is here (at most one window per stream), waiting at most {@code wait} for some
     * or for the end; taking it lets the guest write on. Once both streams ended it returns them ended.
     *
     * @throws IllegalStateException in listener mode, or after {@link #close}
     * @throws SandboxDisposed       the sandbox was disposed of and all that was buffered has been read
     */
    ProcessOutput read(Duration wait);

    /**
     * The leader's exit code once it exited by itself (a death by signal is 128 + the signal's number,
     * as {@code exec} reports it); empty if it still runs after {@code wait}. Never kills: an interrupted
     * wait leaves the process running.
     *
     * @throws SandboxTimeoutException     its lifetime passed: it was killed with everything it started
     * @throws SandboxProcessKilled        this handle killed it
     * @throws SandboxDisposed             the sandbox was disposed of
     * @throws SandboxInterrupted          the waiting thread was interrupted (its flag is set again)
     * @throws SandboxException            the backend lost the process (an engine stream or a connection broke);
     *                                     the backend ended its tree, or retired the sandbox when it could not
     */
    OptionalInt waitFor(Duration wait);

    /** Whether it has not ended; a look at this handle's state, never a call to the guest. */
    boolean isAlive();

    /**
     * Sends {@code signal} to the command's process group (as Ctrl-C in a terminal does); does not
     * wait for its effect; nothing once the process ended.
     *
     * @throws SandboxDisposed the sandbox was disposed of
     */
    void signal(ProcessSignal signal);

    /**
     * Kills the whole tree and returns once it is gone (or once the backend gave up and retired the
     * sandbox, so that nothing of it is used again). Never throws; idempotent.
     */
    void kill();

    /** {@link #kill}, and every later call but {@code close}, {@code kill} and {@code isAlive} is refused. Idempotent. */
    @Override
    void close();
}
