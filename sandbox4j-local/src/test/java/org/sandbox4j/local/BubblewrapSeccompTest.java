package org.sandbox4j.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxSpec;

/**
 * A seccomp filter given with {@code seccompFilter(path)} applies to every guest: the example
 * filter in {@code src/test/resources/seccomp/deny-example.c} (built here with gcc and libseccomp)
 * denies ptrace and keyctl with EPERM, and the guest sees exactly that while everything else works.
 * The same probe in a sandbox without the filter shows the calls are otherwise allowed.
 */
@EnabledOnOs(OS.LINUX)
class BubblewrapSeccompTest {

    private static final String WORK = SandboxSpec.DEFAULT_WORK_DIR;
    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final SandboxKey KEY = new SandboxKey("seccomp-scope", "seccomp-thread", "agent");
    private static final SandboxSpec SPEC = SandboxSpec.builder("seccomp").build();
    private static final String PROVISION_HINT = "scripts/test.sh must install gcc and libseccomp-dev "
            + "(apt-get install gcc libseccomp-dev) for the seccomp tests";
    /** Calls ptrace(PTRACE_TRACEME) and keyctl(KEYCTL_GET_KEYRING_ID, session keyring) by number. */
    private static final String PROBE = String.join("\n",
            "import ctypes, errno, os",
            "libc = ctypes.CDLL(None, use_errno=True)",
            "ptrace, keyctl = {'x86_64': (101, 250), 'aarch64': (117, 219)}[os.uname().machine]",
            "def call(number, *args):",
            "    ctypes.set_errno(0)",
            "    result = libc.syscall(ctypes.c_long(number), *[ctypes.c_long(a) for a in args])",
            "    return 'ok' if result >= 0 else errno.errorcode[ctypes.get_errno()]",
            "print('ptrace', call(ptrace, 0, 0, 0, 0))",
            "print('keyctl', call(keyctl, 0, -3, 0))");

    private static Path scratch;
    private static Path filter;
    private static BubblewrapBackend filtered;
    private static BubblewrapBackend unfiltered;

    @BeforeAll
    static void buildTheFilter() throws Exception {
        scratch = Files.createTempDirectory("s4j");
        filter = compileExampleFilter(scratch);
        filtered = BubblewrapBackend.builder().stateRoot(scratch.resolve("f")).seccompFilter(filter).build();
        unfiltered = BubblewrapBackend.builder().stateRoot(scratch.resolve("u")).build();
    }

    @AfterAll
    static void cleanUp() {
        for (BubblewrapBackend backend : new BubblewrapBackend[] {filtered, unfiltered}) {
            if (backend != null) {
                backend.dispose(KEY);
                backend.close();
            }
        }
        LocalStore.deleteTree(scratch);
    }

    @Test
    void theGuestRunsUnderTheFilter() {
        ExecResult status = filtered.acquire(KEY, SPEC).exec(List.of("cat", "/proc/self/status"), WORK, TIMEOUT);

        assertThat(status.stdoutText()).containsPattern("Seccomp:\\s+2\\n")
                .as("the host's filter and the built-in no-FIFO one").containsPattern("Seccomp_filters:\\s+2\\n");
        assertThat(unfiltered.acquire(KEY, SPEC).exec(List.of("cat", "/proc/self/status"), WORK, TIMEOUT)
                .stdoutText()).as("without the host's filter: the built-in one alone")
                .containsPattern("Seccomp:\\s+2\\n").containsPattern("Seccomp_filters:\\s+1\\n");
    }

    @Test
    void theDeniedCallsFailWithEpermUnderTheFilterAndNotWithoutIt() {
        ExecResult denied = filtered.acquire(KEY, SPEC).exec(List.of("python3", "-c", PROBE), WORK, TIMEOUT);
        ExecResult allowed = unfiltered.acquire(KEY, SPEC).exec(List.of("python3", "-c", PROBE), WORK, TIMEOUT);

        assertThat(denied.stdoutText()).as("under the filter: %s", denied).isEqualTo("ptrace EPERM\nkeyctl EPERM\n");
        assertThat(allowed.stdoutText()).as("without the filter: %s", allowed).contains("ptrace ok\n")
                .doesNotContain("keyctl EPERM");
    }

    @Test
    void everythingElseStillWorksUnderTheFilter() {
        Sandbox sandbox = filtered.acquire(KEY, SPEC);
        sandbox.writeFile("in.txt", "hello", WORK);

        ExecResult result = sandbox.exec(List.of("sh", "-c", "cat in.txt; echo; python3 -c 'print(6 * 7)'; "
                + "ls / | head -1; sleep 0.1 & wait"), WORK, TIMEOUT);

        assertThat(result.exitCode()).as("%s: %s", result, result.stderrText()).isZero();
        assertThat(result.stdoutText()).startsWith("hello\n42\n");
        assertThat(filtered.diagnostics()).anySatisfy(line -> assertThat(line).startsWith("seccomp: FIFOs cannot be made")
                .endsWith("and the host's filter " + filter));
    }

    @Test
    void theFiltersDescriptorDoesNotReachTheGuest() {
        ExecResult descriptors = filtered.acquire(KEY, SPEC).exec(List.of("sh", "-c", "ls /proc/$$/fd"), WORK,
                TIMEOUT);

        assertThat(descriptors.stdoutText().lines()).as("the guest shell's open descriptors")
                .containsExactlyInAnyOrder("0", "1", "2");
    }

    /** Builds deny-example.c with gcc and libseccomp and runs it; fails (not skips) when they are missing. */
    private static Path compileExampleFilter(Path directory) throws Exception {
        if (HostPrograms.find("gcc").isEmpty() || !Files.isRegularFile(Path.of("/usr/include/seccomp.h"))) {
            fail("gcc or /usr/include/seccomp.h is missing: " + PROVISION_HINT);
        }
        Path source = directory.resolve("deny-example.c");
        try (InputStream in = BubblewrapSeccompTest.class.getResourceAsStream("/seccomp/deny-example.c")) {
            assertThat(in).as("the example filter's source on the test class path").isNotNull();
            Files.write(source, in.readAllBytes());
        }
        Path program = directory.resolve("deny-example");
        Path bpf = directory.resolve("filter.bpf");
        run(List.of("gcc", "-O2", "-o", program.toString(), source.toString(), "-lseccomp"));
        run(List.of(program.toString(), bpf.toString()));
        assertThat(Files.size(bpf)).as("the exported BPF program").isPositive();
        return bpf;
    }

    private static void run(List<String> command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String said = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            fail(command + " did not finish");
        }
        if (process.exitValue() != 0) {
            fail(command + " exited " + process.exitValue() + ": " + said + "; " + PROVISION_HINT);
        }
    }
}
