package org.sandbox4j.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.sandbox4j.core.SandboxException;

/**
 * Every concrete exception type core defines is asserted by some test in the reactor: a refusal
 * type nobody raises in a test is a refusal nobody knows works. Types only a real backend can
 * raise are listed with the reason, so the list shrinks as backends land.
 */
class RefusalCoverageTest {

    private static final Path REACTOR = Path.of("..");
    private static final Path CORE_CLASSES = REACTOR.resolve("sandbox4j-core/target/classes");

    /** Raised only by backends that run real processes; their tests arrive with those backends and the TCK. */
    private static final Map<String, String> RAISED_ONLY_BY_REAL_BACKENDS = Map.of();

    @Test
    void everyExceptionTypeIsAssertedByATest() throws IOException {
        Set<String> types = concreteExceptionTypes();
        assertThat(types).as("core's exception types were found").hasSizeGreaterThan(30)
                .contains("SandboxBackendNotPermitted", "SandboxPathNotConfined", "SandboxArtifactNameCollision");
        String tests = allTestSources();
        Set<String> unasserted = types.stream()
                .filter(type -> !tests.contains(type + ".class"))
                .filter(type -> !RAISED_ONLY_BY_REAL_BACKENDS.containsKey(type))
                .collect(Collectors.toCollection(TreeSet::new));
        assertThat(unasserted).as("exception types no test asserts with Type.class").isEmpty();
    }

    @Test
    void theExemptionsAreStillNeeded() throws IOException {
        String tests = allTestSources();
        for (String exempt : RAISED_ONLY_BY_REAL_BACKENDS.keySet()) {
            assertThat(tests).as(exempt + " is now asserted: remove its exemption").doesNotContain(exempt + ".class");
        }
    }

    private static Set<String> concreteExceptionTypes() throws IOException {
        Set<String> names = new TreeSet<>();
        try (Stream<Path> files = Files.walk(CORE_CLASSES)) {
            for (Path file : (Iterable<Path>) files.filter(f -> f.toString().endsWith(".class"))::iterator) {
                String relative = CORE_CLASSES.relativize(file).toString();
                String className = relative.substring(0, relative.length() - ".class".length()).replace('/', '.');
                Class<?> type;
                try {
                    type = Class.forName(className, false, RefusalCoverageTest.class.getClassLoader());
                } catch (ClassNotFoundException | LinkageError e) {
                    continue;
                }
                if (SandboxException.class.isAssignableFrom(type) && !Modifier.isAbstract(type.getModifiers())
                        && type != SandboxException.class) {
                    names.add(type.getSimpleName());
                }
            }
        }
        return names;
    }

    private static String allTestSources() throws IOException {
        StringBuilder all = new StringBuilder();
        List<Path> roots;
        try (Stream<Path> modules = Files.list(REACTOR)) {
            roots = modules.map(module -> module.resolve("src/test/java")).filter(Files::isDirectory)
                    .collect(Collectors.toList());
        }
        for (Path root : roots) {
            try (Stream<Path> files = Files.walk(root)) {
                for (Path file : (Iterable<Path>) files.filter(f -> f.toString().endsWith(".java"))::iterator) {
                    if (!file.getFileName().toString().equals("RefusalCoverageTest.java")) {
                        all.append(Files.readString(file)).append('\n');
                    }
                }
            }
        }
        return all.toString();
    }
}
