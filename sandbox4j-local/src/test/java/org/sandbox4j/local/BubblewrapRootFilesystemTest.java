package org.sandbox4j.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.Egress;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxEgressNotEnforced;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.SandboxImageNotUsable;

/**
 * A root file system the host names replaces the host's /usr: a tiny one holding only a shell (dash
 * and the two libraries it loads) serves the specs that name its image, hides the host's programs,
 * refuses other images, and — having neither socat nor python3 — refuses an allowlist at acquire.
 */
class BubblewrapRootFilesystemTest {

    private static final String IMAGE = "tiny-shell";
    private static final Duration BOUND = Duration.ofSeconds(30);
    private static final Path DASH = Path.of("/usr/bin/dash");
    private static final List<String> LIBRARIES = List.of("/lib/x86_64-linux-gnu/libc.so.6",
            "/lib64/ld-linux-x86-64.so.2");

    @TempDir
    Path temp;
    private Path rootfs;
    private Path state;

    @BeforeEach
    void buildTheTinyRoot() throws IOException {
        rootfs = Files.createDirectory(temp.resolve("rootfs"));
        state = Files.createDirectory(temp.resolve("state"));
        Files.createDirectories(rootfs.resolve("usr/bin"));
        Files.copy(DASH, rootfs.resolve("usr/bin/sh"));
        for (String library : LIBRARIES) {
            Path target = rootfs.resolve("usr" + library); // merged /usr: /lib/x → /usr/lib/x
            Files.createDirectories(target.getParent());
            Files.copy(Path.of(library), target);
        }
        for (String link : List.of("bin", "lib", "lib64")) {
            Files.createSymbolicLink(rootfs.resolve(link), Path.of("usr", link));
        }
    }

    private BubblewrapBackend backend() {
        return BubblewrapBackend.builder().stateRoot(state).rootFilesystem(rootfs, IMAGE).build();
    }

    @Test
    void theNamedImageRunsInTheTinyRootAndSeesNoHostProgram() {
        try (BubblewrapBackend backend = backend()) {
            SandboxSpec spec = SandboxSpec.builder("tiny").image(IMAGE).build();
            Sandbox sandbox = backend.acquire(new SandboxKey("rootfs", "t", "a"), spec);
            ExecResult result = sandbox.exec(Command.shell("for p in /usr/bin/python3 /usr/bin/bwrap /usr/bin/sh; do "
                    + "if test -e $p; then echo has $p; else echo no $p; fi; done"), ExecOptions.in(spec.workDir(),
                    BOUND));
            assertThat(result.stdoutText().lines()).containsExactly("no /usr/bin/python3", "no /usr/bin/bwrap",
                    "has /usr/bin/sh");
            assertThat(backend.diagnostics()).anySatisfy(line -> assertThat(line).contains("root file system"));
            backend.disposeScope("rootfs", "t");
        }
    }

    @Test
    void anotherImageIsRefused() {
        try (BubblewrapBackend backend = backend()) {
            assertThatThrownBy(() -> backend.acquire(new SandboxKey("rootfs", "t", "a"),
                    SandboxSpec.builder("tiny").image("python:3.12").build()))
                    .isInstanceOf(SandboxImageNotUsable.class).hasMessageContaining(IMAGE);
        }
    }

    @Test
    void anAllowlistIsRefusedWhenTheGuestHasNoBridge() throws IOException {
        try (BubblewrapBackend backend = backend()) {
            SandboxSpec spec = SandboxSpec.builder("tiny").image(IMAGE).egress(Egress.ALLOWLIST)
                    .egressAllow(List.of("example.com")).build();
            assertThatThrownBy(() -> backend.acquire(new SandboxKey("rootfs", "t", "a"), spec))
                    .isInstanceOf(SandboxEgressNotEnforced.class).hasMessageContaining("socat")
                    .hasMessageContaining("python3");
            assertThat(backend.diagnostics()).anySatisfy(line -> assertThat(line).contains("bridge")
                    .contains("none"));
            try (var made = Files.list(backend.stateDirectory())) {
                assertThat(made.filter(path -> path.getFileName().toString().startsWith("sbx-")))
                        .as("nothing was created for the refused spec").isEmpty();
            }
        }
    }
}
