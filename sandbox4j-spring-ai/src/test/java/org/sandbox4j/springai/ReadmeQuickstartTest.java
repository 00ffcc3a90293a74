package org.sandbox4j.springai;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.UUID;

import javax.tools.ToolProvider;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sandbox4j.codeact.CodeAct;
import org.sandbox4j.core.SandboxPurger;
import org.sandbox4j.testkit.ReadmeSnippet;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The module README's quickstart, compiled as written and loaded into an application context with
 * the README's property and a scripted chat model: the assistant's answer carries what the
 * program printed in a real bubblewrap sandbox. Its default state root lands under
 * {@code target/} (the build points {@code XDG_STATE_HOME} there).
 */
class ReadmeQuickstartTest {

    private static final String CLASS_NAME = "SandboxQuickstart";

    @Test
    void theQuickstartConfigurationAnswersWithWhatTheProgramPrinted(@TempDir Path work) throws Exception {
        ReadmeSnippet quickstart = ReadmeSnippet.under(Path.of("README.md"), "## Quickstart (Spring Boot)");
        Path source = work.resolve(CLASS_NAME + ".java");
        Files.writeString(source, quickstart.source());
        ByteArrayOutputStream diagnostics = new ByteArrayOutputStream();
        int status = ToolProvider.getSystemJavaCompiler().run(null, diagnostics, diagnostics, "-d", work.toString(),
                "-classpath", System.getProperty("java.class.path"), source.toString());
        assertThat(status).as(diagnostics.toString(StandardCharsets.UTF_8)).isZero();

        try (URLClassLoader loader = new URLClassLoader(new URL[] {work.toUri().toURL()},
                ReadmeQuickstartTest.class.getClassLoader())) {
            Class<?> configuration = loader.loadClass(CLASS_NAME);
            Class<?> assistantType = loader.loadClass(CLASS_NAME + "$Assistant");
            String conversation = "readme-" + UUID.randomUUID();
            new ApplicationContextRunner()
                    .withClassLoader(loader)
                    .withConfiguration(AutoConfigurations.of(SandboxAutoConfiguration.class))
                    .withUserConfiguration(configuration)
                    .withBean(ChatModel.class, () -> new ScriptedChatModel(CodeAct.TOOL_NAME))
                    .withPropertyValues("sandbox4j.floor=container")
                    .run(context -> {
                        assertThat(context).hasNotFailed();
                        Object assistant = context.getBean(assistantType);
                        Object answer = assistantType.getMethod("ask", String.class, String.class)
                                .invoke(assistant, conversation, "print(sum(range(10)))");

                        assertThat(answer).isEqualTo(ScriptedChatModel.ANSWER_PREFIX + "stdout:\n45");
                        context.getBean(SandboxPurger.class).purgeScopedThread(SandboxAutoConfiguration.DEFAULT_SCOPE,
                                conversation);
                    });
        }
    }
}
