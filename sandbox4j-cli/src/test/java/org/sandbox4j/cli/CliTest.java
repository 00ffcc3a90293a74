package org.sandbox4j.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sandbox4j.core.spi.Json;
import org.sandbox4j.testkit.tck.LoopbackHttpServer;

/** The command driven as a user drives it: a separate JVM per invocation, real bubblewrap sandboxes. */
class CliTest {

    private static final String CONTAINER = "--floor=container";

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

    private static CliProcess.Result run(String... args) {
        return cli.run(args);
    }

    @Test
    void versionNamesTheBuild() {
        CliProcess.Result result = run("--version");
        assertThat(result.exitCode()).as(result.toString()).isZero();
        assertThat(result.stdout()).startsWith("sandbox4j " + Version.number());
    }

    @Test
    void theDefaultFloorRefusesBubblewrapAndNamesTheFix() {
        CliProcess.Result result = run("run", "-e", "print(1)");
        assertThat(result.exitCode()).as(result.toString()).isEqualTo(ExitCodes.REFUSED);
        assertThat(result.stdout()).isEmpty();
        assertThat(result.stderr()).startsWith("sandbox4j: refused: backend 'bubblewrap'")
                .contains("below the floor 'microvm'", "--floor container", "SANDBOX4J_FLOOR=container",
                        "untrusted code");
    }

    @Test
    void codeFromMinusEPrintsItsAnswer() {
        CliProcess.Result result = run("run", CONTAINER, "-e", "print(sum(range(10)))");
        assertThat(result.exitCode()).as(result.toString()).isZero();
        assertThat(result.stdout()).isEqualTo("45\n");
        assertThat(result.stderr()).isEmpty();
    }

    @Test
    void theProgramsStreamsAndExitCodeAreItsOwn() {
        CliProcess.Result result = run("run", CONTAINER, "-e",
                "import sys\nprint('to stdout')\nprint('to stderr', file=sys.stderr)\nsys.exit(7)");
        assertThat(result.exitCode()).as(result.toString()).isEqualTo(7);
        assertThat(result.stdout()).isEqualTo("to stdout\n");
        assertThat(result.stderr()).isEqualTo("to stderr\n");
    }

    @Test
    void standardInputIsTheProgram() {
        CliProcess.Result result = cli.run("print('from stdin', 6 * 7)".getBytes(StandardCharsets.UTF_8), "run",
                CONTAINER);
        assertThat(result.exitCode()).as(result.toString()).isZero();
        assertThat(result.stdout()).isEqualTo("from stdin 42\n");
    }

    @Test
    void aFileIsTheProgramAndItsExtensionItsLanguage() throws IOException {
        Path program = Files.writeString(work.resolve("hello.sh"), "echo \"hello from $0\" | sed 's/program.sh/bash/'\n");
        CliProcess.Result result = run("run", CONTAINER, program.toString());
        assertThat(result.exitCode()).as(result.toString()).isZero();
        assertThat(result.stdout()).startsWith("hello from").contains("bash");
    }

    @Test
    void aSharedFileIsReadByTheProgram() throws IOException {
        Path data = Files.writeString(work.resolve("numbers.txt"), "1 2 3 4\n");
        CliProcess.Result result = run("run", CONTAINER, "--file", "numbers.txt=" + data, "-e",
                "print(sum(int(n) for n in open('numbers.txt').read().split()))");
        assertThat(result.exitCode()).as(result.toString()).isZero();
        assertThat(result.stdout()).isEqualTo("10\n");
    }

    @Test
    void aDeclaredOutputLandsInTheOutDirectory() throws IOException {
        Path out = work.resolve("out");
        CliProcess.Result result = run("run", CONTAINER, "--out", out.toString(), "--output", "answer.txt",
                "--output", "never.txt", "-e", "open('answer.txt', 'w').write('forty-two')");
        assertThat(result.exitCode()).as(result.toString()).isZero();
        assertThat(Files.readString(out.resolve("answer.txt"))).isEqualTo("forty-two");
        assertThat(out.resolve("never.txt")).doesNotExist();
        assertThat(result.stderr()).contains("not written by the program, so not saved: never.txt");
    }

