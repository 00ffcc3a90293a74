package org.sandbox4j.core.spi;

import org.sandbox4j.core.SandboxFileException;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * A JVM started without a UTF-8 locale (a container image with no {@code LANG}: the POSIX locale)
 * cannot name non-ASCII files at all; every file method then says so with a typed error naming the
 * fix, never an unchecked {@code InvalidPathException}. Run in a child JVM, since the file-name
 * encoding is fixed when a JVM starts.
 */
@EnabledOnOs(OS.LINUX)
class WorkspaceFilesLocaleTest {

    private static final String MOUNT = "/sandbox4j";

    @TempDir
    Path workspace;

    @Test
    void underThePosixLocaleANonAsciiNameIsATypedRefusalThatNamesTheFix() throws Exception {
        Files.writeString(workspace.resolve("plain.txt"), "plain");

        List<String> printed = runUnderThePosixLocale(workspace);

        assertThat(printed).as("the child's file-name encoding").contains("encoding ANSI_X3.4-1968");
        for (String call : List.of("write", "stat", "read", "list", "remove")) {
            assertThat(printed).as(call).anySatisfy(line -> assertThat(line)
                    .startsWith(call + " " + SandboxFileException.class.getName())
                    .contains("LANG=C.UTF-8"));
        }
        assertThat(printed).as("positive control: an ASCII name still works").contains("read-ascii plain");
    }

    private static List<String> runUnderThePosixLocale(Path workspace) throws IOException, InterruptedException {
        List<String> command = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
                System.getProperty("java.class.path"), Child.class.getName(), workspace.toString());
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().keySet().removeIf(name -> name.startsWith("LC_") || name.equals("LANG")
                || name.equals("JAVA_TOOL_OPTIONS"));
        builder.environment().put("LC_ALL", "C");
        Process child = builder.start();
        child.getOutputStream().close();
        byte[] output = child.getInputStream().readNBytes(1 << 20);
        assertThat(child.waitFor(60, TimeUnit.SECONDS)).as("the child ended").isTrue();
        String text = new String(output, StandardCharsets.US_ASCII);
        assertThat(child.exitValue()).as(text).isZero();
        return List.of(text.split("\n"));
    }

    /** Calls every file method with a non-ASCII name and prints, in ASCII, what each raised. */
    static final class Child {

        public static void main(String[] arguments) {
            WorkspaceFiles files = new WorkspaceFiles(Path.of(arguments[0]), MOUNT, "locale-test");
            // Escapes only: this source must not depend on the compiler's encoding.
            String name = "caf\u00e9-\u00fc.txt";
            List<String> lines = new ArrayList<>();
            lines.add("encoding " + System.getProperty("sun.jnu.encoding"));
            lines.add(outcome("write", () -> files.writeFile(name, new byte[] {1}, MOUNT)));
            lines.add(outcome("stat", () -> files.stat(name, MOUNT)));
            lines.add(outcome("read", () -> files.readFile(name, MOUNT, 10)));
            lines.add(outcome("list", () -> files.listDir("dir-" + name, MOUNT)));
            lines.add(outcome("remove", () -> files.remove(name, MOUNT, false)));
            lines.add("read-ascii " + new String(files.readFile("plain.txt", MOUNT, 10), StandardCharsets.US_ASCII));
            for (String line : lines) {
                System.out.println(line.replaceAll("[^\\x20-\\x7e]", "?"));
            }
        }

        private static String outcome(String call, Runnable run) {
            try {
                run.run();
                return call + " returned";
            } catch (RuntimeException raised) {
                return call + " " + raised.getClass().getName() + ": " + raised.getMessage();
            }
        }
    }
}
