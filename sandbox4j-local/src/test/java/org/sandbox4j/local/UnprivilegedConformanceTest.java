package org.sandbox4j.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The whole TCK against {@link BubblewrapBackend} and {@link ProcessBackend} as an unprivileged
 * user: a child JVM started
 * with {@code setpriv} as uid/gid 65534, over a copy of this test's class path that user can
 * read. Unprivileged, the backend has no writable cgroup here, so this also proves the rlimit
 * fallback contains a fork bomb. Runs when the build runs as root (CI does); a build that is
 * not root already ran {@link BubblewrapConformanceTest} unprivileged.
 */
class UnprivilegedConformanceTest {

    private static final String NOBODY = "65534";
    private static final long CHILD_BOUND_MINUTES = 15;

    private Path scratch;

    @AfterEach
    void cleanUp() {
        if (scratch != null) {
            LocalStore.deleteTree(scratch);
        }
    }

    @Test
    void everyDeclaredSuitePassesForAnUnprivilegedUser() throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")), "the build is not root: "
                + "BubblewrapConformanceTest already ran the TCK unprivileged");
        // Short: the egress proxy's unix socket lives under the state root, and such paths stop at 108 bytes.
        scratch = Files.createTempDirectory("s4ju");
        Files.setPosixFilePermissions(scratch, PosixFilePermissions.fromString("rwxr-xr-x"));
        List<String> classPath = copyClassPath(scratch.resolve("cp"));
        Path stateRoot = Files.createDirectory(scratch.resolve("s"));
        chownNobody(stateRoot);
        Path output = scratch.resolve("out.txt");

        List<String> command = new ArrayList<>(List.of("setpriv", "--reuid", NOBODY, "--regid", NOBODY,
                "--clear-groups", "--", Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", String.join(File.pathSeparator, classPath), ConformanceMain.class.getName(),
                stateRoot.resolve("r").toString()));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(output.toFile());
        builder.environment().clear();
        builder.environment().put("PATH", "/usr/bin:/bin:/usr/sbin:/sbin");
        builder.environment().put("HOME", stateRoot.toString());
        // The JVM encodes arguments in its platform encoding: UTF-8, as on any modern host.
        builder.environment().put("LANG", "C.UTF-8");
        builder.environment().put("SANDBOX4J_TCK_HOST_SENTINEL", System.getenv()
                .getOrDefault("SANDBOX4J_TCK_HOST_SENTINEL", "tck-host-sentinel-unprivileged"));
        Process child = builder.start();
        boolean ended = child.waitFor(CHILD_BOUND_MINUTES, TimeUnit.MINUTES);
        if (!ended) {
            child.destroyForcibly();
        }
        String printed = Files.readString(output, StandardCharsets.UTF_8);
        assertThat(ended).as("the unprivileged TCK run ended within %d minutes:%n%s", CHILD_BOUND_MINUTES, printed)
                .isTrue();
        assertThat(printed).as("the unprivileged run").contains("LIMITS RLIMIT");
        assertThat(child.exitValue()).as("exit of the unprivileged TCK run:%n%s", printed).isZero();
        assertThat(printed).contains("PASS bubblewrap ISOLATION/a-fork-bomb-is-contained",
                "PASS bubblewrap EGRESS_ALLOWLIST/", "PASS bubblewrap EXEC/", "PASS bubblewrap LIFECYCLE/",
                "PASS process EXEC/a-timeout-kills-the-whole-tree", "PASS process LIFECYCLE/",
                "PASS process RECLAIM/a-guest-refusal-is-a-reason").doesNotContain("FAIL ", "SKIP ");
    }

    /** Copies every class path entry where uid 65534 can read it (root's Maven repository is private). */
    private static List<String> copyClassPath(Path target) throws IOException {
        String path = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> copied = new ArrayList<>();
        int index = 0;
        for (String entry : path.split(File.pathSeparator)) {
            Path source = Path.of(entry);
            if (!Files.exists(source)) {
                continue;
            }
            Path destination = target.resolve(index++ + "-" + source.getFileName());
            copyTree(source, destination);
            copied.add(destination.toString());
        }
        return copied;
    }

    private static void copyTree(Path source, Path destination) throws IOException {
        try (var walk = Files.walk(source)) {
            for (Path from : (Iterable<Path>) walk::iterator) {
                Path to = destination.resolve(source.relativize(from).toString());
                if (Files.isDirectory(from)) {
                    Files.createDirectories(to);
                    Files.setPosixFilePermissions(to, PosixFilePermissions.fromString("rwxr-xr-x"));
                } else {
                    Files.createDirectories(to.getParent());
                    Files.copy(from, to);
                    Files.setPosixFilePermissions(to, PosixFilePermissions.fromString("rw-r--r--"));
                }
            }
        }
    }

    private static void chownNobody(Path directory) throws IOException, InterruptedException {
        Process chown = new ProcessBuilder("chown", NOBODY + ":" + NOBODY, directory.toString()).inheritIO().start();
        assertThat(chown.waitFor()).as("chown of the unprivileged state root").isZero();
    }
}
