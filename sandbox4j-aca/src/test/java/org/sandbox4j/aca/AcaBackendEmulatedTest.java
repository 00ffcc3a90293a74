package org.sandbox4j.aca;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sandbox4j.aca.emulator.AcaEmulator;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.Egress;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.spi.KeyDigest;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxSpec;

/**
 * The paths the issue names, through {@link AcaBackend} against the {@link AcaEmulator}: retries
 * on the emulator's injected 403 and 429, the warm resume of a suspended sandbox, labels hashed on
 * write and found by the same hash on query, a second instance disposing of what the first made,
 * and exit codes a command chose itself.
 */
class AcaBackendEmulatedTest {

    private static final String TOKEN = "emulated-token";
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    @TempDir
    Path state;

    private AcaEmulator emulator;
    private final List<Duration> sleeps = Collections.synchronizedList(new ArrayList<>());

    @BeforeEach
    void start() throws IOException {
        emulator = AcaEmulator.start(state, TOKEN);
    }

    @AfterEach
    void stop() {
        emulator.close();
    }

    /** A new instance (another replica) on the same sandbox group; waits are recorded, not slept. */
    private AcaBackend backend() {
        return new AcaBackend(AcaConfig.builder().endpoint(emulator.baseUrl()).subscription("sub").resourceGroup("rg")
                .sandboxGroup("group").build(), scope -> TOKEN, sleeps::add);
    }

    private static SandboxSpec spec() {
        return SandboxSpec.builder("execute_code").image("python").egress(Egress.DENY_ALL).build();
    }

    private static ExecResult sh(AcaSandbox sandbox, String script) {
        return sandbox.exec(Command.argv("sh", "-c", script), ExecOptions.in("/", TIMEOUT));
    }

    @Test
    void aCommandsOwnExit137Or124IsAnOrdinaryResult() {
        AcaSandbox sandbox = (AcaSandbox) backend().acquire(new SandboxKey("s", "t", "a"), spec());
        for (int code : new int[] {137, 124}) {
            ExecResult result = sh(sandbox, "echo out; exit " + code);
            assertThat(result.exitCode()).isEqualTo(code);
            assertThat(result.stdoutText()).isEqualTo("out\n");
        }
    }

    @Test
    void roleAssignmentStillPropagatingAndThrottlingAreRetriedOnFirstUse() {
        emulator.failFirstWith403(3).throttleNext(2, 4);
        AcaSandbox sandbox = (AcaSandbox) backend().acquire(new SandboxKey("s", "t", "a"), spec());
        assertThat(sh(sandbox, "echo up").stdoutText()).isEqualTo("up\n");
        // Three 403s back off 0.5, 1, 2 s; then two 429s wait what Retry-After says.
        assertThat(sleeps).startsWith(Duration.ofMillis(500), Duration.ofSeconds(1), Duration.ofSeconds(2),
                Duration.ofSeconds(4), Duration.ofSeconds(4));
    }

    @Test
    void aSuspendedSandboxIsResumedWithItsMemoryBeforeAnyCreate() {
        AcaBackend backend = backend();
        SandboxKey key = new SandboxKey("s", "t", "a");
        AcaSandbox first = (AcaSandbox) backend.acquire(key, spec());
        assertThat(sh(first, "echo kept > /tmp/memory").exitCode()).isZero();
        emulator.suspend(first.id());
        emulator.clearRequests();

        AcaSandbox again = (AcaSandbox) backend.acquire(key, spec());
        assertThat(again.id()).isEqualTo(first.id());
        assertThat(emulator.stateOf(first.id())).isEqualTo("Running");
        assertThat(emulator.requests()).extracting(AcaEmulator.Request::toString)
                .anyMatch(request -> request.startsWith("POST ") && request.contains("/" + first.id() + "/resume"))
                .noneMatch(request -> request.startsWith("PUT ") && request.contains("/sandboxes?"));
        assertThat(sh(again, "cat /tmp/memory").stdoutText()).isEqualTo("kept\n");
    }

