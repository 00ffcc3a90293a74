package org.sandbox4j.agent;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.sandbox4j.core.spi.ExecRefusals;

/**
 * A guest agent run as a resident child process of this JVM ({@code s4j-agent --stdio}), with an
 * {@link AgentConnection} on its stdin and stdout: for backends whose guest is a namespace or a
 * container the agent lives in, and for tests. It gets none of the host's environment, and its
 * stderr (the agent's own log) is discarded.
 * {@link #close()} ends the session (the agent kills every command's tree on end of input), then
 * the process, forcibly if it does not exit within {@link #EXIT_GRACE}.
 */
public final class ResidentAgent implements AutoCloseable {

    /** How long the agent may take to start and answer the handshake. */
    public static final Duration HELLO_DEADLINE = Duration.ofSeconds(10);
    /** How long the agent may take to exit once its input ended, before it is killed. */
    public static final Duration EXIT_GRACE = Duration.ofSeconds(5);

    private final Process process;
    private final AgentConnection connection;

    private ResidentAgent(Process process, AgentConnection connection) {
        this.process = process;
        this.connection = connection;
    }

    /**
     * Starts {@code launcher} followed by {@code agent --stdio --no-cgroup} and connects to it.
     *
     * @param launcher    the words that run the agent where it lives (a namespace or container
     *                    launcher), or empty to run it directly on this host
     * @param agent       the agent's binary, as the launcher sees it
     * @param backendName for messages
     * @throws org.sandbox4j.core.SandboxException the process could not start
     * @throws AgentConnectionFailed               it did not answer the handshake
     */
    public static ResidentAgent start(List<String> launcher, Path agent, String backendName) {
        return start(launcher, agent, List.of(), backendName);
    }

    /**
     * As {@link #start(List, Path, String)}, with more of the agent's options after
     * {@code --stdio --no-cgroup}: {@code --marker-kill} in a container, {@code --exec-namespaces}
     * (with {@code --exec-tmpfs} and {@code --exec-user}) in a bubblewrap namespace; see
     * {@code PROTOCOL.md}, and {@link AgentHello} for what the agent says it got.
     */
    public static ResidentAgent start(List<String> launcher, Path agent, List<String> agentOptions,
            String backendName) {
        List<String> argv = new ArrayList<>(launcher);
        argv.addAll(List.of(agent.toString(), "--stdio", "--no-cgroup"));
        argv.addAll(agentOptions);
        Process process;
        try {
            ProcessBuilder builder = new ProcessBuilder(argv).redirectError(ProcessBuilder.Redirect.DISCARD);
            // The agent needs no environment, and a command could read its parent's: none of the host's is passed.
            builder.environment().clear();
            process = builder.start();
        } catch (IOException e) {
            throw ExecRefusals.couldNotStart(backendName, "the guest agent " + agent.getFileName(), e);
        }
        try {
            return new ResidentAgent(process, AgentConnection.open(process.getInputStream(),
                    process.getOutputStream(), backendName, HELLO_DEADLINE));
        } catch (RuntimeException failed) {
            process.destroyForcibly();
            throw failed;
        }
    }

    /** {@link #start(List, Path, String)} directly on this host. */
    public static ResidentAgent start(Path agent, String backendName) {
        return start(List.of(), agent, backendName);
    }

    public AgentConnection connection() {
        return connection;
    }

    /** The agent's process, e.g. to look at its children. */
    public ProcessHandle process() {
        return process.toHandle();
    }

    @Override
    public void close() {
        connection.close();
        boolean interrupted = false;
        try {
            if (!process.waitFor(EXIT_GRACE.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                process.waitFor(EXIT_GRACE.toMillis(), TimeUnit.MILLISECONDS);
            }
        } catch (InterruptedException e) {
            interrupted = true;
            process.destroyForcibly();
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public String toString() {
        return "ResidentAgent[pid " + process.pid() + ", " + (connection.isOpen() ? "open" : "closed") + "]";
    }
}