    @Test
    void anAllowedLoopbackServerIsReachedAndAnUnlistedOneIsRefused() throws IOException {
        Path client = Files.writeString(work.resolve("get.py"), String.join("\n",
                "import os, sys, urllib.request, urllib.error",
                "# The guest's loopback is its own: go through the proxy, which reaches the host's.",
                "os.environ['NO_PROXY'] = os.environ['no_proxy'] = ''",
                "try:",
                "    print(urllib.request.urlopen(open('url.txt').read().strip(), timeout=20).read().decode(), end='')",
                "except urllib.error.HTTPError as refused:",
                "    print('refused', refused.code)",
                "    sys.exit(1)",
                ""));
        try (LoopbackHttpServer allowed = LoopbackHttpServer.start("allowed");
                LoopbackHttpServer unlisted = LoopbackHttpServer.start("unlisted")) {
            String rule = "127.0.0.1:" + allowed.port();
            Path allowedUrl = Files.writeString(work.resolve("allowed-url"), allowed.url().toString());
            CliProcess.Result reached = run("run", CONTAINER, "--allow", rule, "--file", "url.txt=" + allowedUrl,
                    client.toString());
            assertThat(reached.exitCode()).as(reached.toString()).isZero();
            assertThat(reached.stdout()).isEqualTo(allowed.body());
            assertThat(allowed.requests()).isEqualTo(1);

            Path unlistedUrl = Files.writeString(work.resolve("unlisted-url"), unlisted.url().toString());
            CliProcess.Result refused = run("run", CONTAINER, "--allow", rule, "--file", "url.txt=" + unlistedUrl,
                    client.toString());
            assertThat(refused.exitCode()).as(refused.toString()).isEqualTo(1);
            assertThat(refused.stdout()).isEqualTo("refused 403\n");
            assertThat(unlisted.requests()).isZero();
        }
    }

    @Test
    void withoutAllowTheProgramHasNoNetwork() {
        CliProcess.Result result = run("run", CONTAINER, "-e",
                "import socket\ntry:\n    socket.create_connection(('127.0.0.1', 9), 2)\nexcept OSError:\n"
                        + "    print('no network')");
        assertThat(result.stdout()).as(result.toString()).isEqualTo("no network\n");
    }

    @Test
    void aTimeoutStopsTheProgramWith124() {
        CliProcess.Result result = run("run", CONTAINER, "--timeout", "2s", "-e", "import time\ntime.sleep(60)");
        assertThat(result.exitCode()).as(result.toString()).isEqualTo(ExitCodes.TIMED_OUT);
        assertThat(result.stderr()).contains("timed out after 2 s");
    }

    @Test
    void lsAndPurgeSeeSandboxesAcrossInvocations() {
        String scope = "cli-test-ls";
        CliProcess.Result first = run("run", CONTAINER, "--scope", scope, "--thread", "one", "-e",
                "open('/sandbox4j/work/kept.txt', 'w').write('kept')");
        assertThat(first.exitCode()).as(first.toString()).isZero();
        CliProcess.Result second = run("run", CONTAINER, "--scope", scope, "--thread", "two", "-e", "print(2)");
        assertThat(second.exitCode()).as(second.toString()).isZero();
        CliProcess.Result unnamed = run("run", CONTAINER, "--scope", scope, "-e", "print(3)");
        assertThat(unnamed.exitCode()).as(unnamed.toString()).isZero();

        // A named thread keeps its sandbox warm: exec finds what run left in the work dir.
        CliProcess.Result warm = run("exec", CONTAINER, "--scope", scope, "--thread", "one", "--", "cat", "kept.txt");
        assertThat(warm.exitCode()).as(warm.toString()).isZero();
        assertThat(warm.stdout()).isEqualTo("kept");

        CliProcess.Result all = run("ls", "--scope", scope, "--json");
        assertThat(all.exitCode()).as(all.toString()).isZero();
        List<Map<String, Object>> listed = Json.parseArrayOfObjects(all.stdout());
        assertThat(listed).as("the unnamed thread's sandbox was disposed of when its invocation ended").hasSize(2)
                .allSatisfy(row -> assertThat(row).containsEntry("backend", "bubblewrap").containsEntry("scope", scope)
                        .containsEntry("kind", "codeact"));

        CliProcess.Result table = run("ls", "--scope", scope, "--thread", "one");
        assertThat(table.stdout()).startsWith("BACKEND").contains("bubblewrap", " one ");
        assertThat(table.stdout().lines().count()).isEqualTo(2);

        CliProcess.Result purgeOne = run("purge", "--scope", scope, "--thread", "one");
        assertThat(purgeOne.stdout()).isEqualTo("removed 1 sandbox of scope '" + scope + "', thread 'one'\n");
        CliProcess.Result purgeRest = run("purge", "--scope", scope);
        assertThat(purgeRest.stdout()).isEqualTo("removed 1 sandbox of scope '" + scope + "'\n");
        assertThat(Json.parseArrayOfObjects(run("ls", "--scope", scope, "--json").stdout())).isEmpty();
    }

