package org.sandbox4j.egress;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The module's shape: JDK and core only, and a small public API of final types. */
class EgressModuleRulesTest {

    private static final JavaClasses MAIN = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("org.sandbox4j.egress");

    @Test
    void mainCodeDependsOnTheJdkAndCoreOnly() {
        classes().that().resideInAPackage("org.sandbox4j.egress..")
                .should().onlyDependOnClassesThat().resideInAnyPackage("java..", "org.sandbox4j.core..", "org.sandbox4j.egress..")
                .because("sandbox4j-egress depends on core alone, and not on the JDK's com.sun HTTP server")
                .check(MAIN);
    }

    @Test
    void thePublicApiIsSmallAndFinal() {
        Set<String> publicTypes = MAIN.stream().filter(c -> c.getModifiers().contains(JavaModifier.PUBLIC))
                .map(JavaClass::getName).map(n -> n.substring("org.sandbox4j.egress.".length()))
                .collect(Collectors.toSet());
        assertThat(publicTypes).containsExactlyInAnyOrder(
                "EgressRule", "EgressRule$Kind", "EgressPolicy", "EgressPolicy$Admission", "HostResolver",
                "EgressProxy", "EgressProxy$Settings", "EgressDecision", "EgressDecision$Verdict",
                "ProxySockets", "ProxySockets$Access",
                "GuestProxyEnvironment", "GuestBridge", "GuestBridge$Tool");
        assertThat(MAIN.stream().filter(c -> c.getModifiers().contains(JavaModifier.PUBLIC))
                .filter(c -> !c.isInterface() && !c.isEnum()))
                .allSatisfy(c -> assertThat(c.getModifiers()).as(c.getName()).contains(JavaModifier.FINAL));
    }
}
