package org.sandbox4j.docker;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.sandbox4j.codeact.CodeAct;
import org.sandbox4j.core.CallerContext;
import org.sandbox4j.core.FileListing;
import org.sandbox4j.core.Isolation;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxRouter;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.tool.SandboxTool;
import org.sandbox4j.core.tool.ToolResult;

/** {@code execute_code} end to end on the Docker backend (runc): the kind, the router and the container. */
class ExecuteCodeOnDockerTest {

    private static final String SCOPE = "sandbox4j-docker-codeact";
    private static final String AGENT = "agent";

    private static DockerTarget target;
    private static DockerBackend backend;
    private static SandboxRouter router;
    private static String thread;

    @BeforeAll
    static void start() {
        target = DockerTarget.dockerWith("runc");
        backend = target.newBackend();
        router = SandboxRouter.builder().backend(backend).minIsolation(Isolation.CONTAINER).build();
    }

    @AfterEach
    void disposeThisThread() {
        if (thread != null) {
            router.disposeScope(SCOPE, thread);
        }
    }

    @AfterAll
    static void stop() {
        target.close();
    }

    private static CodeAct.Builder codeAct() {
        thread = thread == null ? "thread-" + UUID.randomUUID() : thread;
        String current = thread;
        return CodeAct.builder(router, AGENT, CallerContext.of(() -> SCOPE, () -> current, FileListing.NONE));
    }

    private static ToolResult run(SandboxTool tool, String code) {
        return tool.call(Map.of("code", code));
    }

    @Test
    void aPythonProgramPrintsAndExitsZero() {
        thread = null;
        ToolResult result = run(codeAct().build().orElseThrow(), "print(sum(range(10)))");
        assertThat(result.error()).isFalse();
        assertThat(result.text()).isEqualTo("stdout:\n45");
    }

    @Test
    void stderrAndTheExitCodeComeBack() {
        thread = null;
        ToolResult result = run(codeAct().build().orElseThrow(),
                "import sys\nprint('partial')\nprint('it broke', file=sys.stderr)\nsys.exit(3)");
        assertThat(result.text()).isEqualTo("stdout:\npartial\nstderr:\nit broke\nexit code: 3");
    }

    @Test
    void aConversationKeepsItsFilesBetweenCallsAndSeesNoNetwork() {
        thread = null;
        SandboxTool tool = codeAct().build().orElseThrow();
        assertThat(run(tool, "open('../notes.txt', 'w').write('kept')").error()).isFalse();
        assertThat(run(tool, "print(open('../notes.txt').read())").text()).isEqualTo("stdout:\nkept");
        ToolResult network = run(tool, String.join("\n",
                "import socket",
                "try:",
                "    socket.create_connection(('127.0.0.1', 9), timeout=2)",
                "except OSError as e:",
                "    print('refused')",
                "print(sorted(open('/proc/net/dev').read().split()[::17][1:]))"));
        assertThat(network.text()).startsWith("stdout:\nrefused");
    }

    @Test
    void aTimeoutKillsTheProgramAndItsDetachedChild() throws Exception {
        thread = null;
        String program = String.join("\n",
                "import os, time",
                "if os.fork() == 0:",
                "    os.setsid()",
                "    if os.fork() == 0:",
                "        while True:",
                "            with open('../heartbeat', 'a') as f: f.write('.')",
                "            time.sleep(0.1)",
                "    os._exit(0)",
                "while True: time.sleep(1)");
        ToolResult result = run(codeAct().execTimeout(Duration.ofSeconds(3)).build().orElseThrow(), program);
        assertThat(result.error()).isTrue();
        assertThat(result.text()).contains("3");

        SandboxSpec spec = codeAct().spec();
        Sandbox sandbox = router.acquire(new SandboxKey(SCOPE, thread, AGENT), spec);
        String workDir = spec.workDirIn(sandbox);
        long before = sandbox.readFile("heartbeat", workDir, 1 << 20).length;
        assertThat(before).as("the child really ran").isPositive();
        Thread.sleep(1000);
        assertThat(sandbox.readFile("heartbeat", workDir, 1 << 20).length).as("the child is dead")
                .isEqualTo(before);
    }
}
