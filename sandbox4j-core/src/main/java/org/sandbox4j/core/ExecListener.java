package org.sandbox4j.core;

/**
 * Receives a command's output as it arrives, in addition to the buffered {@link ExecResult}.
 * Called on a backend thread; keep it quick. A chunk is never larger than what the output cap
 * still allows. An exception thrown here is logged by the backend and does not stop the command.
 */
@FunctionalInterface
public interface ExecListener {

    /** @param chunk a fresh array the listener may keep */
    void onOutput(ExecStream stream, byte[] chunk);
}
