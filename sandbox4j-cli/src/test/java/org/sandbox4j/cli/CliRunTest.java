package org.sandbox4j.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sandbox4j.core.spi.Json;

/**
 * {@code run} as a shell user expects it: output as it arrives, standard input and arguments
 * passed on, Ctrl-C that cleans up, short usage errors, and limits the user can name. A separate
 * JVM per invocation, real bubblewrap sandboxes.
 */
class CliRunTest {

    private static final String CONTAINER = "--floor=container";
    /** Long enough for a cold JVM and a sandbox on a loaded two-core machine to print a first line. */
    private static final Duration FIRST_LINE = Duration.ofSeconds(60);
    /** How long the streaming program sleeps after its first line. */
    private static final Duration PAUSE = Duration.ofSeconds(3);

    /** 128 + SIGTERM: how a shell reports a command the signal ended (the JVM's own exit on it). */
    private static final int TERMINATED = 143;

    private static CliProcess cli;

    @TempDir
    Path work;

    @BeforeAll
    static void start() {
        cli = CliProcess.fresh();
    }

    @AfterAll
    static void purgeWhatIsLeft() {
        cli.close();
    }

    @Test
    void outputArrivesAsTheProgramPrintsIt() {
        try (CliProcess.Running running = cli.launch("run", CONTAINER, "-e",
                "import sys, time\nprint('first', flush=True)\nprint('on stderr', file=sys.stderr, flush=True)\n"
                        + "time.sleep(" + PAUSE.toSeconds() + ")\nprint('second')")) {
            CliProcess.Running.Line first = running.nextLine(FIRST_LINE);
            assertThat(first.text()).isEqualTo("first");
            assertThat(running.isAlive()).as("the first line came while the program still ran").isTrue();
            CliProcess.Finished finished = running.finish();
            assertThat(finished.result().exitCode()).as(finished.result().toString()).isZero();
            assertThat(finished.result().stdout()).as("each line once, not again at the end")
                    .isEqualTo("first\nsecond\n");
            assertThat(finished.result().stderr()).isEqualTo("on stderr\n");
            // Generous: the program slept 3 s after its first line; a buffered run delivers it at the exit.
            assertThat(Duration.ofNanos(finished.endedNanos() - first.arrivedNanos()))
                    .isGreaterThan(PAUSE.dividedBy(2));
        }
    }

    @Test
    void whatWasPrintedBeforeATimeoutIsKept() {
        CliProcess.Result result = cli.run("run", CONTAINER, "--timeout", "2s", "-e",
                "import time\nprint('before', flush=True)\ntime.sleep(60)");
        assertThat(result.exitCode()).as(result.toString()).isEqualTo(ExitCodes.TIMED_OUT);
        assertThat(result.stdout()).isEqualTo("before\n");
        assertThat(result.stderr()).contains("timed out after 2 s", "--timeout");
    }

    @Test
    void standardInputReachesTheProgram() {
        CliProcess.Result result = cli.run("alice\n".getBytes(StandardCharsets.UTF_8), "run", CONTAINER, "-e",
                "print('hello', input())");
        assertThat(result.exitCode()).as(result.toString()).isZero();
        assertThat(result.stdout()).isEqualTo("hello alice\n");
    }

    @Test
    void argumentsAfterTheProgramAreItsOwn() throws IOException {
        Path program = Files.writeString(work.resolve("args.py"), "import sys\nprint(sys.argv[1:])\n");
        CliProcess.Result file = cli.run("run", CONTAINER, program.toString(), "--", "foo", "--bar");
        assertThat(file.exitCode()).as(file.toString()).isZero();
        assertThat(file.stdout()).isEqualTo("['foo', '--bar']\n");

        CliProcess.Result withoutSeparator = cli.run("run", CONTAINER, program.toString(), "one", "--timeout", "1s");
        assertThat(withoutSeparator.stdout()).as("options end at FILE: the rest is the program's")
                .as(withoutSeparator.toString()).isEqualTo("['one', '--timeout', '1s']\n");

        CliProcess.Result code = cli.run("run", CONTAINER, "-e", "import sys\nprint(sys.argv[1:])", "--", "a", "b c");
        assertThat(code.exitCode()).as(code.toString()).isZero();
        assertThat(code.stdout()).isEqualTo("['a', 'b c']\n");
    }

