package org.sandbox4j.docker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import com.github.dockerjava.api.command.InspectVolumeResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.SandboxTimeoutException;

/**
 * Retirement on Docker with runc: a timed-out command whose process group cannot be killed takes
 * its container out of service, the record of it a label any process reads, and the next
 * acquire, in this process or another, gets a fresh container. Two backend instances stand for
 * two processes: they share nothing but the engine.
 */
class DockerRetirementTest {

    private static final SandboxSpec SPEC = SandboxSpec.builder("retirement").build();
    private static DockerTarget target;
    private static Engine engine;

    @BeforeAll
    static void connect() {
        target = DockerTarget.dockerWith("runc");
        engine = Engine.connect(URI.create(TestEngines.dockerHost()), Duration.ofSeconds(5), Duration.ofSeconds(60));
    }

    @AfterAll
    static void close() {
        engine.close();
        target.close();
    }

    /**
     * The guest fills its process limit and keeps it full from a session of its own (out of reach
     * of the agent's process-group kill), so the second exec that would kill what the timed-out
     * command left cannot even start: the container is retired, and another process's acquire of
     * the same key replaces it. Through the agent and on the engine's path alike.
     */
    @ParameterizedTest(name = "guest agent {0}")
    @ValueSource(booleans = {true, false})
    void aCommandThatCannotBeKilledRetiresItsContainer(boolean guestAgent) {
        SandboxKey key = key("unkillable");
        DockerLimits limits = DockerLimits.DEFAULT.withProcesses(24);
        try (DockerBackend first = target.builder().limits(limits).guestAgent(guestAgent).build();
                DockerBackend second = target.builder().limits(limits).guestAgent(guestAgent).build()) {
            try {
                DockerSandbox sandbox = (DockerSandbox) first.acquire(key, SPEC);
                String workDir = SPEC.workDirIn(sandbox);
                sandbox.writeFile("kept.txt", "kept".getBytes(), workDir);
                String retiredId = sandbox.containerId();
                // In a session of its own, children that sleep and a parent that forks whenever a slot frees:
                // the limit stays full.
                String hog = String.join("\n", "import os, time", "if os.fork() == 0:", "  os.setsid()",
                        "  while True:", "    try:", "        if os.fork() == 0:", "            time.sleep(600)",
                        "            os._exit(0)", "    except OSError:", "        time.sleep(0.01)", "time.sleep(600)");
                assertThatThrownBy(() -> sandbox.exec(List.of("python3", "-c", hog), workDir, Duration.ofSeconds(3)))
                        .isInstanceOf(SandboxTimeoutException.class);

                assertThat(retirementRecords(retiredId)).as("the record names the retired container").hasSize(1);
                assertThat(retirementRecords(retiredId).get(0).getLabels())
                        .containsEntry(ContainerIdentity.LABEL_SCOPE, key.scope());
                assertThat(containerExists(retiredId)).as("the retired container is removed").isFalse();
                assertThatThrownBy(() -> sandbox.exec(List.of("true"), workDir, Duration.ofSeconds(10)))
                        .isInstanceOf(SandboxException.class).hasMessageContaining("acquire the sandbox again");

                // A fresh container, and a fresh work area: the tmpfs went with the retired one.
                DockerSandbox fresh = (DockerSandbox) second.acquire(key, SPEC);
                assertThat(fresh.containerId()).isNotEqualTo(retiredId);
                ExecResult read = fresh.exec(List.of("sh", "-c", "test -e \"$1\"/kept.txt && echo kept || echo fresh",
                        "probe", workDir), "/", Duration.ofSeconds(30));
                assertThat(read.stdoutText().strip()).as(read.exitCode() + ": " + read.stderrText()).isEqualTo("fresh");
            } finally {
                second.dispose(key);
            }
            assertThat(recordsOf(key)).as("a purge removes the record with the sandbox").isEmpty();
        }
    }

    /**
     * A container whose retirement was recorded but which could be neither renamed nor removed
     * (an engine that failed mid-way) is not adopted by anyone: the record is enough.
     */
    @Test
    void aRecordedRetirementIsHonouredWhenTheContainerIsStillThere() {
        SandboxKey key = key("recorded");
        try (DockerBackend first = target.builder().build(); DockerBackend second = target.builder().build()) {
            try {
                DockerSandbox sandbox = (DockerSandbox) first.acquire(key, SPEC);
                String retiredId = sandbox.containerId();
                assertThat(((DockerSandbox) second.acquire(key, SPEC)).containerId())
                        .as("positive control: without a record the container is adopted").isEqualTo(retiredId);
                // What retire() writes before its rename: the container's identity labels and its id.
                Map<String, String> labels = new HashMap<>(
                        engine.control().inspectContainerCmd(retiredId).exec().getConfig().getLabels());
                labels.put(ContainerIdentity.LABEL_RETIRED, retiredId);
                engine.control().createVolumeCmd().withName(sandbox.containerName() + "-retired-test")
                        .withLabels(labels).exec();

                DockerSandbox fresh = (DockerSandbox) second.acquire(key, SPEC);
                assertThat(fresh.containerId()).isNotEqualTo(retiredId);
                assertThat(containerExists(retiredId)).isFalse();
                assertThat(fresh.exec(List.of("true"), "/", Duration.ofSeconds(30)).exitCode()).isZero();
            } finally {
                second.dispose(key);
            }
            assertThat(recordsOf(key)).as("a purge removes the record with the sandbox").isEmpty();
        }
    }

    private static SandboxKey key(String thread) {
        return new SandboxKey("sandbox4j-retirement-test", thread + "-" + System.nanoTime(), "agent");
    }

    private static List<InspectVolumeResponse> retirementRecords(String containerId) {
        List<InspectVolumeResponse> volumes = engine.control().listVolumesCmd()
                .withFilter("label", List.of(ContainerIdentity.LABEL_RETIRED + "=" + containerId)).exec().getVolumes();
        return volumes == null ? List.of() : volumes;
    }

    private static List<InspectVolumeResponse> recordsOf(SandboxKey key) {
        List<InspectVolumeResponse> volumes = engine.control().listVolumesCmd()
                .withFilter("label", List.of(ContainerIdentity.LABEL_RETIRED,
                        ContainerIdentity.LABEL_SCOPE + "=" + ContainerIdentity.labelValue(key.scope()))).exec()
                .getVolumes();
        return volumes == null ? List.of() : volumes;
    }

    private static boolean containerExists(String id) {
        return engine.control().listContainersCmd().withShowAll(true).withIdFilter(List.of(id)).exec().stream()
                .anyMatch(container -> container.getId().equals(id));
    }
}
