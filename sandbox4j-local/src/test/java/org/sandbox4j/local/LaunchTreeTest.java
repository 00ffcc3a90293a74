package org.sandbox4j.local;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

/** A launch's tree is walked from the launch down, and finds what the JDK's host-wide walk finds. */
@EnabledOnOs(OS.LINUX)
class LaunchTreeTest {

    @Test
    void theWalkDownFindsTheWholeTreeAsTheJdkDoes() throws Exception {
        Process launch = new ProcessBuilder("sh", "-c", "sh -c 'sleep 100 & sleep 100 & wait' & sleep 100 & echo up; wait")
                .start();
        try {
            assertThat(new String(launch.getInputStream().readNBytes(3))).isEqualTo("up\n");
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (launch.descendants().count() < 4 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertThat(Launches.below(launch.toHandle())).hasSize(4)
                    .containsExactlyInAnyOrderElementsOf(launch.descendants().toList());
        } finally {
            launch.descendants().forEach(ProcessHandle::destroyForcibly);
            launch.destroyForcibly();
            launch.waitFor(10, TimeUnit.SECONDS);
        }
    }
}
