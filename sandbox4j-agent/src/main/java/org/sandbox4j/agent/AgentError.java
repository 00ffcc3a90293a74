package org.sandbox4j.agent;

import org.sandbox4j.core.spi.GuestText;

/**
 * An {@code ERROR} frame: what the agent could not do.
 *
 * @param code    the error's code
 * @param errno   the guest's errno, 0 when none
 * @param message the agent's words: guest text, only ever shown quoted
 */
record AgentError(AgentProtocol.ErrorCode code, int errno, String message) {

    /** The longest message the agent sends. */
    static final int MAX_MESSAGE_BYTES = 256;

    static AgentError of(Frame frame) {
        PayloadReader reader = frame.reader();
        AgentProtocol.ErrorCode code = AgentProtocol.ErrorCode.of(reader.u16());
        int errno = reader.i32();
        return new AgentError(code, errno, reader.text(MAX_MESSAGE_BYTES, "an error message"));
    }

    /** For messages: the code's name and the agent's words, quoted. */
    String describe() {
        return code + " (errno " + errno + ", " + GuestText.quote(message) + ")";
    }
}
