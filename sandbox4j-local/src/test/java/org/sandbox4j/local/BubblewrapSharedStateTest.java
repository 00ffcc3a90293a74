package org.sandbox4j.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.sandbox4j.core.spi.KeyDigest;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxDisposed;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxSpec;

/**
 * Two backend instances over one state root stand for two replicas (or a restarted JVM): what one
 * creates, the other finds in the records on disk and disposes of; the first one's handle then
 * fails loudly. The records hold digests of the labels, never the labels.
 */
@EnabledOnOs(OS.LINUX)
class BubblewrapSharedStateTest {

    private static final String WORK = SandboxSpec.DEFAULT_WORK_DIR;
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    /** Distinctive label values, so their absence from the disk means something. */
    private static final String SCOPE = "tenant-Qx7-raw-scope-label";
    private static final String THREAD = "thread-Vb3-raw-thread-label";
    private static final String OTHER_THREAD = "thread-Wn9-another-raw-thread";
    private static final String AGENT = "agent-Pz5-raw-agent-dir";

    private Path stateRoot;
    private BubblewrapBackend first;
    private BubblewrapBackend second;

    @BeforeEach
    void twoReplicas() throws IOException {
        stateRoot = Files.createTempDirectory("s4j");
        first = BubblewrapBackend.builder().stateRoot(stateRoot).build();
        second = BubblewrapBackend.builder().stateRoot(stateRoot).build();
    }

    @AfterEach
    void cleanUp() {
        first.disposeScope(SCOPE, THREAD);
        first.disposeScope(SCOPE, OTHER_THREAD);
        first.close();
        second.close();
        LocalStore.deleteTree(stateRoot);
    }

    @Test
    void anotherInstanceDisposesOfAKeyAndTheFirstHandleThenSaysItWasDisposed() {
        SandboxKey key = new SandboxKey(SCOPE, THREAD, AGENT);
        Sandbox sandbox = first.acquire(key, SandboxSpec.builder("shared").build());
        sandbox.writeFile("note.txt", "from the first replica", WORK);
        assertThat(second.acquire(key, SandboxSpec.builder("shared").build())
                .exec(List.of("cat", "note.txt"), WORK, TIMEOUT).stdoutText())
                .as("the second replica adopts the same sandbox").isEqualTo("from the first replica");
        Path directory = onlySandboxDirectory();

        second.dispose(key);

        assertThat(directory).as("the sandbox directory, after the other replica disposed of it").doesNotExist();
        assertThatThrownBy(() -> sandbox.exec(List.of("true"), WORK, TIMEOUT))
                .isExactlyInstanceOf(SandboxDisposed.class)
                .hasMessageContaining("was disposed of")
                .hasMessageContaining("acquire it again");
        assertThatThrownBy(() -> sandbox.readFile("note.txt", WORK, 100))
                .isExactlyInstanceOf(SandboxDisposed.class).hasMessageContaining("was disposed of");
        assertThat(first.acquire(key, SandboxSpec.builder("shared").build()).stat("note.txt", WORK))
                .as("acquiring again gives a fresh, empty sandbox").isEmpty();
    }

    @Test
    void anotherInstanceDisposesOfAWholeScopeAndThreadAndCountsWhatItRemoved() {
        SandboxSpec spec = SandboxSpec.builder("shared").build();
        first.acquire(new SandboxKey(SCOPE, THREAD, AGENT), spec).writeFile("a.txt", "a", WORK);
        first.acquire(new SandboxKey(SCOPE, THREAD, "another-agent"), spec).writeFile("b.txt", "b", WORK);
        first.acquire(new SandboxKey(SCOPE, THREAD, AGENT), SandboxSpec.builder("other-kind").build());
        Sandbox otherThread = first.acquire(new SandboxKey(SCOPE, OTHER_THREAD, AGENT), spec);
        otherThread.writeFile("kept.txt", "kept", WORK);
        assertThat(sandboxDirectories()).hasSize(4);

        assertThat(second.disposeScope(SCOPE, THREAD)).as("sandboxes of the scope and thread removed").isEqualTo(3);

        assertThat(sandboxDirectories()).as("only the other thread's sandbox is left").hasSize(1);
        assertThat(otherThread.readFile("kept.txt", WORK, 100)).asString(StandardCharsets.UTF_8).isEqualTo("kept");
        assertThat(second.disposeScope(SCOPE, THREAD)).as("nothing left to remove").isZero();
        assertThat(second.disposeScope("no-such-scope", THREAD)).isZero();
    }

    @Test
    void recordsHoldOnlyDigestsOfTheLabelsAndNoRawLabelIsWrittenAnywhere() throws IOException {
        SandboxKey key = new SandboxKey(SCOPE, THREAD, AGENT);
        Sandbox sandbox = first.acquire(key, SandboxSpec.builder("shared").build());
        sandbox.writeFile("data.txt", "payload", WORK);
        assertThat(sandbox.exec(List.of("true"), WORK, TIMEOUT).exitCode()).isZero();

        Properties record = new Properties();
        try (var in = Files.newBufferedReader(onlySandboxDirectory().resolve(SandboxRecord.FILE_NAME))) {
            record.load(in);
        }
        assertThat(record.getProperty("scope-sha256")).isEqualTo(KeyDigest.sha256Hex(SCOPE));
        assertThat(record.getProperty("thread-sha256")).isEqualTo(KeyDigest.sha256Hex(THREAD));
        assertThat(record.getProperty("agent-dir-sha256")).isEqualTo(KeyDigest.sha256Hex(AGENT));
        assertThat(record.getProperty("scope-sha256")).matches("[0-9a-f]{64}");

        List<String> leaks = new ArrayList<>();
        try (Stream<Path> everything = Files.walk(stateRoot)) {
            for (Path path : everything.toList()) {
                String name = stateRoot.relativize(path).toString();
                String content = Files.isRegularFile(path)
                        ? new String(Files.readAllBytes(path), StandardCharsets.ISO_8859_1) : "";
                for (String label : List.of(SCOPE, THREAD, AGENT)) {
                    if (name.contains(label) || content.contains(label)) {
                        leaks.add(label + " in " + name);
                    }
                }
            }
        }
        assertThat(leaks).as("raw labels found under the state root").isEmpty();
    }

    @Test
    void twoInstancesInOneJvmAcquireTheSameSandboxConcurrentlyWithoutFailing() throws Exception {
        SandboxKey key = new SandboxKey(SCOPE, THREAD, AGENT);
        SandboxSpec spec = SandboxSpec.builder("shared").build();
        ExecutorService threads = Executors.newFixedThreadPool(8);
        try {
            List<Future<Sandbox>> acquired = new ArrayList<>();
            for (int i = 0; i < 64; i++) {
                BubblewrapBackend backend = i % 2 == 0 ? first : second;
                acquired.add(threads.submit(() -> backend.acquire(key, spec)));
            }
            for (Future<Sandbox> future : acquired) {
                assertThat(future.get(60, TimeUnit.SECONDS)).isNotNull();
            }
        } finally {
            threads.shutdownNow();
        }
        assertThat(sandboxDirectories()).as("one sandbox, however many acquired it").hasSize(1);
    }

    private Path onlySandboxDirectory() {
        List<Path> all = sandboxDirectories();
        assertThat(all).hasSize(1);
        return all.get(0);
    }

    private List<Path> sandboxDirectories() {
        try (Stream<Path> children = Files.list(first.stateDirectory())) {
            return children.filter(path -> path.getFileName().toString().startsWith("sbx-")).toList();
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }
}
