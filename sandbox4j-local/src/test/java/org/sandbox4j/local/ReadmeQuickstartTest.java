package org.sandbox4j.local;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's quickstart compiles and runs exactly as written, against a real bubblewrap sandbox:
 * the greeting it prints comes from python3 inside the guest. Its default state root lands under
 * {@code target/} (the build points {@code XDG_STATE_HOME} there).
 */
class ReadmeQuickstartTest {

    private static final Path README = Path.of("..", "README.md");
    private static final Pattern QUICKSTART = Pattern.compile("## Quickstart.*?```java\\n(.*?)```", Pattern.DOTALL);
    private static final int MOST_LINES = 25;

    @Test
    void theQuickstartCompilesAndRunsInABubblewrapSandbox(@TempDir Path work) throws Exception {
        Matcher block = QUICKSTART.matcher(Files.readString(README));
        assertThat(block.find()).as("a java block under '## Quickstart' in README.md").isTrue();
        String source = block.group(1);
        assertThat(source.lines().count()).as("the quickstart stays short").isLessThanOrEqualTo(MOST_LINES);

        Path file = work.resolve("Quickstart.java");
        Files.writeString(file, source);
        ByteArrayOutputStream diagnostics = new ByteArrayOutputStream();
        int status = ToolProvider.getSystemJavaCompiler().run(null, diagnostics, diagnostics, "-d", work.toString(),
                "-classpath", System.getProperty("java.class.path"), file.toString());
        assertThat(status).as(diagnostics.toString(StandardCharsets.UTF_8)).isZero();

        assertThat(runMain(work)).isEqualTo("hi from " + BwrapLayout.GUEST_HOSTNAME + "\n");
    }

    private static String runMain(Path classes) throws IOException, ReflectiveOperationException {
        PrintStream original = System.out;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        try (URLClassLoader loader = new URLClassLoader(new URL[] {classes.toUri().toURL()},
                ReadmeQuickstartTest.class.getClassLoader())) {
            Method main = loader.loadClass("Quickstart").getMethod("main", String[].class);
            System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
            main.invoke(null, (Object) new String[0]);
        } finally {
            System.setOut(original);
        }
        return captured.toString(StandardCharsets.UTF_8);
    }
}
