package org.sandbox4j.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sandbox4j.core.spi.Json;
import org.sandbox4j.docker.TestEngines;

/**
 * The docker backend through the command, as a user reaches it: a separate JVM per invocation,
 * {@code DOCKER_HOST} pointing at the test engine, real containers.
 */
class CliDockerTest {

    /** doctor against an engine that is not there answers within this, connect timeout included. */
    private static final Duration QUICK = Duration.ofSeconds(15);

    private static CliProcess cli;

    @TempDir
    Path work;

    @BeforeAll
    static void start() {
        cli = CliProcess.fresh().env("DOCKER_HOST", TestEngines.dockerHost());
    }

    @AfterAll
    static void cleanUp() {
        cli.close();
    }

    @Test
    void doctorShowsDockerUsableAtContainerWithTheTestEngineAndImage() {
        CliProcess.Result result = new CliProcess(cli.stateDir(), cli.configHome())
                .env("DOCKER_HOST", TestEngines.dockerHost())
                .env("SANDBOX4J_DOCKER_IMAGE", TestEngines.image())
                .env("SANDBOX4J_BACKEND", "docker")
                .run("doctor", "--json", "--floor", "container");
        assertThat(result.exitCode()).as(result.toString()).isZero();
        Map<String, Object> report = Json.parseObject(result.stdout());
        assertThat(report).containsEntry("backend", "docker").containsEntry("runs", true);
        Map<String, Object> docker = docker(report);
        assertThat(docker).as(result.toString()).containsEntry("usable", true).containsEntry("rung", "container")
                .containsEntry("meetsFloor", true);
        assertThat((List<?>) docker.get("missing")).isEmpty();
        assertThat(docker.get("details").toString()).contains("runtime: runc", TestEngines.image());
    }

    @Test
    void runscGivesHardenedContainer() {
        CliProcess.Result result = cli.run("doctor", "--json", "--image", TestEngines.image(), "--runtime", "runsc");
        assertThat(result.exitCode()).as(result.toString()).isZero();
        Map<String, Object> docker = docker(Json.parseObject(result.stdout()));
        assertThat(docker).as(result.toString()).containsEntry("usable", true)
                .containsEntry("rung", "hardened_container").containsEntry("meetsFloor", false);
    }

    @Test
    void anUnreachableEngineIsAnHonestRowQuickly() {
        String nowhere = "unix://" + work.resolve("no-engine.sock");
        long started = System.nanoTime();
        CliProcess.Result result = cli.run("doctor", "--json", "--docker-host", nowhere, "--image",
                TestEngines.image());
        Duration took = Duration.ofNanos(System.nanoTime() - started);
        assertThat(result.exitCode()).as(result.toString()).isZero();
        Map<String, Object> docker = docker(Json.parseObject(result.stdout()));
        assertThat(docker).as(result.toString()).containsEntry("usable", false).containsEntry("rung", null)
                .containsEntry("meetsFloor", null);
        assertThat(docker.get("missing").toString()).contains("a container engine answering at " + nowhere);
        assertThat(docker.get("fixes").toString()).contains("start a container engine", "DOCKER_HOST",
                "--docker-host");
        assertThat(took).isLessThan(QUICK);

        CliProcess.Result table = cli.run("doctor", "--docker-host", nowhere, "--image", TestEngines.image());
        assertThat(table.stdout()).as(table.toString()).contains("docker      unknown             no");
    }

    @Test
    void aMissingRuntimeOrImageSaysWhatTheEngineHasAndHowToGetIt() {
        Map<String, Object> runtime = docker(Json.parseObject(cli.run("doctor", "--json", "--image",
                TestEngines.image(), "--runtime", "no-such-runtime").stdout()));
        assertThat(runtime).containsEntry("usable", false);
        assertThat(runtime.get("fixes").toString()).contains("no runtime 'no-such-runtime'", "runc", "runsc");

        Map<String, Object> image = docker(Json.parseObject(cli.run("doctor", "--json", "--image",
                "localhost/sandbox4j-no-such-image:0").stdout()));
        assertThat(image).containsEntry("usable", false);
        assertThat(image.get("fixes").toString()).contains("docker load", "docker import");

        Map<String, Object> none = docker(Json.parseObject(cli.run("doctor", "--json").stdout()));
        assertThat(none.get("fixes").toString()).contains("--image IMAGE", "SANDBOX4J_DOCKER_IMAGE");
    }

    @Test
    void runPrintsItsAnswerInAContainer() {
        CliProcess.Result result = cli.run("run", "--backend", "docker", "--floor", "container", "--image",
                TestEngines.image(), "-e", "print(sum(range(10)))");
        assertThat(result.exitCode()).as(result.toString()).isZero();
        assertThat(result.stdout()).isEqualTo("45\n");
        assertThat(result.stderr()).isEmpty();
    }

    @Test
    void execRunsAnArgvInAContainer() {
        CliProcess.Result result = cli.run("exec", "--backend", "docker", "--floor", "container", "--image",
                TestEngines.image(), "--", "sh", "-c", "echo out; echo err >&2; exit 5");
        assertThat(result.exitCode()).as(result.toString()).isEqualTo(5);
        assertThat(result.stdout()).isEqualTo("out\n");
        assertThat(result.stderr()).isEqualTo("err\n");
    }

    @Test
    void theDefaultFloorRefusesDockerAtTheRungItsEngineConfirms() {
        CliProcess.Result result = cli.run("run", "--backend", "docker", "--image", TestEngines.image(), "-e",
                "print(1)");
        assertThat(result.exitCode()).as(result.toString()).isEqualTo(ExitCodes.REFUSED);
        assertThat(result.stderr()).contains("backend 'docker' isolates at 'container'", "below the floor 'microvm'",
                "--floor container");
    }

    @Test
    void runWithoutAnImageIsAUsageErrorSayingHowToGetOne() {
        CliProcess.Result result = cli.run("run", "--backend", "docker", "--floor", "container", "-e", "print(1)");
        assertThat(result.exitCode()).as(result.toString()).isEqualTo(ExitCodes.USAGE);
        assertThat(result.stderr()).contains("needs an image", "--image", "docker import");
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> docker(Map<String, Object> report) {
        return ((List<Map<String, Object>>) report.get("backends")).stream()
                .filter(backend -> "docker".equals(backend.get("name"))).findFirst().orElseThrow();
    }
}
