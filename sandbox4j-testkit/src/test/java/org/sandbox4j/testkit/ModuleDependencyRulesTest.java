package org.sandbox4j.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * The hourglass of ARCHITECTURE.md, checked on every module's declared dependencies: kinds and
 * backends depend on core (backends also on egress), never on each other; adapters on core and
 * one framework. A module missing from the table fails, so a new module must state its place.
 */
class ModuleDependencyRulesTest {

    private static final Path REACTOR = Path.of("..");
    private static final String GROUP = "org.sandbox4j";
    private static final Set<String> ANY = Set.of("*");

    /** Which sandbox4j modules each module may depend on (any scope). */
    private static final Map<String, Set<String>> ALLOWED = Map.ofEntries(
            Map.entry("sandbox4j-core", Set.of()),
            Map.entry("sandbox4j-testkit", Set.of("sandbox4j-core")),
            Map.entry("sandbox4j-egress", Set.of("sandbox4j-core", "sandbox4j-testkit")),
            // The backends that keep a sandbox alive run the one guest agent (ARCHITECTURE.md, "the guest agent").
            Map.entry("sandbox4j-local", Set.of("sandbox4j-core", "sandbox4j-egress", "sandbox4j-agent",
                    "sandbox4j-testkit")),
            Map.entry("sandbox4j-docker", Set.of("sandbox4j-core", "sandbox4j-egress", "sandbox4j-agent",
                    "sandbox4j-testkit")),
            Map.entry("sandbox4j-sbx", Set.of("sandbox4j-core", "sandbox4j-testkit")),
            Map.entry("sandbox4j-aca", Set.of("sandbox4j-core", "sandbox4j-testkit")),
            Map.entry("sandbox4j-agent", Set.of("sandbox4j-core", "sandbox4j-testkit")),
            Map.entry("sandbox4j-microvm", Set.of("sandbox4j-core", "sandbox4j-egress", "sandbox4j-agent",
                    "sandbox4j-testkit")),
            Map.entry("sandbox4j-codeact", Set.of("sandbox4j-core", "sandbox4j-testkit")),
            Map.entry("sandbox4j-langchain4j", Set.of("sandbox4j-core", "sandbox4j-testkit")),
            Map.entry("sandbox4j-spring-ai", Set.of("sandbox4j-core", "sandbox4j-testkit")),
            Map.entry("sandbox4j-mcp", Set.of("sandbox4j-core", "sandbox4j-testkit")),
            Map.entry("sandbox4j-cli", ANY),
            Map.entry("sandbox4j-bench", ANY));

    /**
     * What a module's tests may use beyond its row: a kind or an adapter is proved end to end on a
     * real backend, which its main code never names; sandbox4j-docker's tests run execute_code end to end;
     * sandbox4j-aca's main code talks to a service
     * that enforces egress itself, and only its emulator runs sandbox4j-egress's proxy in the
     * service's place.
     */
    private static final Map<String, Set<String>> ALSO_IN_TESTS = Map.of(
            "sandbox4j-aca", Set.of("sandbox4j-egress"),
            "sandbox4j-codeact", Set.of("sandbox4j-local"),
            "sandbox4j-docker", Set.of("sandbox4j-codeact"),
            "sandbox4j-langchain4j", Set.of("sandbox4j-local", "sandbox4j-codeact"),
            "sandbox4j-spring-ai", Set.of("sandbox4j-local", "sandbox4j-codeact"),
            "sandbox4j-mcp", Set.of("sandbox4j-local", "sandbox4j-codeact"));

    @Test
    void everyModuleDependsOnlyOnWhatTheArchitectureAllows() throws Exception {
        List<String> modules = modules();
        assertThat(modules).contains("sandbox4j-core", "sandbox4j-testkit");
        List<String> violations = new ArrayList<>();
        for (String module : modules) {
            Set<String> allowed = ALLOWED.get(module);
            if (allowed == null) {
                fail("module " + module + " has no row in the dependency table; add its place in the hourglass");
            }
            if (allowed.equals(ANY)) {
                continue;
            }
            for (String dependency : sandbox4jDependencies(module, false)) {
                if (!allowed.contains(dependency)) {
                    violations.add(module + " -> " + dependency);
                }
            }
            for (String dependency : sandbox4jDependencies(module, true)) {
                if (!allowed.contains(dependency)
                        && !ALSO_IN_TESTS.getOrDefault(module, Set.of()).contains(dependency)) {
                    violations.add(module + " -> " + dependency);
                }
            }
        }
        assertThat(violations).as("dependencies the architecture forbids").isEmpty();
    }

    @Test
    void theTableWouldCatchAForbiddenEdge() throws Exception {
        // Positive control: testkit really is seen depending on core, and core on nothing.
        assertThat(sandbox4jDependencies("sandbox4j-testkit", false)).containsExactly("sandbox4j-core");
        assertThat(sandbox4jDependencies("sandbox4j-core", false)).isEmpty();
        // ... and a test-only edge is seen as test-only, not as a main dependency.
        assertThat(sandbox4jDependencies("sandbox4j-local", true)).contains("sandbox4j-testkit");
        assertThat(sandbox4jDependencies("sandbox4j-local", false)).doesNotContain("sandbox4j-testkit");
        assertThat(ALLOWED.get("sandbox4j-core")).doesNotContain("sandbox4j-testkit");
    }

    private static List<String> modules() throws Exception {
        NodeList nodes = parse(REACTOR.resolve("pom.xml")).getElementsByTagName("module");
        List<String> modules = new ArrayList<>();
        for (int i = 0; i < nodes.getLength(); i++) {
            modules.add(nodes.item(i).getTextContent().trim());
        }
        return modules;
    }

    /** The module's sandbox4j dependencies of test scope ({@code testScope}) or of any other scope. */
    private static Set<String> sandbox4jDependencies(String module, boolean testScope) throws Exception {
        Document pom = parse(REACTOR.resolve(module).resolve("pom.xml"));
        Set<String> found = new TreeSet<>();
        NodeList dependencies = pom.getElementsByTagName("dependency");
        for (int i = 0; i < dependencies.getLength(); i++) {
            Element dependency = (Element) dependencies.item(i);
            if (GROUP.equals(text(dependency, "groupId")) && testScope == "test".equals(text(dependency, "scope"))) {
                found.add(text(dependency, "artifactId"));
            }
        }
        return found;
    }

    private static String text(Element parent, String tag) {
        NodeList nodes = parent.getElementsByTagName(tag);
        return nodes.getLength() == 0 ? "" : nodes.item(0).getTextContent().trim();
    }

    private static Document parse(Path file) throws Exception {
        assertThat(file).exists();
        DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
        factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
        try (var in = Files.newInputStream(file)) {
            return factory.newDocumentBuilder().parse(in);
        }
    }
}
