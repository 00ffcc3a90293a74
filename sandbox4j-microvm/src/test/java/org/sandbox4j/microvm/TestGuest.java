package org.sandbox4j.microvm;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxSpec;

/**
 * The guest the tests boot: {@code scripts/test.sh} installs QEMU, builds it and exports its
 * directory. A test that finds it missing fails with the reason (provisioning is part of the
 * build), never skips.
 */
final class TestGuest {

    static final String PROBLEM = "SANDBOX4J_MICROVM_PROBLEM";
    /** How long a test's command may run. */
    static final Duration TIMEOUT = Duration.ofSeconds(60);

    private TestGuest() {
    }

    static GuestImage image() {
        return GuestImage.installed().orElseThrow(() -> {
            String problem = System.getenv(PROBLEM);
            return new AssertionError(GuestImage.DIRECTORY_VARIABLE + " is not set, so the microVM guest is not "
                    + "provisioned: " + (problem == null || problem.isBlank()
                    ? "run the build through scripts/test.sh, which installs QEMU and builds the guest"
                    : "provisioning failed: " + problem));
        });
    }

    /** Runs {@code script} in {@code sandbox}'s work dir, asserting it exits 0; its result. */
    static ExecResult succeeded(Sandbox sandbox, String script) {
        ExecResult result = sandbox.exec(Command.shell(script), ExecOptions.in(SandboxSpec.DEFAULT_WORK_DIR, TIMEOUT));
        org.assertj.core.api.Assertions.assertThat(result.exitCode()).as(result.stderrText()).isZero();
        return result;
    }

    /** A builder on a fresh short state root (unix socket paths must stay short). */
    static MicroVmBackend.Builder builder() {
        return MicroVmBackend.builder().guest(image()).stateRoot(stateRoot());
    }

    /** Every user may enter it (not list it): as root, each QEMU runs as a uid of its own and makes its sockets below. */
    static Path stateRoot() {
        try {
            return Files.createTempDirectory(Path.of("/tmp"), "s4jvm",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx--x--x")));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
