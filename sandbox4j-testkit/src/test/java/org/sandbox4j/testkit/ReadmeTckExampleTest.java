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

/** The README's TCK example compiles exactly as written (the quickstart is run in sandbox4j-local). */
class ReadmeTckExampleTest {

    private static final Path README = Path.of("..", "README.md");
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
}
