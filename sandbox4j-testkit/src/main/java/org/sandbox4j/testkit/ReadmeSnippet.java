package org.sandbox4j.testkit;

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

/**
 * A README's Java example, compiled and run exactly as written, so documentation cannot drift
 * from the code: the first {@code ```java} block under a heading, compiled against the test class
 * path, its {@code main} run with {@code System.out} captured.
 */
public final class ReadmeSnippet {

    private final String source;

    private ReadmeSnippet(String source) {
        this.source = source;
    }

    /**
     * The first Java block after {@code heading} (e.g. {@code "## Quickstart"}) in {@code readme}.
     *
     * @throws IllegalArgumentException there is none
     */
    public static ReadmeSnippet under(Path readme, String heading) throws IOException {
        Matcher block = Pattern.compile(Pattern.quote(heading) + ".*?```java\\n(.*?)```", Pattern.DOTALL)
                .matcher(Files.readString(readme));
        if (!block.find()) {
            throw new IllegalArgumentException("no ```java block under '" + heading + "' in " + readme);
        }
        return new ReadmeSnippet(block.group(1));
    }

    /** The example's source, as written. */
    public String source() {
        return source;
    }

    /**
     * Compiles the example as {@code className} into {@code work} and runs its {@code main}.
     *
     * @return what it printed on {@code System.out}
     * @throws AssertionError it does not compile (the compiler's diagnostics are the message)
     */
    public String compileAndRun(Path work, String className) throws IOException, ReflectiveOperationException {
        Path file = work.resolve(className + ".java");
        Files.writeString(file, source);
        ByteArrayOutputStream diagnostics = new ByteArrayOutputStream();
        int status = ToolProvider.getSystemJavaCompiler().run(null, diagnostics, diagnostics, "-d", work.toString(),
                "-classpath", System.getProperty("java.class.path"), file.toString());
        if (status != 0) {
            throw new AssertionError("the README example does not compile:\n"
                    + diagnostics.toString(StandardCharsets.UTF_8));
        }
        PrintStream original = System.out;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        try (URLClassLoader loader = new URLClassLoader(new URL[] {work.toUri().toURL()},
                ReadmeSnippet.class.getClassLoader())) {
            Method main = loader.loadClass(className).getMethod("main", String[].class);
            System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
            main.invoke(null, (Object) new String[0]);
        } finally {
            System.setOut(original);
        }
        return captured.toString(StandardCharsets.UTF_8);
    }
}
