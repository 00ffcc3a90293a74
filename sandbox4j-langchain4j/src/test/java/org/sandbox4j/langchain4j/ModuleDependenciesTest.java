package org.sandbox4j.langchain4j;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import javax.xml.parsers.DocumentBuilderFactory;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * An adapter depends on core and its framework and nothing else: the POM declares exactly
 * sandbox4j-core and langchain4j outside test scope, and the compiled classes use nothing beyond
 * the JDK, core, LangChain4j and themselves (not even what LangChain4j brings along, such as Jackson).
 */
class ModuleDependenciesTest {

    private static final ArchRule CORE_AND_LANGCHAIN4J_ONLY = classes()
            .that().resideInAPackage("org.sandbox4j.langchain4j..")
            .should().onlyDependOnClassesThat()
            .resideInAnyPackage("java..", "org.sandbox4j.core..", "org.sandbox4j.langchain4j..", "dev.langchain4j..")
            .because("an adapter depends on core and on one framework");

    @Test
    void thePomDeclaresCoreAndLangChain4jAndNothingElseOutsideTests() throws Exception {
        assertThat(mainDependencies(Path.of("pom.xml")))
                .containsExactly("dev.langchain4j:langchain4j", "org.sandbox4j:sandbox4j-core");
    }

    @Test
    void mainCodeUsesOnlyTheJdkCoreAndLangChain4j() {
        JavaClasses main = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("org.sandbox4j.langchain4j");
        assertThat(main).as("the module's main classes were found").hasSizeGreaterThan(5);
        CORE_AND_LANGCHAIN4J_ONLY.check(main);
    }

    @Test
    void theRulesWouldCatchAViolation(@TempDir Path work) throws Exception {
        // Positive controls: this test class uses ArchUnit; a POM with a managed, a plugin's, a
        // test-scoped and an extra main dependency shows only the main ones.
        JavaClasses tests = new ClassFileImporter().importClasses(ModuleDependenciesTest.class);
        assertThatThrownBy(() -> CORE_AND_LANGCHAIN4J_ONLY.check(tests)).isInstanceOf(AssertionError.class)
                .hasMessageContaining("com.tngtech.archunit");
        Path pom = Files.writeString(work.resolve("pom.xml"), "<project>"
                + "<dependencyManagement><dependencies>" + dependency("m", "managed", "") + "</dependencies>"
                + "</dependencyManagement>"
                + "<dependencies>" + dependency("a", "main", "") + dependency("b", "runtime", "runtime")
                + dependency("c", "tested", "test") + "</dependencies>"
                + "<build><plugins><plugin><dependencies>" + dependency("p", "plugin", "") + "</dependencies>"
                + "</plugin></plugins></build></project>");
        assertThat(mainDependencies(pom)).containsExactly("a:main", "b:runtime");
    }

    private static String dependency(String group, String artifact, String scope) {
        return "<dependency><groupId>" + group + "</groupId><artifactId>" + artifact + "</artifactId>"
                + (scope.isEmpty() ? "" : "<scope>" + scope + "</scope>") + "</dependency>";
    }

    /** {@code groupId:artifactId} of every dependency of {@code pom} outside test scope. */
    private static Set<String> mainDependencies(Path pom) throws Exception {
        DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
        factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
        Document document;
        try (var in = Files.newInputStream(pom)) {
            document = factory.newDocumentBuilder().parse(in);
        }
        Element project = document.getDocumentElement();
        Set<String> found = new TreeSet<>();
        NodeList dependencies = project.getElementsByTagName("dependency");
        for (int i = 0; i < dependencies.getLength(); i++) {
            Element dependency = (Element) dependencies.item(i);
            if (!"dependencies".equals(dependency.getParentNode().getNodeName())
                    || dependency.getParentNode().getParentNode() != project) {
                continue; // dependencyManagement or a plugin's dependencies
            }
            if (!"test".equals(text(dependency, "scope"))) {
                found.add(text(dependency, "groupId") + ":" + text(dependency, "artifactId"));
            }
        }
        return found;
    }

    private static String text(Element parent, String tag) {
        NodeList nodes = parent.getElementsByTagName(tag);
        return nodes.getLength() == 0 ? "" : nodes.item(0).getTextContent().trim();
    }
}
