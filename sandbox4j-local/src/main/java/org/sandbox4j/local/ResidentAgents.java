package org.sandbox4j.local;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.sandbox4j.agent.AgentConnection;
import org.sandbox4j.agent.AgentHello;
import org.sandbox4j.core.SandboxDisposed;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxInterrupted;
import org.sandbox4j.core.spi.ErrorDetail;
import org.sandbox4j.core.spi.GuestText;
import org.sandbox4j.core.spi.InheritedSignals;

/**
 * The resident agents of one backend's sandboxes in this JVM: at most one {@code s4j-agent} per
 * sandbox, the init of a long-lived {@code bwrap} started through the same launchers as a command
 * (the sandbox's control group, its keeper's namespaces, a PID namespace that reaps it) and reached
 * over its stdin and stdout. It is recorded among the sandbox's launches, so a disposal from any
 * process ends it; {@link #close()} ends them all. One that broke (its stream ended, it broke the
 * protocol, its keeper was replaced) is ended and replaced by a fresh one at the next call.
 */
final class ResidentAgents implements AutoCloseable {

    /**
     * Where the guest finds the agent: bound read-only, outside every PATH, under /run, where no work
     * dir may be (so no workspace can hide it or put a program of the guest's in its place).
     */
    static final String GUEST_AGENT = "/run/sandbox4j-agent/s4j-agent";
    /**
     * What each command gets from the agent, as a fresh bwrap gave it: its own PID and mount
     * namespaces and /proc, empty /tmp, /var/tmp and /dev/shm, as nobody in a user namespace of its
     * own. Each temporary directory is bounded as bwrap's is: an agent that cannot bound them
     * ({@value #TMPFS_SIZE_OPTION}; agent 1.2 before it) refuses to start, and the backend then
     * runs one bwrap per command.
     */
    static List<String> agentOptions(long tmpBytes) {
        return List.of("--stdio", "--no-cgroup", "--exec-namespaces", "--exec-tmpfs", "/tmp,/var/tmp,/dev/shm",
                TMPFS_SIZE_OPTION, Long.toString(tmpBytes), "--exec-user",
                BwrapLayout.GUEST_UID + ":" + BwrapLayout.GUEST_GID);
    }

    /** The agent's option that bounds each command's temporary directories (bytes each). */
    static final String TMPFS_SIZE_OPTION = "--exec-tmpfs-size";
    /** The agent's own log (its stderr, and bwrap's), in the sandbox's host directory. */
    static final String LOG_FILE = "agent.log";
    /** The most of an agent's stderr kept in its log; the rest is read and dropped. */
    static final int LOG_BYTES = 64 * 1024;
    /** The most of what bwrap or the agent said that a refusal quotes. */
    private static final int SAID_BYTES = 2048;
    /** How long an agent may take to start and answer the handshake. */
    static final Duration HELLO_DEADLINE = Duration.ofSeconds(10);
    /** How long an agent may take to exit once its input ended, before its launch is killed. */
    private static final Duration EXIT_GRACE = Duration.ofSeconds(2);

    private final String backendName;
    private final Map<String, Agent> agents = new ConcurrentHashMap<>();
    private final Map<String, Object> starting = new ConcurrentHashMap<>();
    private volatile boolean closed;

    ResidentAgents(String backendName) {
        this.backendName = backendName;
    }

    /**
     * The running agent of sandbox {@code id}, held by {@code keeper}; started with the line {@code argv}
     * makes (made only then) when none runs, or when the one there broke or serves a workspace that is gone.
     *
     * @throws SandboxDisposed  the sandbox was disposed of meanwhile
     * @throws SandboxException the agent could not start, quoting what bwrap or the agent said
     */
    Agent agentFor(String id, Path sandboxDirectory, WorkspaceKeeper keeper, Supplier<List<String>> argv) {
        Agent known = agents.get(id);
        if (known != null && known.serves(keeper)) {
            return known;
        }
        synchronized (starting.computeIfAbsent(id, any -> new Object())) {
            Agent current = agents.get(id);
            if (current != null && current.serves(keeper)) {
                return current;
            }
            if (current != null) {
                agents.remove(id, current);
                current.close();
            }
            forgetEnded();
            if (closed) {
                throw new SandboxException("backend '" + backendName + "' was closed: acquire the sandbox from a "
                        + "backend that is open");
            }
            Agent started = start(argv.get(), Optional.of(sandboxDirectory.resolve(LOG_FILE)), "sandbox " + id);
            Optional<Launches.Registration> registration = Launches.register(sandboxDirectory, started.launcher);
            if (registration.isEmpty()) {
                started.close();
                throw new SandboxDisposed("backend '" + backendName + "': this sandbox (" + id + ") was disposed of "
                        + "while its agent started, here or by another process; acquire it again for a fresh one");
            }
            Agent recorded = started.recorded(registration.get(), keeper);
            agents.put(id, recorded);
            return recorded;
        }
    }

