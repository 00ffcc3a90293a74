package org.sandbox4j.local;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.ExecStream;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.spi.GuestEnvironment;

/** What a guest sees and how its output arrives, beyond what the TCK checks. */
@EnabledOnOs(OS.LINUX)
class BubblewrapExecTest {

    private static final String WORK = SandboxSpec.DEFAULT_WORK_DIR;
    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final SandboxKey KEY = new SandboxKey("exec-scope", "exec-thread", "agent");

    private static Path stateRoot;
    private static BubblewrapBackend backend;
    private static Sandbox sandbox;

    @BeforeAll
    static void sandbox() throws IOException {
        stateRoot = Files.createTempDirectory("s4j");
        backend = BubblewrapBackend.builder().stateRoot(stateRoot).build();
        sandbox = backend.acquire(KEY, SandboxSpec.builder("exec").build());
    }

    @AfterAll
    static void cleanUp() {
        backend.dispose(KEY);
        backend.close();
        LocalStore.deleteTree(stateRoot);
    }

    @Test
    void theListenerReceivesTheFirstChunkWhileTheCommandStillRuns() {
        AtomicLong firstChunkAt = new AtomicLong();
        StringBuilder streamed = new StringBuilder();
        ExecOptions options = ExecOptions.in(WORK, TIMEOUT).withListener((stream, chunk) -> {
            firstChunkAt.compareAndSet(0, System.nanoTime());
            synchronized (streamed) {
                streamed.append(stream).append(':').append(new String(chunk));
            }
        });

        ExecResult result = sandbox.exec(Command.shell("echo first; sleep 2; echo second"), options);
        long returnedAt = System.nanoTime();

        assertThat(result.stdoutText()).isEqualTo("first\nsecond\n");
        assertThat(firstChunkAt.get()).as("a chunk arrived").isNotZero();
        assertThat(Duration.ofNanos(returnedAt - firstChunkAt.get())).as("the first chunk came well before the end")
                .isGreaterThan(Duration.ofSeconds(1));
        assertThat(streamed.toString()).isEqualTo(ExecStream.STDOUT + ":first\n" + ExecStream.STDOUT + ":second\n");
    }

    @Test
    void theGuestEnvironmentIsExactlyTheFixedOnePlusWhatTheCallerGave() {
        ExecResult result = sandbox.exec(Command.argv("env"), ExecOptions.in(WORK, TIMEOUT)
                .withEnvironment(Map.of("CALLER_VARIABLE", "given", "LANG", "C")));

        Map<String, String> expected = new LinkedHashMap<>(GuestEnvironment.WITH_SYSTEM_PATH);
        expected.put("CALLER_VARIABLE", "given");
        expected.put("LANG", "C");
        // bwrap --chdir sets PWD to the guest working directory, as any shell would; nothing from the host.
        expected.put("PWD", WORK);
        Map<String, String> seen = Arrays.stream(result.stdoutText().split("\n")).filter(line -> !line.isEmpty())
                .collect(Collectors.toMap(line -> line.substring(0, line.indexOf('=')),
                        line -> line.substring(line.indexOf('=') + 1)));
        assertThat(seen).isEqualTo(expected);
        assertThat(System.getenv()).as("a host variable that must not reach the guest")
                .containsKey("SANDBOX4J_TCK_HOST_SENTINEL");
        assertThat(result.stdoutText()).doesNotContain("SANDBOX4J_TCK_HOST_SENTINEL");
    }

    @Test
    void theGuestsPasswdNamesOnlyRootAndTheSandboxUser() {
        ExecResult passwd = run("cat", "/etc/passwd");
        ExecResult group = run("cat", "/etc/group");

        assertThat(passwd.stdoutText().lines().map(line -> line.substring(0, line.indexOf(':'))))
                .containsExactly("root", "sandbox");
        assertThat(group.stdoutText().lines().map(line -> line.substring(0, line.indexOf(':'))))
                .containsExactly("root", "sandbox");
        assertThat(run("id", "-un").stdoutText()).isEqualTo("sandbox\n");
        assertThat(run("id", "-u").stdoutText()).isEqualTo(BwrapLayout.GUEST_UID + "\n");
    }

    @Test
    void theGuestCannotWriteTheSystemFileSystem() {
        ExecResult usr = run("touch", "/usr/sandbox4j-was-here");
        ExecResult etc = run("sh", "-c", "echo x > /etc/passwd");

        assertThat(usr.exitCode()).isNotZero();
        assertThat(usr.stderrText()).contains("Read-only file system");
        assertThat(etc.exitCode()).isNotZero();
        assertThat(Path.of("/usr/sandbox4j-was-here")).doesNotExist();
    }

    @Test
    void theGuestsHostnameIsSandbox4j() {
        assertThat(run("cat", "/proc/sys/kernel/hostname").stdoutText()).isEqualTo("sandbox4j\n");
        assertThat(run("uname", "-n").stdoutText()).isEqualTo("sandbox4j\n");
    }

    @Test
    void theGuestCannotMakeANestedUserNamespace() {
        ExecResult nested = run("unshare", "-U", "true");

        assertThat(nested.exitCode()).as("unshare -U inside: %s", nested).isNotZero();
        assertThat(nested.stderrText()).contains("unshare");
    }

    @Test
    void theGuestHasNoCapabilitiesAndNoNewPrivileges() {
        String status = run("cat", "/proc/self/status").stdoutText();

        assertThat(status).containsPattern("CapEff:\\s+0000000000000000")
                .containsPattern("CapBnd:\\s+0000000000000000")
                .containsPattern("NoNewPrivs:\\s+1");
    }

    @Test
    void theGuestSeesNoNetworkDeviceButLoopback() {
        List<String> devices = run("cat", "/proc/net/dev").stdoutText().lines().skip(2)
                .map(line -> line.substring(0, line.indexOf(':')).strip()).toList();

        assertThat(devices).containsExactly("lo");
    }

    private static ExecResult run(String... argv) {
        return sandbox.exec(List.of(argv), WORK, TIMEOUT);
    }
}
