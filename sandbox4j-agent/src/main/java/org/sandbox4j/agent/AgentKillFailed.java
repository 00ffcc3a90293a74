package org.sandbox4j.agent;

import org.sandbox4j.core.SandboxException;

/**
 * Processes of a command survived the agent's whole-tree kill within its bound (a marker kill that
 * kept finding live processes): the agent said so in the command's {@code EXIT}. The sandbox may
 * still run them, so the backend retires it (removes the container) rather than reuse it.
 */
public final class AgentKillFailed extends SandboxException {

    private static final long serialVersionUID = 1L;

    public AgentKillFailed(String message) {
        super(message);
    }
}