    /** Forgets the agents that ended (their sandboxes were disposed of), so that none is held for long. */
    private void forgetEnded() {
        agents.forEach((id, agent) -> {
            if (!agent.alive() && agents.remove(id, agent)) {
                agent.close();
            }
        });
    }

    /** Ends {@code agent} (it broke) and forgets it, so that the next call starts a fresh one. */
    void discard(String id, Agent agent) {
        agents.remove(id, agent);
        agent.close();
    }

    /** The pid of the launch of sandbox {@code id}'s agent, when one runs here (for tests). */
    Optional<Long> launcherPid(String id) {
        return Optional.ofNullable(agents.get(id)).filter(Agent::alive).map(agent -> agent.launcher.pid());
    }

    /**
     * Starts {@code argv} (the launchers, bwrap, the agent) and opens its session, checking that the
     * agent gives each command namespaces and a user of its own.
     *
     * @param log  where its stderr goes (at most {@value #LOG_BYTES} bytes); empty: only a refusal quotes it
     * @param what what the agent serves, for messages
     */
    Agent start(List<String> argv, Optional<Path> log, String what) {
        List<String> words = new ArrayList<>(InheritedSignals.resetting());
        words.addAll(argv);
        ProcessBuilder builder = new ProcessBuilder(words);
        // The launchers need no host variable; bwrap clears the agent's environment anyway.
        builder.environment().clear();
        builder.environment().put("PATH", "/usr/bin:/bin:/usr/sbin:/sbin");
        Process launcher;
        try {
            launcher = builder.start();
        } catch (IOException e) {
            throw new SandboxException("backend '" + backendName + "' could not start the resident agent of " + what
                    + ": " + ErrorDetail.of(e), e);
        }
        StderrLog stderr = StderrLog.follow(launcher.getErrorStream(), log, "sandbox4j-agent-log-" + backendName);
        AgentConnection connection;
        try {
            connection = AgentConnection.open(launcher.getInputStream(), launcher.getOutputStream(), backendName,
                    HELLO_DEADLINE);
        } catch (SandboxInterrupted interrupted) {
            BubblewrapSandbox.killLaunch(launcher);
            throw interrupted;
        } catch (RuntimeException failed) {
            BubblewrapSandbox.killLaunch(launcher);
            String said = stderr.head(EXIT_GRACE);
            throw new SandboxException("backend '" + backendName + "' could not start the resident agent of " + what
                    + ": " + (said.isEmpty() ? ErrorDetail.of(failed) : "bwrap or the agent said '" + said + "'")
                    + "; build the backend with residentAgent(false) to run one bwrap per command", failed);
        }
        Agent agent = new Agent(launcher, connection, Optional.empty(), null);
        AgentHello hello = connection.hello();
        if (!hello.execNamespaces() || !hello.execUser() || !hello.treeReport()) {
            agent.close();
            throw new SandboxException("backend '" + backendName + "': the resident agent of " + what + " ("
                    + GuestText.quote(hello.agent()) + ") does not give each command namespaces and a user of its own "
                    + "(it needs agent 1.2 or later, with --exec-namespaces and --exec-user): use a matching "
                    + "sandbox4j-agent jar, or residentAgent(false)");
        }
        return agent;
    }

    /** Ends every agent this JVM runs for the backend; a later call starts none. */
    @Override
    public void close() {
        closed = true;
        agents.values().forEach(Agent::close);
        agents.clear();
    }

