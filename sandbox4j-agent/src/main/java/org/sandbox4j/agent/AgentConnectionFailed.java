package org.sandbox4j.agent;

import org.sandbox4j.core.SandboxException;

/**
 * The connection to a guest agent could not be made, or broke: the agent did not answer the
 * handshake in time, its stream ended, or it sent what the protocol does not allow. Every call
 * waiting on the connection fails with it, and every later call too; nothing sent after the break
 * reached the agent. Open a new connection (for a microVM, restart it).
 */
public final class AgentConnectionFailed extends SandboxException {

    private static final long serialVersionUID = 1L;

    public AgentConnectionFailed(String message) {
        super(message);
    }

    public AgentConnectionFailed(String message, Throwable cause) {
        super(message, cause);
    }
}