    /**
     * A stop suspends (memory and disk kept: MS-skill): a background process started before it is alive after the
     * warm acquire's resume, with what it held in memory. Exec on the stopped handle itself resumes it first (the
     * service refuses exec on a sandbox that is not running; its CLI resumes before exec).
     */
    @Test
    void aBackgroundProcessStartedBeforeAStopIsAliveWithItsStateAfterTheResume() {
        AcaBackend backend = backend();
        SandboxKey key = new SandboxKey("s", "t", "a");
        AcaSandbox first = (AcaSandbox) backend.acquire(key, spec());
        String counter = "(n=0; while :; do n=$((n+1)); if [ -e /tmp/ask ]; then echo \"$n $$\" > /tmp/said;"
                + " rm /tmp/ask; fi; sleep 0.1; done) >/dev/null 2>&1 & echo $!";
        String pid = sh(first, counter).stdoutText().strip();
        emulator.stop(first.id());
        assertThat(emulator.stateOf(first.id())).isEqualTo("Stopped");

        // The handle made before the stop: its exec is refused with 409, the backend resumes and sends it again.
        String said = sh(first, "touch /tmp/ask; i=0; while [ -e /tmp/ask ] && [ $i -lt 100 ]; do sleep 0.1;"
                + " i=$((i+1)); done; cat /tmp/said").stdoutText();
        assertThat(emulator.stateOf(first.id())).isEqualTo("Running");
        String[] count = said.strip().split(" ");
        assertThat(Long.parseLong(count[0])).as(said).isPositive();

        emulator.stop(first.id());
        AcaSandbox again = (AcaSandbox) backend.acquire(key, spec());
        assertThat(again.id()).isEqualTo(first.id());
        assertThat(sh(again, "kill -0 " + pid + " && echo alive").stdoutText()).isEqualTo("alive\n");
        // Its counter went on from where it was, not from a fresh start.
        String later = sh(again, "touch /tmp/ask; i=0; while [ -e /tmp/ask ] && [ $i -lt 100 ]; do sleep 0.1;"
                + " i=$((i+1)); done; cat /tmp/said").stdoutText();
        assertThat(Long.parseLong(later.strip().split(" ")[0])).as(later).isGreaterThan(Long.parseLong(count[0]));
    }

    @Test
    void aSandboxStillStoppingIsResumedOnceItHasStopped() throws Exception {
        AcaBackend backend = backend();
        SandboxKey key = new SandboxKey("s", "t", "a");
        AcaSandbox first = (AcaSandbox) backend.acquire(key, spec());
        emulator.stopLatency(Duration.ofMillis(300));
        HttpResponse<String> stop = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(
                emulator.baseUrl() + AcaEmulator.groupPath("sub", "rg", "group") + "/sandboxes/" + first.id()
                        + "/stop?api-version=" + AcaEmulator.API_VERSION)).header("Authorization", "Bearer " + TOKEN)
                .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(stop.statusCode()).isEqualTo(202);
        assertThat(emulator.stateOf(first.id())).isEqualTo("Stopping");

