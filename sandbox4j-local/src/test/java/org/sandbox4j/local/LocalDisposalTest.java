package org.sandbox4j.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.core.SandboxDisposed;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.testkit.tck.HostileSuite;

/**
 * Disposal as the host sees it, on both local backends: a command in flight ends with
 * {@link SandboxDisposed}, and so does every later call on the handle; and nothing of the sandbox
 * stays under the state root — no half-removed directory, no lock file — even for a tree deeper
 * than any path can name (which a path-based removal left behind as an undeletable
 * {@code .removing-*}). The TCK can only see that a re-acquire starts empty; this looks at the host.
 */
class LocalDisposalTest {

    private static final SandboxKey KEY = new SandboxKey("disposal", "thread", "agent");
    private static final Duration TIMEOUT = Duration.ofSeconds(120);

    private LocalBackendUnderTest local;

    @BeforeEach
    void fresh() throws IOException {
        local = LocalBackendUnderTest.fresh("s4jd", KEY);
    }

    @AfterEach
    void cleanUp() throws Exception {
        local.close();
    }

    @ParameterizedTest
    @ValueSource(strings = {BubblewrapBackend.TYPE, ProcessBackend.TYPE})
    void anExecInFlightDuringADisposalAndEveryCallAfterEndWithSandboxDisposed(String type) throws Exception {
        LocalBackendUnderTest.Acquired acquired = local.acquire(type, "disposal");
        SandboxBackend backend = local.backend();
        Sandbox sandbox = acquired.sandbox();
        String work = acquired.workDir();
        sandbox.writeFile("before.txt", "x", work);
        CompletableFuture<ExecResult> running = CompletableFuture.supplyAsync(() -> sandbox.exec(List.of("sh", "-c",
                ": > started; sleep 60"), work, TIMEOUT));
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (sandbox.stat("started", work).isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }

        backend.dispose(KEY);

        assertThatThrownBy(() -> running.get(60, TimeUnit.SECONDS)).hasCauseInstanceOf(SandboxDisposed.class);
        assertThatThrownBy(() -> sandbox.exec(List.of("true"), work, TIMEOUT)).isInstanceOf(SandboxDisposed.class);
        assertThatThrownBy(() -> sandbox.readFile("before.txt", work, 10)).isInstanceOf(SandboxDisposed.class);
    }

    @ParameterizedTest
    @ValueSource(strings = {BubblewrapBackend.TYPE, ProcessBackend.TYPE})
    void aTreeDeeperThanAnyPathLeavesNothingUnderTheStateRoot(String type) throws IOException {
        LocalBackendUnderTest.Acquired acquired = local.acquire(type, "disposal");
        SandboxBackend backend = local.backend();
        Sandbox sandbox = acquired.sandbox();
        String work = acquired.workDir();
        ExecResult made = sandbox.exec(List.of("sh", "-c", HostileSuite.DEEP_TREE + "\nchmod 500 deep/d/d", "deep",
                work, "1250"), work, TIMEOUT);
        assertThat(made.exitCode()).as(made.stderrText()).isZero();

        backend.dispose(KEY);

        Path store = local.stateRoot().resolve(type);
        try (Stream<Path> left = Files.list(store)) {
            assertThat(left.map(path -> path.getFileName().toString()))
                    .as("what disposal left under the state root").allMatch(LocalStore::isBackendEntry);
        }
        try (Stream<Path> index = Files.list(store.resolve(SandboxIndex.DIRECTORY))) {
            assertThat(index.map(path -> path.getFileName().toString())).as("the index, after disposal")
                    .containsOnly(SandboxIndex.READY);
        }
        try (Stream<Path> locks = Files.list(store.resolve(".locks"))) {
            assertThat(locks).as("lock files").isEmpty();
        }
    }

}