    @Test
    void execRunsAnArgvInTheWorkDirWithItsOwnExitCode() {
        CliProcess.Result result = cli.run("piped".getBytes(StandardCharsets.UTF_8), "exec", CONTAINER, "--",
                "sh", "-c", "pwd; cat; echo; echo oops >&2; exit 3");
        assertThat(result.exitCode()).as(result.toString()).isEqualTo(3);
        assertThat(result.stdout()).isEqualTo("/sandbox4j/work\npiped\n");
        assertThat(result.stderr()).isEqualTo("oops\n");
    }

    @Test
    void doctorJsonParsesAndNamesBubblewrapUsable() {
        CliProcess.Result result = run("doctor", "--json");
        assertThat(result.exitCode()).as(result.toString()).isZero();
        Map<String, Object> report = Json.parseObject(result.stdout());
        assertThat(report).containsEntry("floor", "microvm").containsEntry("backend", "bubblewrap")
                .containsEntry("runs", false);
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> backends = (List<Map<String, Object>>) report.get("backends");
        assertThat(backends).extracting(b -> b.get("name"))
                .containsExactly("bubblewrap", "process", "sbx", "microvm", "docker");
        Map<String, Object> bubblewrap = backends.get(0);
        assertThat(bubblewrap).containsEntry("usable", true).containsEntry("rung", "container")
                .containsEntry("meetsFloor", false);
        assertThat((String) bubblewrap.get("limitMechanism")).isIn("CGROUP_V2", "CGROUP_V1", "RLIMIT", "RLIMIT_PER_EXEC", "RLIMIT_PER_USER",
                "RLIMIT_DATA_ONLY");
        assertThat(bubblewrap.get("languages").toString()).contains("python");
        Map<String, Object> process = backends.get(1);
        assertThat(process).as("it builds, but no command can keep its program off the network")
                .containsEntry("usable", false);
        assertThat(process.get("fixes").toString()).contains("--backend bubblewrap");
        Map<String, Object> sbx = backends.get(2);
        assertThat(sbx).containsEntry("rung", "microvm").containsEntry("meetsFloor", true);
        if (sbx.get("usable").equals(false)) {
            assertThat(sbx.get("fixes").toString()).contains("sbx");
        }
    }

    @Test
    void doctorPrintsATableWithoutColourWhenPiped() {
        CliProcess.Result result = run("doctor");
        assertThat(result.exitCode()).as(result.toString()).isZero();
        assertThat(result.stdout()).startsWith("BACKEND").contains("bubblewrap  container", "--floor container")
                .doesNotContain("\u001b[");
    }

