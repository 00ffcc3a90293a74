package org.sandbox4j.local;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxSpec;

/**
 * No bubblewrap guest can make a FIFO (the host opens workspace files from outside, and an open
 * of a FIFO blocks until its other end is opened), whichever way it asks: mkfifo, mknod, Python's
 * os.mkfifo, in the workspace or in /tmp. Everything else a guest does with files still works,
 * and anonymous pipes too.
 */
@EnabledOnOs(OS.LINUX)
class BubblewrapNoFifoTest {

    private static final String WORK = SandboxSpec.DEFAULT_WORK_DIR;
    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final SandboxKey KEY = new SandboxKey("no-fifo", "thread", "agent");

    private Path stateRoot;
    private BubblewrapBackend backend;
    private Sandbox sandbox;

    @BeforeEach
    void sandbox() throws IOException {
        stateRoot = Files.createTempDirectory("s4j");
        backend = BubblewrapBackend.builder().stateRoot(stateRoot).build();
        sandbox = backend.acquire(KEY, SandboxSpec.builder("no-fifo").build());
        sandbox.writeFile("seed.txt", "seed", WORK);
    }

    @AfterEach
    void cleanUp() {
        backend.dispose(KEY);
        backend.close();
        LocalStore.deleteTree(stateRoot);
    }

    @Test
    void noWayOfMakingAFifoWorksAndTheyAllSayWhy() {
        for (List<String> attempt : List.of(
                List.of("mkfifo", "pipe"),
                List.of("mknod", "pipe2", "p"),
                List.of("mkfifo", "/tmp/pipe"),
                List.of("python3", "-c", "import os; os.mkfifo('pipe3')"))) {
            ExecResult result = sandbox.exec(attempt, WORK, TIMEOUT);

            assertThat(result.exitCode()).as("%s: %s", attempt, result.stderrText()).isNotZero();
            assertThat(result.stderrText()).as("%s", attempt).contains("Operation not permitted");
        }
        ExecResult left = sandbox.exec(List.of("sh", "-c", "ls -A; ls -A /tmp"), WORK, TIMEOUT);
        assertThat(left.stdoutText()).isEqualTo("seed.txt\n");
    }

    @Test
    void filesDirectoriesLinksAndAnonymousPipesStillWork() {
        ExecResult result = sandbox.exec(List.of("sh", "-c", "mkdir d && echo x > d/f && ln -s d/f l && cat l "
                + "| tr x y && python3 -c \"import os; r, w = os.pipe(); os.write(w, b'p'); print(os.read(r, 1))\""),
                WORK, TIMEOUT);

        assertThat(result.exitCode()).as(result.stderrText()).isZero();
        assertThat(result.stdoutText()).isEqualTo("y\nb'p'\n");
    }

    @Test
    void diagnosticsSayFifosCannotBeMade() {
        assertThat(backend.diagnostics()).anySatisfy(line -> assertThat(line).startsWith("seccomp: FIFOs cannot be made"));
    }
}
