package org.sandbox4j.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxSpec;

/**
 * A JVM that is PID 1 (a container started without an init, the usual way to deploy one) reaps
 * only the children it started itself, so anything a launch orphans becomes its zombie for good.
 * Each bwrap launch runs in a PID namespace of its own whose init reaps everything below it, so
 * 60 execs — each leaving a background child behind — leave no zombie at all. (Before, every exec
 * left bwrap's own pid 1: 61 zombies after 60 execs.) A child JVM is made PID 1 of a PID namespace
 * with {@code unshare --pid --fork --mount-proc}; needs root.
 */
@EnabledOnOs(OS.LINUX)
class BubblewrapAsPidOneTest {

    static final int EXECS = 60;
    private Path stateRoot;

    @AfterEach
    void cleanUp() {
        if (stateRoot != null) {
            LocalStore.deleteTree(stateRoot);
        }
    }

    @Test
    void sixtyExecsLeaveNoZombieForAJvmThatIsPidOne() throws Exception {
        assumeTrue(HostUser.current().isRoot(), "unshare --pid needs root here");
        stateRoot = Files.createTempDirectory("s4jp");
        String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        Process child = new ProcessBuilder("unshare", "--pid", "--fork", "--mount-proc", "--",
                Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp", classPath,
                PidOne.class.getName(), stateRoot.toString()).redirectErrorStream(true).start();
        String printed = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(child.waitFor(5, TimeUnit.MINUTES)).as(printed).isTrue();

        assertThat(printed).as("the PID-1 JVM's report").contains("PID 1", "EXECS " + EXECS).contains("ZOMBIES 0\n");
        assertThat(child.exitValue()).as(printed).isZero();
    }

    /** Run as PID 1 of a PID namespace: {@value BubblewrapAsPidOneTest#EXECS} execs, then counts its zombies. */
    public static final class PidOne {
        public static void main(String[] args) throws Exception {
            System.out.println(ProcessHandle.current().pid() == 1 ? "PID 1" : "not PID 1");
            SandboxSpec spec = SandboxSpec.builder("pid-one").build();
            SandboxKey key = new SandboxKey("pid-one", "thread", "agent");
            int ran = 0;
            try (BubblewrapBackend backend = BubblewrapBackend.builder().stateRoot(Path.of(args[0])).build()) {
                Sandbox sandbox = backend.acquire(key, spec);
                for (int i = 0; i < EXECS; i++) {
                    if (sandbox.exec(List.of("sh", "-c", "sleep 0.01 >/dev/null 2>&1 &"), spec.workDirIn(sandbox),
                            Duration.ofSeconds(30)).exitCode() == 0) {
                        ran++;
                    }
                }
                Thread.sleep(500);
                System.out.println("EXECS " + ran);
                System.out.println("ZOMBIES " + zombies());
                backend.dispose(key);
            }
            System.out.flush();
            System.exit(0);
        }

        private static int zombies() throws IOException {
            int count = 0;
            try (DirectoryStream<Path> all = Files.newDirectoryStream(Path.of("/proc"),
                    path -> path.getFileName().toString().chars().allMatch(Character::isDigit))) {
                for (Path process : all) {
                    try {
                        if (Files.readAllLines(process.resolve("status")).stream()
                                .anyMatch(line -> line.startsWith("State:") && line.contains("Z"))) {
                            count++;
                        }
                    } catch (IOException gone) {
                        // Ended meanwhile.
                    }
                }
            }
            return count;
        }
    }
}
