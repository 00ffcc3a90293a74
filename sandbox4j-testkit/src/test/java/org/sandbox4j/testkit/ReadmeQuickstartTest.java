package org.sandbox4j.testkit;

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
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.sandbox4j.core.Isolation;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxRouter;
import org.sandbox4j.core.SandboxSpec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The README's quickstart compiles and runs exactly as written. */
class ReadmeQuickstartTest {

    private static final Path README = Path.of("..", "README.md");
    private static final Pattern QUICKSTART =
            Pattern.compile("## Quickstart\\s+```java\\n(.*?)```", Pattern.DOTALL);

    @Test
    void theQuickstartCompilesAndRuns(@TempDir Path work) throws Exception {
        Matcher block = QUICKSTART.matcher(Files.readString(README));
        assertThat(block.find()).as("a java block under '## Quickstart' in README.md").isTrue();
        String source = block.group(1);
        assertThat(source.lines().count()).as("the quickstart stays short").isLessThanOrEqualTo(25);

        Path file = work.resolve("Quickstart.java");
        Files.writeString(file, source);
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        ByteArrayOutputStream diagnostics = new ByteArrayOutputStream();
        int status = javac.run(null, diagnostics, diagnostics, "-d", work.toString(),
                "-classpath", System.getProperty("java.class.path"), file.toString());
        assertThat(status).as(diagnostics.toString(StandardCharsets.UTF_8)).isZero();

        String printed = runMain(work);
        assertThat(printed).isEqualTo("exit 0" + System.lineSeparator());
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

    private static final Pattern TCK_EXAMPLE =
            Pattern.compile("## The conformance TCK.*?```java\\n(.*?)```", Pattern.DOTALL);

    /** A stand-in for the reader's own backend, so the README's TCK example compiles as written. */
    private static final String MY_BACKEND = String.join("\n",
            "import org.sandbox4j.core.*;",
            "import org.sandbox4j.testkit.InMemoryBackend;",
            "class MyBackend implements SandboxBackend {",
            "    private final InMemoryBackend delegate = InMemoryBackend.builder().build();",
            "    public String name() { return delegate.name(); }",
            "    public BackendDeclarations declarations() { return delegate.declarations(); }",
            "    public Sandbox acquire(SandboxKey key, SandboxSpec spec) { return delegate.acquire(key, spec); }",
            "    public void dispose(SandboxKey key) { delegate.dispose(key); }",
            "    public int disposeScope(String scope, String thread) { return delegate.disposeScope(scope, thread); }",
            "}");

    @Test
    void theTckExampleCompiles(@TempDir Path work) throws Exception {
        Matcher block = TCK_EXAMPLE.matcher(Files.readString(README));
        assertThat(block.find()).as("a java block under '## The conformance TCK' in README.md").isTrue();
        Path example = work.resolve("MyBackendConformanceTest.java");
        Files.writeString(example, block.group(1));
        Path backend = work.resolve("MyBackend.java");
        Files.writeString(backend, MY_BACKEND);
        ByteArrayOutputStream diagnostics = new ByteArrayOutputStream();
        int status = ToolProvider.getSystemJavaCompiler().run(null, diagnostics, diagnostics, "-d", work.toString(),
                "-classpath", System.getProperty("java.class.path"), example.toString(), backend.toString());
        assertThat(status).as(diagnostics.toString(StandardCharsets.UTF_8)).isZero();
    }

    @Test
    void theQuickstartReallyAcquiredAndRan() {
        // The same steps against a backend we can inspect: the quickstart's output is not hard-coded.
        InMemoryBackend backend = InMemoryBackend.builder().build();
        SandboxRouter router = SandboxRouter.builder().backend(backend)
                .minIsolation(Isolation.NONE).build();
        SandboxSpec spec = SandboxSpec.builder("execute_code").build();
        Sandbox sandbox = router.acquire(new SandboxKey("a", "t", "x"), spec);
        sandbox.writeFile("hello.py", "print('hi')", spec.workDir());
        sandbox.exec(List.of("python3", "hello.py"), spec.workDir(), Duration.ofSeconds(30));
        assertThat(backend.sandbox().contentOf("/sandbox4j/work/hello.py")).isPresent();
        assertThat(backend.sandbox().commands()).extracting(RecordedCommand::shellLine)
                .containsExactly("'python3' 'hello.py'");
    }
}