    /** One running agent: its launch (the first launcher's process), its session, and its record. */
    static final class Agent implements AutoCloseable {
        private final Process launcher;
        private final AgentConnection connection;
        private final Optional<Launches.Registration> registration;
        /** The keeper whose workspace it sees; null for an agent that serves no sandbox. */
        private final WorkspaceKeeper keeper;

        private Agent(Process launcher, AgentConnection connection, Optional<Launches.Registration> registration,
                WorkspaceKeeper keeper) {
            this.launcher = launcher;
            this.connection = connection;
            this.registration = registration;
            this.keeper = keeper;
        }

        private Agent recorded(Launches.Registration record, WorkspaceKeeper holder) {
            return new Agent(launcher, connection, Optional.of(record), holder);
        }

        AgentConnection connection() {
            return connection;
        }

        boolean alive() {
            return connection.isOpen() && launcher.isAlive();
        }

        /** Whether it still runs, with its session intact, in the workspace {@code holder} keeps. */
        boolean serves(WorkspaceKeeper holder) {
            return alive() && keeper != null && keeper.sameAs(holder);
        }

        /**
         * Ends the session (the agent then kills every command's tree and exits), waits a moment for
         * it, and kills what is left of the launch; removes its record. Idempotent.
         */
        @Override
        public void close() {
            connection.close();
            boolean interrupted = Thread.interrupted();
            try {
                if (!launcher.waitFor(EXIT_GRACE.toMillis(), TimeUnit.MILLISECONDS)) {
                    BubblewrapSandbox.killLaunch(launcher);
                    launcher.waitFor(EXIT_GRACE.toMillis(), TimeUnit.MILLISECONDS);
                }
            } catch (InterruptedException e) {
                interrupted = true;
                BubblewrapSandbox.killLaunch(launcher);
            } finally {
                registration.ifPresent(Launches.Registration::close);
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        @Override
        public String toString() {
            return "resident agent (launch pid " + launcher.pid() + ")";
        }
    }

    /**
     * An agent's stderr, copied by a daemon thread into its log up to {@value #LOG_BYTES} bytes and
     * read (and dropped) past that, so that neither the agent nor this host ever waits on it. Its
     * first bytes are also kept for the refusal of a launch that failed.
     */
    private static final class StderrLog {
        private final byte[] head = new byte[SAID_BYTES];
        private int headLength;
        private final Thread thread;

        private StderrLog(InputStream in, Optional<Path> log, String name) {
            this.thread = new Thread(() -> copy(in, log), name);
            this.thread.setDaemon(true);
        }

        static StderrLog follow(InputStream in, Optional<Path> log, String name) {
            StderrLog copier = new StderrLog(in, log, name);
            copier.thread.start();
            return copier;
        }

        private void copy(InputStream in, Optional<Path> log) {
            OutputStream out = null;
            try {
                if (log.isPresent() && Files.isDirectory(log.get().getParent(), LinkOption.NOFOLLOW_LINKS)) {
                    // The sandbox's host directory, which no guest sees: NOFOLLOW all the same.
                    out = Files.newOutputStream(log.get(), StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                            StandardOpenOption.TRUNCATE_EXISTING, LinkOption.NOFOLLOW_LINKS);
                }
            } catch (IOException e) {
                out = null;
            }
            long written = 0;
            byte[] buffer = new byte[8192];
            try (InputStream source = in; OutputStream sink = out) {
                for (int n = source.read(buffer); n >= 0; n = source.read(buffer)) {
                    synchronized (this) {
                        int kept = Math.min(n, head.length - headLength);
                        System.arraycopy(buffer, 0, head, headLength, kept);
                        headLength += kept;
                    }
                    if (sink != null && written < LOG_BYTES) {
                        int kept = (int) Math.min(n, LOG_BYTES - written);
                        sink.write(buffer, 0, kept);
                        sink.flush();
                        written += kept;
                    }
                }
            } catch (IOException ended) {
                // The launch was killed, or the log's directory went with a disposal: nothing more to keep.
            }
        }

        /** What was said first, escaped, once the stream ended (or {@code patience} passed). */
        String head(Duration patience) {
            try {
                thread.join(patience.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            synchronized (this) {
                return GuestText.escape(new String(head, 0, headLength, StandardCharsets.UTF_8).strip());
            }
        }
    }
}