    @Test
    void ctrlCDisposesOfTheSandboxKeepsWhatWasPrintedAndExits130() {
        String scope = "cli-run-interrupted";
        try (CliProcess.Running running = cli.launch("run", CONTAINER, "--scope", scope, "-e",
                "import time\nprint('started', flush=True)\ntime.sleep(120)")) {
            assertThat(running.nextLine(FIRST_LINE).text()).isEqualTo("started");
            CliProcess.Result alive = cli.run("ls", "--scope", scope, "--json");
            assertThat(Json.parseArrayOfObjects(alive.stdout())).as("the sandbox exists while it runs: " + alive)
                    .hasSize(1);
            running.signal("INT");
            CliProcess.Result result = running.finish().result();
            assertThat(result.exitCode()).as(result.toString()).isEqualTo(ExitCodes.INTERRUPTED);
            assertThat(result.stdout()).isEqualTo("started\n");
            assertInterrupted(result);
        }
        CliProcess.Result listed = cli.run("ls", "--scope", scope, "--json");
        assertThat(listed.exitCode()).as(listed.toString()).isZero();
        List<Map<String, Object>> left = Json.parseArrayOfObjects(listed.stdout());
        assertThat(left).as("the interrupted invocation's sandbox was disposed of").isEmpty();
    }

    @Test
    void sigtermEndsExecTheSameWayWith143() {
        String scope = "cli-exec-terminated";
        try (CliProcess.Running running = cli.launch("exec", CONTAINER, "--scope", scope, "--", "sh", "-c",
                "echo started; sleep 120")) {
            assertThat(running.nextLine(FIRST_LINE).text()).isEqualTo("started");
            running.signal("TERM");
            CliProcess.Result result = running.finish().result();
            assertThat(result.exitCode()).as(result.toString()).isEqualTo(TERMINATED);
            assertThat(result.stdout()).isEqualTo("started\n");
            assertInterrupted(result);
        }
        CliProcess.Result listed = cli.run("ls", "--scope", scope, "--json");
        assertThat(Json.parseArrayOfObjects(listed.stdout())).as(listed.toString()).isEmpty();
    }

    /**
     * sandbox4j says one line, and nothing of what failed under it. The sandbox's own stderr may
     * carry a line of its launcher's, killed mid-flight (util-linux unshare's "sigprocmask unblock
     * failed"): that is the guest's stream, relayed as it is.
     */
    private static void assertInterrupted(CliProcess.Result result) {
        assertThat(result.stderr()).as(result.toString()).startsWith("sandbox4j: interrupted\n");
        assertThat(result.stderr().lines().filter(line -> line.startsWith(Console.PREFIX)))
                .as(result.toString()).containsExactly("sandbox4j: interrupted");
    }

