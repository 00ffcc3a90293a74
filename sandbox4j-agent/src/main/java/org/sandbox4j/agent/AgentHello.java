package org.sandbox4j.agent;

import java.util.Arrays;
import java.util.Objects;
import java.util.Optional;

/**
 * What the agent said of itself in the handshake ({@code HELLO_OK}).
 *
 * @param version       the protocol version it speaks (1)
 * @param maxPayload    the largest payload it accepts
 * @param pid1          whether it runs as the guest's PID 1 (in a microVM)
 * @param cgroupKill    whether it kills a command's whole tree through {@code cgroup.kill}
 *                      (otherwise through the command's process group only)
 * @param lease         whether it honours {@code SET_LEASE} (agent 1.1 and later): see
 *                      {@link AgentConnection#setLease}
 * @param markerKill    whether a kill also ends every process carrying the command's {@code S4J_EXEC}
 *                      marker ({@code --marker-kill}, agent 1.2): whole-tree kill without cgroups
 * @param execNamespaces whether each command runs under an init of its own in new PID and mount
 *                      namespaces ({@code --exec-namespaces}, agent 1.2): a kill ends that init, and
 *                      the kernel everything in its namespace
 * @param execUser      whether each command has a user namespace of its own, with no capability
 *                      and no nested user namespace ({@code --exec-user}, agent 1.2)
 * @param treeReport    whether the agent honours "end the tree when the leader exits" and reports
 *                      in each EXIT what became of the tree (agent 1.2)
 * @param agent         its name and version, e.g. {@code "s4j-agent 1.2"}: guest text
 * @param kernelRelease the guest kernel's release: guest text
 */
public record AgentHello(int version, int maxPayload, boolean pid1, boolean cgroupKill, boolean lease,
        boolean markerKill, boolean execNamespaces, boolean execUser, boolean treeReport, String agent,
        String kernelRelease) {

    private static final int MAX_DESCRIPTION_BYTES = 256;

    public AgentHello {
        Objects.requireNonNull(agent, "agent");
        Objects.requireNonNull(kernelRelease, "kernelRelease");
    }

    /**
     * The hello in {@code frame} if it echoes {@code nonce}; empty for one of another session.
     *
     * @throws AgentProtocolViolation it echoes the nonce but is malformed or names another version
     */
    static Optional<AgentHello> parse(Frame frame, byte[] nonce) {
        PayloadReader reader = frame.reader();
        int version = reader.u16();
        byte[] echoed = reader.bytes(AgentProtocol.MAX_TEXT_BYTES, "the nonce");
        if (!Arrays.equals(echoed, nonce)) {
            return Optional.empty();
        }
        if (version != AgentProtocol.VERSION) {
            throw new AgentProtocolViolation("the agent answered in protocol version " + version + "; this host speaks "
                    + AgentProtocol.VERSION);
        }
        int maxPayload = reader.u32Bounded(Integer.MAX_VALUE, "max_payload");
        if (maxPayload < AgentProtocol.MIN_ANNOUNCED_PAYLOAD) {
            throw new AgentProtocolViolation("the agent accepts payloads of " + maxPayload + " bytes, fewer than the "
                    + AgentProtocol.MIN_ANNOUNCED_PAYLOAD + " this host needs");
        }
        long flags = reader.u32();
        String agent = reader.text(MAX_DESCRIPTION_BYTES, "the agent's name");
        String kernel = reader.text(MAX_DESCRIPTION_BYTES, "the kernel release");
        return Optional.of(new AgentHello(version, maxPayload, (flags & AgentProtocol.FLAG_PID1) != 0,
                (flags & AgentProtocol.FLAG_CGROUP_KILL) != 0, (flags & AgentProtocol.FLAG_LEASE) != 0,
                (flags & AgentProtocol.FLAG_MARKER_KILL) != 0, (flags & AgentProtocol.FLAG_EXEC_NAMESPACES) != 0,
                (flags & AgentProtocol.FLAG_EXEC_USER) != 0, (flags & AgentProtocol.FLAG_TREE_REPORT) != 0, agent,
                kernel));
    }
}
