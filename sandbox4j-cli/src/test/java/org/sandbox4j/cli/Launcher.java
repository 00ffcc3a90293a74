package org.sandbox4j.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;

/** The {@code ./sandbox4j} launcher and the jar the {@code package} phase built for it. */
final class Launcher {

    private Launcher() {
    }

    static Path jar() {
        Path jar = Path.of(System.getProperty("sandbox4j.cli.jar", "target/sandbox4j.jar")).toAbsolutePath();
        assertThat(jar).as("the runnable jar the package phase builds").exists();
        return jar;
    }

    static Path path() {
        Path launcher = jar().getParent().getParent().getParent().resolve("sandbox4j");
        assertThat(Files.isExecutable(launcher)).as(launcher + " is executable").isTrue();
        return launcher;
    }
}
