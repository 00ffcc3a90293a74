package org.sandbox4j.agent;

/** The agent sent what protocol version 1 does not allow: the connection cannot be trusted further. */
final class AgentProtocolViolation extends RuntimeException {

    private static final long serialVersionUID = 1L;

    AgentProtocolViolation(String message) {
        super(message);
    }
}
