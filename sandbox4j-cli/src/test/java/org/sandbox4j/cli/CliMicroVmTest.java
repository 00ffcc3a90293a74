package org.sandbox4j.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxDisposed;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.spi.Json;
import org.sandbox4j.microvm.GuestImage;
import org.sandbox4j.microvm.MicroVmBackend;

/**
 * {@code ls} and {@code purge} with microVM guests another JVM owns (this test's): the command, a
 * JVM of its own, answers from the records under the state root alone, and ends what it purges.
 */
class CliMicroVmTest {

    private static final String SCOPE = "cli-test-microvm";

    @Test
    void lsAndPurgeSeeAndEndTheGuestsOfAnotherJvm() throws Exception {
        String guest = System.getenv(GuestImage.DIRECTORY_VARIABLE);
        assertThat(guest).as(GuestImage.DIRECTORY_VARIABLE + ": scripts/test.sh provisions the microVM guest")
                .isNotBlank();
        try (CliProcess cli = CliProcess.fresh().env(GuestImage.DIRECTORY_VARIABLE, guest)) {
            // Every user may pass through (not list) the state root: as root, each QEMU runs as a uid of its own.
            Files.setPosixFilePermissions(cli.stateDir(), PosixFilePermissions.fromString("rwx--x--x"));
            Path stateRoot = Files.createDirectory(cli.stateDir().resolve("microvm"),
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx--x--x")));
            try (MicroVmBackend owner = MicroVmBackend.builder().guest(GuestImage.at(Path.of(guest)))
                    .stateRoot(stateRoot).build()) {
                Sandbox one = owner.acquire(new SandboxKey(SCOPE, "one", "agent"), SandboxSpec.builder("codeact")
                        .build());
                owner.acquire(new SandboxKey(SCOPE, "two", "agent"), SandboxSpec.builder("codeact").build());

                CliProcess.Result all = cli.run("ls", "--scope", SCOPE, "--json");
                assertThat(all.exitCode()).as(all.toString()).isZero();
                List<Map<String, Object>> listed = Json.parseArrayOfObjects(all.stdout());
                assertThat(listed).hasSize(2).allSatisfy(row -> assertThat(row).containsEntry("backend", "microvm")
                        .containsEntry("scope", SCOPE).containsEntry("kind", "codeact"));
                assertThat(listed).allSatisfy(row -> assertThat(row.get("createdAt")).isNotNull());

                CliProcess.Result table = cli.run("ls", "--scope", SCOPE, "--thread", "one");
                assertThat(table.stdout()).startsWith("BACKEND").contains("microvm", " one ");
                assertThat(table.stdout().lines().count()).isEqualTo(2);

                CliProcess.Result purgeOne = cli.run("purge", "--scope", SCOPE, "--thread", "one");
                assertThat(purgeOne.stdout()).as(purgeOne.toString())
                        .isEqualTo("removed 1 sandbox of scope '" + SCOPE + "', thread 'one'\n");
                assertThatThrownBy(() -> one.exec(Command.argv("true"),
                        ExecOptions.in(SandboxSpec.DEFAULT_WORK_DIR, Duration.ofSeconds(30))))
                        .isInstanceOf(SandboxDisposed.class);

                CliProcess.Result purgeRest = cli.run("purge", "--scope", SCOPE);
                assertThat(purgeRest.stdout()).isEqualTo("removed 1 sandbox of scope '" + SCOPE + "'\n");
                assertThat(Json.parseArrayOfObjects(cli.run("ls", "--scope", SCOPE, "--json").stdout())).isEmpty();
            }
        }
    }
}
