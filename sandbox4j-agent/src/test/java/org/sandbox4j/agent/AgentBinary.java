package org.sandbox4j.agent;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.TimeUnit;

/**
 * The agent built from {@code src/main/c/s4j-agent.c} with this host's gcc, once per JVM, into the
 * module's {@code target} directory ({@code gcc -static -O2}).
 */
final class AgentBinary {

    private static final Path SOURCE = Path.of("src", "main", "c", "s4j-agent.c");
    private static final Path TARGET = Path.of("target", "s4j-agent");
    private static final long COMPILE_SECONDS = 120;
    private static Path built;

    private AgentBinary() {
    }

    /** The compiled agent; compiles it on first use. */
    static synchronized Path path() {
        if (built == null) {
            built = compile();
        }
        return built;
    }

    private static Path compile() {
        Path source = SOURCE.toAbsolutePath();
        Path target = TARGET.toAbsolutePath();
        try {
            Files.createDirectories(target.getParent());
            Path partial = Files.createTempFile(target.getParent(), "s4j-agent-", ".partial");
            Process gcc;
            try {
                gcc = new ProcessBuilder("gcc", "-static", "-O2", "-Wall", "-Wextra", "-Wno-unused-parameter", "-o",
                        partial.toString(), source.toString()).redirectErrorStream(true).start();
            } catch (IOException missing) {
                throw new IllegalStateException("building the guest agent needs gcc and a static libc on this host "
                        + "(Debian/Ubuntu: apt-get install gcc libc6-dev): " + missing.getMessage(), missing);
            }
            gcc.getOutputStream().close();
            String said = new String(gcc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!gcc.waitFor(COMPILE_SECONDS, TimeUnit.SECONDS) || gcc.exitValue() != 0) {
                gcc.destroyForcibly();
                throw new IllegalStateException("gcc could not build " + source + " (apt-get install gcc libc6-dev "
                        + "gives a static libc): " + said);
            }
            Files.move(partial, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            return target;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while building the guest agent", e);
        }
    }
}