    @Test
    void usageErrorsAreShortAndSuggestTheNearName() {
        CliProcess.Result option = cli.run("run", "--ot", "out", "-e", "print(1)");
        assertThat(option.exitCode()).as(option.toString()).isEqualTo(ExitCodes.USAGE);
        assertThat(option.stderr()).isEqualTo("sandbox4j: unknown option '--ot'\nsandbox4j: did you mean --out?\n"
                + "sandbox4j: see 'sandbox4j run --help'\n");
        CliProcess.Result command = cli.run("rnu", "-e", "print(1)");
        assertThat(command.exitCode()).as(command.toString()).isEqualTo(ExitCodes.USAGE);
        assertThat(command.stderr()).contains("unknown command 'rnu'", "did you mean run?", "see 'sandbox4j --help'")
                .doesNotContain("Usage:");
        CliProcess.Result tooLong = cli.run("run", CONTAINER, "--timeout", "48h", "-e", "print(1)");
        assertThat(tooLong.exitCode()).as("refused before running, not a tool failure: " + tooLong)
                .isEqualTo(ExitCodes.USAGE);
        assertThat(tooLong.stderr()).contains("at most 24h");
        CliProcess.Result missing = cli.run("run", "--timeout");
        assertThat(missing.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(missing.stderr().lines()).as(missing.toString()).hasSizeLessThanOrEqualTo(3);
    }

    @Test
    void languageAliasesChooseTheLanguage() {
        CliProcess.Result js = cli.run("run", CONTAINER, "--lang", "js", "-e", "console.log(6 * 7)");
        assertThat(js.exitCode()).as(js.toString()).isZero();
        assertThat(js.stdout()).isEqualTo("42\n");
        CliProcess.Result sh = cli.run("run", CONTAINER, "--lang", "sh", "-e", "echo \"$((6 * 7))\"");
        assertThat(sh.stdout()).as(sh.toString()).isEqualTo("42\n");
        CliProcess.Result unknown = cli.run("run", CONTAINER, "--lang", "rust", "-e", "fn main() {}");
        assertThat(unknown.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(unknown.stderr()).contains("unknown language 'rust'", "javascript", "js");
    }

    @Test
    void anOutThatIsARegularFileIsRefusedBeforeTheProgramRuns() throws IOException {
        Path file = Files.writeString(work.resolve("not-a-directory"), "kept");
        CliProcess.Result result = cli.run("run", CONTAINER, "--out", file.toString(), "-e", "print('ran')");
        assertThat(result.exitCode()).as(result.toString()).isEqualTo(ExitCodes.USAGE);
        assertThat(result.stdout()).as("nothing ran").isEmpty();
        assertThat(result.stderr()).contains("--out '" + file + "'", "not a directory");
        assertThat(Files.readString(file)).isEqualTo("kept");
    }

    @Test
    void aMemoryHogOverMemoryIsKilledAndTheMessageNamesTheFlag() {
        String hog = "x = bytearray(256 * 1024 * 1024)\nprint('allocated', len(x))";
        CliProcess.Result small = cli.run("run", CONTAINER, "--memory", "64m", "-e", hog);
        assertThat(small.exitCode()).as(small.toString()).isEqualTo(Failures.KILLED);
        assertThat(small.stdout()).isEmpty();
        assertThat(small.stderr()).contains("killed (exit 137)", "memory limit of 64 MiB", "--memory");

        CliProcess.Result enough = cli.run("run", CONTAINER, "--memory", "512m", "-e", hog);
        assertThat(enough.exitCode()).as(enough.toString()).isZero();
        assertThat(enough.stdout()).isEqualTo("allocated 268435456\n");
    }

    @Test
    void theProcessAndOutputLimitsReachTheSandbox() {
        String forks = "import subprocess\nprocs = [subprocess.Popen(['sleep', '1']) for _ in range(24)]\n"
                + "[p.wait() for p in procs]\nprint('forked', len(procs))";
        CliProcess.Result few = cli.run("run", CONTAINER, "--pids-limit", "8", "-e", forks);
        assertThat(few.exitCode()).as(few.toString()).isNotZero();
        assertThat(few.stderr()).contains("Resource temporarily unavailable");
        CliProcess.Result many = cli.run("run", CONTAINER, "--pids-limit", "64", "-e", forks);
        assertThat(many.stdout()).as(many.toString()).isEqualTo("forked 24\n");

        CliProcess.Result loud = cli.run("run", CONTAINER, "--max-output", "10k", "-e", "print('x' * 20000)");
        assertThat(loud.exitCode()).as(loud.toString()).isEqualTo(ExitCodes.FAILED);
        assertThat(loud.stdout().length()).isLessThanOrEqualTo(10 * 1024);
        assertThat(loud.stderr()).contains("more than 10240 bytes", "--max-output").doesNotContain("ExecOptions");

        CliProcess.Result badSize = cli.run("run", CONTAINER, "--memory", "lots", "-e", "print(1)");
        assertThat(badSize.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(badSize.stderr()).contains("--memory 'lots' is not a size");
    }

    @Test
    void theProcessBackendIsRefusedWhateverTheFloor() {
        for (String floor : List.of(CONTAINER, "--floor=os_process")) {
            CliProcess.Result result = cli.run("run", "--backend", "process", floor, "-e", "print(1)");
            assertThat(result.exitCode()).as(result.toString()).isEqualTo(ExitCodes.REFUSED);
            assertThat(result.stdout()).isEmpty();
            assertThat(result.stderr()).contains("backend 'process'", "network", "--backend bubblewrap")
                    .doesNotContain("pass --floor os_process");
        }
    }
}