    @Test
    void usageErrorsExitWith2() {
        assertThat(run("run", "--no-such-flag").exitCode()).isEqualTo(ExitCodes.USAGE);
        CliProcess.Result both = run("run", CONTAINER, "-e", "print(1)", "program.py");
        assertThat(both.exitCode()).as(both.toString()).isEqualTo(ExitCodes.USAGE);
        assertThat(both.stderr()).contains("not both");
        assertThat(run("run", "--floor", "process", "-e", "print(1)").exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(run("run", CONTAINER, "--allow", "http://bad/", "-e", "print(1)").exitCode())
                .isEqualTo(ExitCodes.USAGE);
        CliProcess.Result open = run("run", CONTAINER, "--no-network", "unrestricted", "-e", "print(1)");
        assertThat(open.exitCode()).as(open.toString()).isEqualTo(ExitCodes.USAGE);
        assertThat(open.stderr()).contains("closed or deny-all");
        assertThat(run("frobnicate").exitCode()).isEqualTo(ExitCodes.USAGE);
    }

    @Test
    void noNetworkDenyAllReachesTheSpecAndBubblewrapWhichIsClosedRefusesIt() {
        // bubblewrap enforces closed, not deny-all: the mode asked for is refused, never swapped for the other.
        CliProcess.Result denyAll = run("run", CONTAINER, "--no-network", "deny-all", "-e", "print(1)");
        assertThat(denyAll.exitCode()).as(denyAll.toString()).isEqualTo(ExitCodes.REFUSED);
        assertThat(denyAll.stderr()).contains("deny-all");
        CliProcess.Result closed = run("run", CONTAINER, "--no-network", "closed", "-e", "print('closed')");
        assertThat(closed.exitCode()).as(closed.toString()).isZero();
        assertThat(closed.stdout()).isEqualTo("closed\n");
    }

    @Test
    void aMissingBackendExitsWith4AndSaysHowToGetIt() {
        CliProcess.Result noSbx = new CliProcess(cli.stateDir(), cli.configHome()).env("PATH", "/nonexistent")
                .run("run", "--backend", "sbx", "-e", "print(1)");
        assertThat(noSbx.exitCode()).as(noSbx.toString()).isEqualTo(ExitCodes.UNAVAILABLE);
        assertThat(noSbx.stderr()).contains("'sbx' is not on PATH", "brew install docker/tap/sbx");
        CliProcess.Result noBwrap = new CliProcess(cli.stateDir(), cli.configHome()).env("PATH", "/nonexistent")
                .run("run", CONTAINER, "-e", "print(1)");
        assertThat(noBwrap.exitCode()).as(noBwrap.toString()).isEqualTo(ExitCodes.UNAVAILABLE);
        assertThat(noBwrap.stderr()).contains("'bwrap' is not on PATH", "apt-get install bubblewrap");
    }

    @Test
    void aWeakerBackendTheFloorRefusesExitsWith3() {
        CliProcess.Result result = run("run", "--backend", "bubblewrap", "--floor", "hardened_container", "-e",
                "print(1)");
        assertThat(result.exitCode()).as(result.toString()).isEqualTo(ExitCodes.REFUSED);
        assertThat(result.stdout()).isEmpty();
        assertThat(result.stderr()).contains("below the floor 'hardened_container'", "--floor container");
    }

    @Test
    void flagsBeatTheEnvironmentWhichBeatsTheConfigFile() throws IOException {
        Path config = Files.writeString(work.resolve("config.properties"), "floor=container\n");
        CliProcess fromFile = new CliProcess(cli.stateDir(), cli.configHome());
        CliProcess.Result file = fromFile.run("--config", config.toString(), "run", "-e", "print('file')");
        assertThat(file.exitCode()).as(file.toString()).isZero();
        assertThat(file.stdout()).isEqualTo("file\n");

        CliProcess envOverFile = new CliProcess(cli.stateDir(), cli.configHome()).env("SANDBOX4J_FLOOR", "microvm");
        CliProcess.Result env = envOverFile.run("--config", config.toString(), "run", "-e", "print('env')");
        assertThat(env.exitCode()).as(env.toString()).isEqualTo(ExitCodes.REFUSED);
        assertThat(env.stderr()).contains("(SANDBOX4J_FLOOR;");

        CliProcess.Result flag = envOverFile.run("--config", config.toString(), "run", CONTAINER, "-e", "print('flag')");
        assertThat(flag.stdout()).as(flag.toString()).isEqualTo("flag\n");

        Path typo = Files.writeString(work.resolve("typo.properties"), "flor=container\n");
        CliProcess.Result unknown = cli.run("--config", typo.toString(), "doctor");
        assertThat(unknown.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(unknown.stderr()).contains("unknown key(s) [flor]");
    }

    @Test
    void theDefaultConfigFileIsRead() throws IOException {
        try (CliProcess withDefault = CliProcess.fresh()) {
            Path file = withDefault.configHome().resolve("sandbox4j").resolve(Configuration.FILE_NAME);
            Files.createDirectories(file.getParent());
            Files.writeString(file, "floor=container\nscope=cli-test\n");
            CliProcess.Result result = withDefault.run("run", "-e", "print('configured')");
            assertThat(result.stdout()).as(result.toString()).isEqualTo("configured\n");
        }
    }
}