        AcaSandbox again = (AcaSandbox) backend.acquire(key, spec());
        assertThat(again.id()).isEqualTo(first.id());
        assertThat(emulator.stateOf(first.id())).isEqualTo("Running");
        assertThat(emulator.requests()).extracting(AcaEmulator.Request::toString)
                .filteredOn(request -> request.contains("/" + first.id() + "/resume")).hasSizeGreaterThanOrEqualTo(2);
    }

    @Test
    void aDisabledSandboxIsNotResumedButReplaced() {
        AcaBackend backend = backend();
        SandboxKey key = new SandboxKey("s", "t", "a");
        AcaSandbox first = (AcaSandbox) backend.acquire(key, spec());
        emulator.disable(first.id());
        AcaSandbox second = (AcaSandbox) backend.acquire(key, spec());
        assertThat(second.id()).isNotEqualTo(first.id());
        assertThat(emulator.requests()).extracting(AcaEmulator.Request::toString)
                .noneMatch(request -> request.contains("/" + first.id() + "/resume"));
    }

    @Test
    void longLabelValuesAreHashedOnWriteAndFoundByTheSameHash() {
        String scope = "tenant-" + "x".repeat(80);
        String thread = "thread/with,odd=characters";
        AcaSandbox sandbox = (AcaSandbox) backend().acquire(new SandboxKey(scope, thread, "agent"), spec());
        String request = emulator.requests().stream().filter(r -> r.method().equals("PUT")).findFirst().orElseThrow()
                .bodyText();
        String hashedScope = "sha256-" + KeyDigest.sha256Hex(scope).substring(0, 48);
        String hashedThread = "sha256-" + KeyDigest.sha256Hex(thread).substring(0, 48);
        assertThat(request).contains("\"scope\":\"" + hashedScope + "\"", "\"thread\":\"" + hashedThread + "\"")
                .doesNotContain("x".repeat(64));

        // Another instance, knowing nothing of it, finds it by the same hashes and deletes it.
        assertThat(backend().disposeScope(scope, thread)).isEqualTo(1);
        assertThat(emulator.stateOf(sandbox.id())).isNull();
    }

    @Test
    void aSecondInstanceDisposesOfWhatTheFirstMadeByKeyAndByConversation() {
        AcaBackend first = backend();
        SandboxKey key = new SandboxKey("tenant", "thread-1", "agent");
        String a = ((AcaSandbox) first.acquire(key, spec())).id();
        String b = ((AcaSandbox) first.acquire(key, SandboxSpec.builder("other_kind").image("python")
                .egress(Egress.DENY_ALL).build())).id();
        String c = ((AcaSandbox) first.acquire(new SandboxKey("tenant", "thread-1", "agent-2"), spec())).id();
        String d = ((AcaSandbox) first.acquire(new SandboxKey("tenant", "thread-2", "agent"), spec())).id();

        backend().dispose(key);
        assertThat(emulator.sandboxIds()).doesNotContain(a, b).contains(c, d);
        assertThat(backend().disposeScope("tenant", "thread-1")).isEqualTo(1);
        assertThat(emulator.sandboxIds()).containsExactly(d);
    }

    @Test
    void aHandleOnADeletedSandboxSaysSoRatherThanThatThePathIsMissing() {
        AcaBackend backend = backend();
        SandboxKey key = new SandboxKey("s", "t", "a");
        AcaSandbox sandbox = (AcaSandbox) backend.acquire(key, spec());
        sandbox.writeFile("f.txt", "x".getBytes(StandardCharsets.UTF_8), "/w");
        backend.dispose(key);
        for (org.assertj.core.api.ThrowableAssert.ThrowingCallable call : List.<org.assertj.core.api.ThrowableAssert
                .ThrowingCallable>of(() -> sandbox.stat("f.txt", "/w"), () -> sandbox.readFile("f.txt", "/w", 100),
                        () -> sandbox.listDir(".", "/w"))) {
            assertThatThrownBy(call).isInstanceOf(SandboxException.class).hasMessageContaining("no longer exists");
        }
    }

    @Test
    void removalUnlinksALinkAndNeverFollowsOne() throws IOException {
        AcaSandbox sandbox = (AcaSandbox) backend().acquire(new SandboxKey("s", "t", "a"), spec());
        assertThat(sh(sandbox, "mkdir -p /w/tree /outside && echo keep > /outside/f && ln -s /outside/f /w/link"
                + " && ln -s /outside /w/tree/dir-link && echo x > /w/tree/leaf").exitCode()).isZero();
        sandbox.remove("link", "/w", false);
        sandbox.remove("tree", "/w", true);
        Path root = emulator.guestRoot(sandbox.id());
        assertThat(root.resolve("w/link")).doesNotExist();
        assertThat(root.resolve("w/tree")).doesNotExist();
        assertThat(Files.readString(root.resolve("outside/f"), StandardCharsets.UTF_8)).isEqualTo("keep\n");
        assertThat(emulator.requests()).extracting(AcaEmulator.Request::method).doesNotContain("DELETE");
    }
}
