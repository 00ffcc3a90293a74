package org.sandbox4j.docker;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.sandbox4j.agent.AgentConnection;
import org.sandbox4j.agent.AgentConnectionFailed;
import org.sandbox4j.agent.AgentHello;
import org.sandbox4j.agent.ResidentAgent;
import org.sandbox4j.core.spi.GuestText;

/**
 * The guest agent ({@code s4j-agent --stdio}) resident in one container: an exec of the binary the
 * backend bind-mounts read-only at {@link #GUEST_PATH}, run as the container's user, whose stdin and
 * stdout are its {@link HijackedExec} stream, with one {@link AgentConnection} on them. Commands and
 * file calls then cost a frame each way instead of the engine's three requests per exec or its
 * archive round trips. The agent ends when its stream does: {@link #close()}, or the container's end.
 *
 * <p>Nothing the agent sends is trusted (the connection checks every frame); it runs with the
 * guest's own identity, so the guest can kill it, and then the next call starts another.
 */
final class ContainerAgent implements AutoCloseable {

    /** Where the backend mounts the agent in every container it creates. */
    static final String GUEST_PATH = "/.sandbox4j/s4j-agent";
    /**
     * How the agent is run: on its stdin and stdout, killing a command's tree by its process group
     * (a container's cgroup is the engine's, not the agent's to divide).
     */
    static final List<String> COMMAND = List.of(GUEST_PATH, "--stdio", "--no-cgroup");
    /** How long the agent may take to start and answer the handshake. */
    static final Duration HELLO_DEADLINE = ResidentAgent.HELLO_DEADLINE;

    private final HijackedExec stream;
    private final AgentConnection connection;
    private final Map<String, String> environment;
    private final int generation;

    private ContainerAgent(HijackedExec stream, AgentConnection connection, Map<String, String> environment,
            int generation) {
        this.stream = stream;
        this.connection = connection;
        this.environment = environment;
        this.generation = generation;
    }

    /**
     * Opens a session with the agent on {@code stream}.
     *
     * @param environment what the engine gives every exec of the container (its configured
     *                    environment): the base of every command's, since the agent passes on
     *                    exactly what it is given
     * @param generation  how many agents this backend instance has started in the container, this one included
     * @throws AgentConnectionFailed it did not answer; the stream is closed
     */
    static ContainerAgent connect(HijackedExec stream, String backendName, Map<String, String> environment,
            int generation) {
        try {
            return new ContainerAgent(stream, AgentConnection.open(stream.stdout(), stream.stdin(), backendName,
                    HELLO_DEADLINE), Map.copyOf(environment), generation);
        } catch (AgentConnectionFailed failed) {
            String said = stream.stderrTail();
            stream.close();
            throw new AgentConnectionFailed(failed.getMessage() + (said.isEmpty() ? "" : "; the agent's stderr: "
                    + GuestText.quote(said)), failed);
        }
    }

    AgentConnection connection() {
        return connection;
    }

    /** Whether the session still works: the agent has not ended, nothing broke the stream. */
    boolean isOpen() {
        return connection.isOpen();
    }

    /** The container's configured environment, which every command's starts from. */
    Map<String, String> environment() {
        return environment;
    }

    /** How many agents this backend instance has started in the container, this one included. */
    int generation() {
        return generation;
    }

    /**
     * Whether the agent's own KILL reaches every process carrying an exec's marker, so the engine's
     * kill script is not needed after it. Not yet: this agent kills a command's process group; an
     * agent that announces a marker kill in its handshake will make the engine's script unneeded.
     */
    boolean killsByMarker() {
        return false;
    }

    /** The agent's stderr, its last lines, for messages. */
    String stderrTail() {
        return stream.stderrTail();
    }

    /** For diagnostics: what the agent said of itself, and which of the container's agents it is. */
    String describe() {
        AgentHello hello = connection.hello();
        String name = Optional.ofNullable(hello).map(AgentHello::agent).map(GuestText::escape).orElse("s4j-agent");
        return name + " at " + GUEST_PATH + ", agent " + generation + " this backend started in the container, "
                + (isOpen() ? "connected" : "ended");
    }

    /** Ends the session: the engine closes the agent's stdin, and the agent kills what it runs and exits. */
    @Override
    public void close() {
        connection.close();
        stream.close();
    }
}
