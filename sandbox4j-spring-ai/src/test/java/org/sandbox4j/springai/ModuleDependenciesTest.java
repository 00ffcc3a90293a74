package org.sandbox4j.springai;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import javax.xml.parsers.DocumentBuilderFactory;

import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * The hourglass for this adapter: its main code depends on sandbox4j-core, Spring AI and Spring
 * Boot, and on nothing else: no backend, no kind, no other adapter. Checked twice, on the declared
 * dependencies and on the compiled classes.
 */
class ModuleDependenciesTest {

    private static final Path POM = Path.of("pom.xml");
    private static final Path MAIN_CLASSES = Path.of("target", "classes");

    /** Every sandbox4j package a main class names, e.g. {@code core} for {@code org/sandbox4j/core/...}. */
    private static final Pattern SANDBOX4J_PACKAGE = Pattern.compile("org/sandbox4j/([a-z0-9]+)/");

    /** Every top-level package family a main class names (type descriptors and internal names). */
    private static final Pattern TYPE_REFERENCE = Pattern.compile("L?((?:java|javax|jdk|org|com|io|tools|reactor)/[A-Za-z0-9_/$]+);?");

    @Test
    void theDeclaredMainDependenciesAreCoreSpringAiAndSpringBootOnly() throws Exception {
        assertThat(mainDependencies()).containsExactlyInAnyOrder(
                "org.sandbox4j:sandbox4j-core",
                "org.springframework.ai:spring-ai-model",
                "org.springframework.boot:spring-boot-autoconfigure");
    }

    @Test
    void theCompiledMainClassesNameNoSandbox4jModuleButCoreAndThisOne() throws IOException {
        Set<String> packages = new TreeSet<>();
        for (String text : mainClassFiles()) {
            Matcher matcher = SANDBOX4J_PACKAGE.matcher(text);
            while (matcher.find()) {
                packages.add(matcher.group(1));
            }
        }
        assertThat(packages).containsExactlyInAnyOrder("core", "springai");
    }

    @Test
    void theCompiledMainClassesNameOnlyTheJdkSandbox4jAndSpring() throws IOException {
        Set<String> named = new TreeSet<>();
        for (String text : mainClassFiles()) {
            Matcher matcher = TYPE_REFERENCE.matcher(text);
            while (matcher.find()) {
                named.add(matcher.group(1));
            }
        }
        // Positive control: the scan does see what the classes name.
        assertThat(named).contains("org/springframework/ai/tool/ToolCallback", "org/sandbox4j/core/SandboxRouter",
                "java/lang/Object");
        assertThat(named).filteredOn(name -> !(name.startsWith("java/") || name.startsWith("org/sandbox4j/")
                || name.startsWith("org/springframework/"))).isEmpty();
    }

    private static List<String> mainClassFiles() throws IOException {
        assertThat(MAIN_CLASSES).isDirectory();
        List<String> texts = new ArrayList<>();
        try (Stream<Path> walk = Files.walk(MAIN_CLASSES)) {
            for (Path file : walk.filter(path -> path.toString().endsWith(".class")).toList()) {
                // Class names are plain ASCII in the constant pool, so a Latin-1 reading finds them.
                texts.add(new String(Files.readAllBytes(file), StandardCharsets.ISO_8859_1));
            }
        }
        assertThat(texts).as("compiled main classes").isNotEmpty();
        return texts;
    }

    private static Set<String> mainDependencies() throws Exception {
        DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
        factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
        Document pom;
        try (InputStream in = Files.newInputStream(POM)) {
            pom = factory.newDocumentBuilder().parse(in);
        }
        Element dependencies = (Element) pom.getDocumentElement().getElementsByTagName("dependencies").item(0);
        NodeList each = dependencies.getElementsByTagName("dependency");
        Set<String> main = new TreeSet<>();
        for (int i = 0; i < each.getLength(); i++) {
            Element dependency = (Element) each.item(i);
            String scope = text(dependency, "scope");
            if (!scope.equals("test")) {
                main.add(text(dependency, "groupId") + ":" + text(dependency, "artifactId"));
            }
        }
        return main;
    }

    private static String text(Element parent, String tag) {
        NodeList nodes = parent.getElementsByTagName(tag);
        return nodes.getLength() == 0 ? "" : nodes.item(0).getTextContent().trim();
    }
}
