package org.sandbox4j.microvm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.SandboxTimeoutException;
import org.sandbox4j.core.spi.TreeRemoval;

/**
 * The guest agent keeps empty per-exec cgroups for later execs instead of making and removing one
 * per command: a kept cgroup must never be one another exec's leftovers still live in, so that
 * killing a command's tree kills nothing of any other command, and kept ones must not pile up.
 */
class GuestExecCgroupTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private final Path stateRoot = TestGuest.stateRoot();
    private final MicroVmBackend backend = MicroVmBackend.builder().guest(TestGuest.image()).stateRoot(stateRoot)
            .build();

    @AfterEach
    void closeBackend() throws IOException {
        backend.close();
        TreeRemoval.remove(stateRoot, TreeRemoval.Mode.PROCESSES_STOPPED, TreeRemoval.DEFAULT_DEADLINE);
    }

    private static ExecResult run(Sandbox sandbox, String script, Duration timeout) {
        return sandbox.exec(Command.shell(script), ExecOptions.in(SandboxSpec.DEFAULT_WORK_DIR, timeout));
    }

    private static String cgroupOf(Sandbox sandbox) {
        ExecResult result = run(sandbox, "cat /proc/self/cgroup", TIMEOUT);
        assertThat(result.exitCode()).as(result.stderrText()).isZero();
        return result.stdoutText().strip();
    }

    @Test
    void aCgroupWithALeftoverIsNeverGivenToTheNextCommand() {
        Sandbox sandbox = backend.acquire(new SandboxKey("cgroup-test", "leftover", "agent"),
                SandboxSpec.builder("python").build());
        ExecResult leaving = run(sandbox, "setsid sleep 300 </dev/null >/dev/null 2>&1 & echo $!; cat /proc/self/cgroup",
                TIMEOUT);
        assertThat(leaving.exitCode()).as(leaving.stderrText()).isZero();
        String leftoverPid = leaving.stdoutText().lines().findFirst().orElseThrow();
        String leftCgroup = leaving.stdoutText().lines().skip(1).findFirst().orElseThrow();

        // Every later command runs elsewhere, and killing one (its timeout) leaves the leftover alive.
        for (int i = 0; i < 3; i++) {
            assertThat(cgroupOf(sandbox)).isNotEqualTo(leftCgroup);
        }
        assertThatThrownBy(() -> run(sandbox, "sleep 300", Duration.ofSeconds(2)))
                .isInstanceOf(SandboxTimeoutException.class);
        ExecResult alive = run(sandbox, "kill -0 " + leftoverPid + " && grep -qx '" + leftCgroup
                + "' /proc/" + leftoverPid + "/cgroup", TIMEOUT);
        assertThat(alive.exitCode()).as("the leftover still runs in its own cgroup: " + alive.stderrText()).isZero();

        // Once the leftover is gone, its cgroup goes at a later command's end.
        String leftDirectory = "/sys/fs/cgroup" + leftCgroup.substring(leftCgroup.indexOf("::") + 2);
        ExecResult ended = run(sandbox, "kill " + leftoverPid + "; while kill -0 " + leftoverPid
                + " 2>/dev/null; do sleep 0.1; done", TIMEOUT);
        assertThat(ended.exitCode()).as(ended.stderrText()).isZero();
        cgroupOf(sandbox);
        ExecResult removed = run(sandbox, "test ! -e " + leftDirectory, TIMEOUT);
        assertThat(removed.exitCode()).as(leftDirectory + " is removed").isZero();
    }

    @Test
    void keptCgroupsDoNotPileUp() {
        Sandbox sandbox = backend.acquire(new SandboxKey("cgroup-test", "many", "agent"),
                SandboxSpec.builder("python").build());
        String first = cgroupOf(sandbox);
        for (int i = 0; i < 20; i++) {
            cgroupOf(sandbox);
        }
        // The per-exec cgroups sit side by side under the agent's own: count them after 21 commands.
        String parent = "/sys/fs/cgroup" + first.substring(first.indexOf("::") + 2, first.lastIndexOf('/'));
        ExecResult listed = run(sandbox, "find " + parent + " -mindepth 1 -maxdepth 1 -type d | wc -l", TIMEOUT);
        assertThat(listed.exitCode()).as(listed.stderrText()).isZero();
        assertThat(Integer.parseInt(listed.stdoutText().strip())).isBetween(1, 5);
    }
}
