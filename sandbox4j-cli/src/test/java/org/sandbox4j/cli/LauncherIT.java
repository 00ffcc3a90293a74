package org.sandbox4j.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sandbox4j.microvm.GuestImage;

/**
 * The README's first command, through the real {@code ./sandbox4j} launcher, against the jar the
 * {@code package} phase just built: it must find that jar fresh (no rebuild), run it and print 45.
 */
class LauncherIT {

    /**
     * The README's first command, with no {@code --floor}: on a host where QEMU and the guest are
     * provisioned (scripts/test.sh makes this one such a host), it runs in a microVM, which meets the
     * default floor.
     */
    @Test
    void theReadmesFirstCommandPrints45() {
        Path launcher = launcher();
        String guest = System.getenv(GuestImage.DIRECTORY_VARIABLE);
        assertThat(guest).as(GuestImage.DIRECTORY_VARIABLE + ": scripts/test.sh provisions the microVM guest").isNotBlank();
        try (CliProcess cli = CliProcess.fresh().env(GuestImage.DIRECTORY_VARIABLE, guest)) {
            CliProcess.Result result = cli.runProgram(List.of(launcher.toString(), "-v", "run", "-e",
                    "print(sum(range(10)))"), new byte[0]);
            assertThat(result.exitCode()).as(result.toString()).isZero();
            assertThat(result.stdout()).isEqualTo("45\n");
            assertThat(result.stderr()).as("the jar was fresh, so nothing was built").doesNotContain("building");
            assertThat(result.stderr()).as("it ran in a microVM at the default floor").contains("backend microvm");
        }
    }

    /**
     * Under the C locale the JVM would encode file names as ASCII and could not open a shared file
     * named in another script; the launcher gives it C.UTF-8, so the name reaches the file. The name
     * is made and passed by bash from octal escapes: this test's own JVM may run under C as well.
     */
    @Test
    void aNonAsciiFileNameOpensUnderTheCLocale(@TempDir Path work) {
        String script = String.join("\n",
                "cd \"$1\"",
                "name=\"$(printf 'donn\\303\\251es-\\346\\227\\245.txt')\"",
                "printf 'contenu\\n' > \"$PWD/$name\"",
                "exec \"$0\" run --backend bubblewrap --floor container --file \"d.txt=$PWD/$name\" \\",
                "    -e \"print(open('d.txt').read(), end='')\"");
        try (CliProcess cli = CliProcess.fresh().env("LC_ALL", "C").env("LANG", "C")) {
            CliProcess.Result result = cli.runProgram(List.of("bash", "-c", script, launcher().toString(),
                    work.toString()), new byte[0]);
            assertThat(result.exitCode()).as(result.toString()).isZero();
            assertThat(result.stdout()).isEqualTo("contenu\n");
        }
    }

    private static Path launcher() {
        return Launcher.path();
    }
}
