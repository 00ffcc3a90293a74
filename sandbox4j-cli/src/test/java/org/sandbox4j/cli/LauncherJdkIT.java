package org.sandbox4j.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Which JDK {@code ./sandbox4j} runs, read from the JDKs' release files: fake JDKs whose
 * {@code bin/java} only writes down how it was started, so a JVM started to ask its version would
 * show as a second line.
 */
class LauncherJdkIT {

    private static final String RECORD_VARIABLE = "FAKE_JAVA_RECORD";

    @TempDir
    Path work;
    private Path jdks;
    private Path record;

    @BeforeEach
    void fakeJdks() {
        jdks = work.resolve("jvm");
        record = work.resolve("started");
        fakeJdk("jdk-11", "11.0.2");
        fakeJdk("jdk-21", "21.0.1");
        fakeJdk("jdk-99", "99.0.1");
        fakeJdk("no-release", null);
    }

    @Test
    void theNewestJdkInstalledRunsTheCommandWithoutBeingAsked() {
        CliProcess.Result result = launch("--version");
        assertThat(result.exitCode()).as(result.toString()).isZero();
        List<String> started = started();
        assertThat(started).as("one JVM: none was started to ask its version").hasSize(1);
        assertThat(started.get(0)).startsWith(jdks.resolve("jdk-99/bin/java") + " ")
                .contains(" -XX:TieredStopAtLevel=1 ", " -XX:+UseSerialGC ")
                .endsWith(" -jar " + Launcher.jar() + " --version")
                .as("a cache is made only from run or exec").doesNotContain("AOT");
    }

    @Test
    void sandbox4jJavaHomeThenJavaHomeOverrideTheChoice() {
        try (CliProcess cli = cli().env("SANDBOX4J_JAVA_HOME", jdks.resolve("jdk-21").toString())
                .env("JAVA_HOME", jdks.resolve("jdk-99").toString())) {
            assertThat(cli.runProgram(List.of(Launcher.path().toString(), "--version"), new byte[0]).exitCode()).isZero();
        }
        try (CliProcess cli = cli().env("JAVA_HOME", jdks.resolve("jdk-21").toString())) {
            assertThat(cli.runProgram(List.of(Launcher.path().toString(), "--version"), new byte[0]).exitCode()).isZero();
        }
        assertThat(started()).hasSize(2).allMatch(line -> line.startsWith(jdks.resolve("jdk-21/bin/java") + " "));
    }

    @Test
    void aJdkOlderThan17IsRefusedByItsReleaseFile() {
        try (CliProcess cli = cli().env("SANDBOX4J_JAVA_HOME", jdks.resolve("jdk-11").toString())) {
            CliProcess.Result result = cli.runProgram(List.of(Launcher.path().toString(), "--version"), new byte[0]);
            assertThat(result.exitCode()).as(result.toString()).isEqualTo(ExitCodes.UNAVAILABLE);
            assertThat(result.stderr()).contains("Java 17 or newer is needed; found '11.0.2'");
        }
        assertThat(record).doesNotExist();
    }

    @Test
    void theServerKeepsTheJvmsDefaults() {
        CliProcess.Result result = launch("mcp", "--backend", "bubblewrap");
        assertThat(result.exitCode()).as(result.toString()).isZero();
        assertThat(started()).singleElement().asString().startsWith(jdks.resolve("jdk-99/bin/java") + " -jar ")
                .doesNotContain("-XX:");
    }

    private CliProcess.Result launch(String... args) {
        try (CliProcess cli = cli()) {
            List<String> command = new java.util.ArrayList<>(List.of(Launcher.path().toString()));
            command.addAll(List.of(args));
            return cli.runProgram(command, new byte[0]);
        }
    }

    /** The launcher looks for JDKs in the fake directory only; no JAVA_HOME of this test's. */
    private CliProcess cli() {
        return CliProcess.fresh().env("SANDBOX4J_JDK_DIRS", jdks.toString()).env("JAVA_HOME", "")
                .env(RECORD_VARIABLE, record.toString());
    }

    private List<String> started() {
        try {
            return Files.exists(record) ? Files.readAllLines(record) : List.of();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void fakeJdk(String name, String version) {
        try {
            Path bin = Files.createDirectories(jdks.resolve(name).resolve("bin"));
            if (version != null) {
                Files.writeString(jdks.resolve(name).resolve("release"),
                        "IMPLEMENTOR=\"Fake\"\nJAVA_VERSION=\"" + version + "\"\nOS_NAME=\"Linux\"\n");
            }
            Path java = bin.resolve("java");
            Files.writeString(java, "#!/bin/sh\necho \"$0 $*\" >> \"$" + RECORD_VARIABLE + "\"\n");
            Files.setPosixFilePermissions(java, PosixFilePermissions.fromString("rwxr-xr-x"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
