package org.sandbox4j.agent;

/**
 * One frame of the agent protocol: its type, the request id it is about (0 for none) and its
 * payload, which the frame owns.
 */
record Frame(int type, int id, byte[] payload) {

    /** What this frame costs a call's queue: its payload and its prefix, so empty frames count too. */
    long cost() {
        return (long) payload.length + AgentProtocol.PREFIX_BYTES;
    }

    /** The payload as fields. */
    PayloadReader reader() {
        return new PayloadReader(payload, type);
    }
}
