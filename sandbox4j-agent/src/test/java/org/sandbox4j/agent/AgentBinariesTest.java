package org.sandbox4j.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AgentBinariesTest {

    @TempDir
    Path temp;

    private static byte[] resource() throws Exception {
        try (InputStream in = AgentBinaries.class.getResourceAsStream(
                AgentBinaries.RESOURCE_PREFIX + System.getProperty("os.arch"))) {
            assertThat(in).as("the build packages the agent (gcc is provisioned here)").isNotNull();
            return in.readAllBytes();
        }
    }

    @Test
    void theJarCarriesAStaticAgentThatRuns() throws Exception {
        Path agent = AgentBinaries.extract(temp.resolve("agent")).orElseThrow();
        assertThat(Files.readAllBytes(agent)).isEqualTo(resource());
        assertThat(Files.isExecutable(agent)).isTrue();
        try (ResidentAgent running = ResidentAgent.start(agent, "agent-binaries-test")) {
            assertThat(running.connection().hello().agent()).startsWith("s4j-agent");
        }
    }

    @Test
    void aLinkOrForeignFileInItsPlaceIsReplacedNotFollowed() throws Exception {
        Path directory = temp.resolve("agent");
        Path agent = AgentBinaries.extract(directory).orElseThrow();
        Path victim = Files.writeString(temp.resolve("victim"), "keep");
        Files.delete(agent);
        Files.createSymbolicLink(agent, victim);
        Path again = AgentBinaries.extract(directory).orElseThrow();
        assertThat(again).isEqualTo(agent);
        assertThat(Files.isSymbolicLink(again)).isFalse();
        assertThat(Files.readAllBytes(again)).isEqualTo(resource());
        assertThat(Files.readString(victim)).isEqualTo("keep");

        Files.delete(agent);
        Files.writeString(agent, "not the agent");
        assertThat(Files.readAllBytes(AgentBinaries.extract(directory).orElseThrow())).isEqualTo(resource());
    }

    @Test
    void aDirectoryOpenToOthersOrALinkedDirectoryIsRefused() throws Exception {
        Path open = Files.createDirectory(temp.resolve("open"),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxrwxrwx")));
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rwxrwxrwx"));
        assertThatThrownBy(() -> AgentBinaries.extract(open)).isInstanceOf(UncheckedIOException.class)
                .hasMessageContaining("mode 0700");

        Path real = Files.createDirectory(temp.resolve("real"),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        Path linked = Files.createSymbolicLink(temp.resolve("linked"), real);
        assertThatThrownBy(() -> AgentBinaries.extract(linked)).isInstanceOf(UncheckedIOException.class)
                .hasMessageContaining("not a link");
        assertThat(Files.list(real)).isEmpty();
        assertThat(Files.isDirectory(linked, LinkOption.NOFOLLOW_LINKS)).isFalse();
    }
}
