package org.sandbox4j.core;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** Core depends on the JDK alone: no dependency on its runtime classpath, no import outside java, javax and itself. */
class CoreDependencyRuleTest {

    /** Written by maven-dependency-plugin (list, includeScope=runtime) before the tests run; see this module's POM. */
    private static final Path RUNTIME_DEPENDENCIES = Path.of("target", "runtime-dependencies.txt");

    /** A resolved artifact line, e.g. {@code org.slf4j:slf4j-api:jar:2.0.20:compile}. */
    private static final Pattern COORDINATES = Pattern.compile("^\\s*[\\w.\\-]+:[\\w.\\-]+:[\\w.\\-]+:.*$");

    private static final ArchRule JDK_ONLY = classes().that().resideInAPackage("org.sandbox4j.core..")
            .should().onlyDependOnClassesThat().resideInAnyPackage("java..", "javax..", "org.sandbox4j.core..")
            .because("sandbox4j-core depends on the JDK alone");

    @Test
    void theResolvedRuntimeClasspathIsEmpty() throws IOException {
        assertThat(RUNTIME_DEPENDENCIES).as("the dependency listing the build writes before tests").exists();
        List<String> artifacts = Files.readAllLines(RUNTIME_DEPENDENCIES).stream()
                .filter(line -> COORDINATES.matcher(line).matches())
                .collect(Collectors.toList());
        assertThat(artifacts).as("compile and runtime dependencies of sandbox4j-core").isEmpty();
    }

    @Test
    void theListingWouldShowADependency() {
        // Positive control for the pattern above: a listed artifact is recognised.
        assertThat(COORDINATES.matcher("   org.slf4j:slf4j-api:jar:2.0.20:compile -- module org.slf4j").matches())
                .isTrue();
        assertThat(COORDINATES.matcher("The following files have been resolved:").matches()).isFalse();
    }

    @Test
    void mainCodeImportsOnlyTheJdkAndItself() {
        JavaClasses main = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("org.sandbox4j.core");
        assertThat(main).as("core's main classes were found").hasSizeGreaterThan(50);
        JDK_ONLY.check(main);
    }

    @Test
    void theImportRuleCatchesAViolation() {
        // Positive control: this test class itself imports ArchUnit and AssertJ, so the rule must reject it.
        JavaClasses tests = new ClassFileImporter().importClasses(CoreDependencyRuleTest.class);
        assertThatThrownBy(() -> JDK_ONLY.check(tests)).isInstanceOf(AssertionError.class)
                .hasMessageContaining("com.tngtech.archunit");
    }
}
