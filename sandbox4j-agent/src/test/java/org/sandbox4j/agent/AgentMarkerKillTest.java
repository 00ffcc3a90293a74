package org.sandbox4j.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.SandboxTimeoutException;
import org.sandbox4j.core.spi.TreeRemoval;

/**
 * {@code --marker-kill}: the agent resident in a PID namespace of its own (as in a container: no
 * cgroup it may use), where a timeout must still end a command's whole tree, double-forked and
 * re-{@code setsid} children included, and nothing else.
 */
class AgentMarkerKillTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    /** A command whose children leave its process group and session, and outlive it unless killed. */
    private static final String ESCAPING_TREE = "(setsid sh -c 'sleep 1000 & exec sleep 1001' &); (sleep 1002 &); "
            + "exec sleep 1003";
    private static Path work;
    private static ResidentAgent agent;

    @BeforeAll
    static void startAgent() throws IOException {
        work = ResidentLaunchers.workRoot("agent-marker-");
        agent = ResidentAgent.start(ResidentLaunchers.pidNamespace(), AgentBinary.path(),
                ResidentLaunchers.MARKER_KILL_OPTIONS, "agent-marker");
    }

    @AfterAll
    static void stopAgent() throws IOException {
        if (agent != null) {
            agent.close();
        }
        TreeRemoval.remove(work, TreeRemoval.Mode.PROCESSES_STOPPED, TreeRemoval.DEFAULT_DEADLINE);
    }

    private static ExecOptions options() {
        return ExecOptions.in(work.toString(), TIMEOUT);
    }

    private static ExecResult run(String line) {
        return GuestCommands.run(agent.connection(), Command.shell(line), options());
    }

    /** The command lines of every process in the agent's namespace but the agent and the listing itself. */
    private static List<String> othersInTheNamespace() {
        String listing = run("for p in /proc/[0-9]*; do [ \"${p#/proc/}\" = 1 ] || [ \"${p#/proc/}\" = $$ ] || "
                + "tr '\\0' ' ' < $p/cmdline 2>/dev/null && echo; done").stdoutText();
        return listing.lines().filter(line -> !line.isBlank()).toList();
    }

    @Test
    void theHandshakeSaysMarkerKill() {
        AgentHello hello = agent.connection().hello();
        assertThat(hello.agent()).isEqualTo("s4j-agent 1.3");
        assertThat(hello.markerKill()).isTrue();
        assertThat(hello.treeReport()).isTrue();
        assertThat(hello.cgroupKill()).isFalse();
        assertThat(hello.execNamespaces()).isFalse();
    }

    @Test
    void everyExecCarriesItsOwnMarker() {
        String first = run("printf %s \"$S4J_EXEC\"").stdoutText();
        String second = GuestCommands.run(agent.connection(), Command.shell("printf %s \"$S4J_EXEC\""),
                options().withEnvironment(Map.of("S4J_EXEC", "host-chosen"))).stdoutText();
        assertThat(first).matches("[0-9a-f]{16}-[0-9]+");
        assertThat(second).matches("[0-9a-f]{16}-[0-9]+").isNotEqualTo(first);
    }

    @Test
    void aTimeoutKillsTheEscapedTreeAndOnlyThatExecs() throws Exception {
        CompletableFuture<ExecResult> neighbour = CompletableFuture.supplyAsync(() -> run("sleep 3; echo survived"));
        assertThatThrownBy(() -> GuestCommands.run(agent.connection(), Command.shell(ESCAPING_TREE),
                options().withTimeout(Duration.ofSeconds(1))))
                .isInstanceOf(SandboxTimeoutException.class);
        assertThat(othersInTheNamespace()).noneMatch(line -> line.contains("sleep 10"));
        ExecResult survivor = neighbour.get(20, TimeUnit.SECONDS);
        assertThat(survivor.stdoutText()).isEqualTo("survived\n");
    }

    @Test
    void endingTheTreeAtTheLeadersExitTakesItsEscapedChildren() {
        ExecResult result = agent.connection().execEndingTree(GuestCommands.argv(Command.shell(
                "(setsid sleep 1004 &); echo left")), work.toString(), GuestCommands.environment(options()),
                options(), "left");
        assertThat(result.stdoutText()).isEqualTo("left\n");
        assertThat(othersInTheNamespace()).noneMatch(line -> line.contains("sleep 1004"));
    }

    /**
     * The same, with the leftover still going through execve when its leader exits (a process mid-exec shows an
     * empty environment for a moment): each round's chain of execs must not slip past the scan.
     */
    @Test
    void aLeftoverInTheMiddleOfExecveIsTakenToo() {
        for (int round = 0; round < 20; round++) {
            ExecResult result = agent.connection().execEndingTree(GuestCommands.argv(Command.shell(
                    "(setsid env env env sleep 1007 &); echo left")), work.toString(),
                    GuestCommands.environment(options()), options(), "left");
            assertThat(result.stdoutText()).isEqualTo("left\n");
            assertThat(othersInTheNamespace()).as("round %d", round).noneMatch(line -> line.contains("sleep 1007"));
        }
    }

    @Test
    void withoutItTheLeftoverLivesUntilTheSessionEnds() throws Exception {
        // An agent directly on this host (not PID 1 of a namespace, whose end would kill everything anyway).
        Path marker = work.resolve("leftover-ran");
        try (ResidentAgent direct = ResidentAgent.start(List.of(), AgentBinary.path(),
                ResidentLaunchers.MARKER_KILL_OPTIONS, "agent-marker-direct")) {
            ExecResult result = GuestCommands.run(direct.connection(), Command.argv("sh", "-c",
                    "(setsid sh -c 'sleep 2; touch \"$1\"' leftover \"$1\" &); echo started", "probe",
                    marker.toString()), options());
            assertThat(result.stdoutText()).isEqualTo("started\n");
        }
        TimeUnit.SECONDS.sleep(4);
        assertThat(marker).doesNotExist();
    }

    @Test
    void aCommandThatKeepsForkingEscapeesIsStillEndedWhole() {
        // Every scan may find new processes, until one finds none: the kill repeats within its bound.
        assertThatThrownBy(() -> GuestCommands.run(agent.connection(), Command.shell(
                "while :; do (setsid sleep 1005 &); sleep 0.01; done"), options().withTimeout(Duration.ofSeconds(1))))
                .isInstanceOf(SandboxTimeoutException.class);
        assertThat(othersInTheNamespace()).noneMatch(line -> line.contains("sleep 1005"));
    }
}
