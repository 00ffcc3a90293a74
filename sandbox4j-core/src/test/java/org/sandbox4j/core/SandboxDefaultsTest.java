package org.sandbox4j.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What a sandbox implementing only the two obligatory methods answers for the rest. */
class SandboxDefaultsTest {

    /** Implements writeFile and exec only, recording what reaches them. */
    private static final class Minimal implements Sandbox {
        final List<byte[]> written = new ArrayList<>();
        final List<Command> ran = new ArrayList<>();

        @Override
        public void writeFile(String path, byte[] content, String workingDirectory) {
            written.add(content);
        }

        @Override
        public ExecResult exec(Command command, ExecOptions options) {
            ran.add(command);
            return ExecResult.of("", "", 0, Duration.ZERO);
        }
    }

    @Test
    void eachOptionalMethodRefusesNamingItsCapability() {
        Sandbox sandbox = new Minimal();
        assertThatThrownBy(() -> sandbox.stat("a", "/w"))
                .isInstanceOf(SandboxOperationNotSupported.class).hasMessageContaining("'files_out'");
        assertThatThrownBy(() -> sandbox.readFile("a", "/w", 1))
                .isInstanceOf(SandboxOperationNotSupported.class).hasMessageContaining("'files_out'");
        assertThatThrownBy(() -> sandbox.listDir(".", "/w"))
                .isInstanceOf(SandboxOperationNotSupported.class).hasMessageContaining("'files_list'");
        assertThatThrownBy(() -> sandbox.remove("a", "/w", false))
                .isInstanceOf(SandboxOperationNotSupported.class).hasMessageContaining("'files_delete'");
        assertThatThrownBy(() -> sandbox.listDir(".", "/w", 2))
                .isInstanceOf(SandboxOperationNotSupported.class).hasMessageContaining("'files_list'");
        assertThatThrownBy(() -> sandbox.mkdir("a", "/w"))
                .isInstanceOf(SandboxOperationNotSupported.class).hasMessageContaining("'files_in'");
        assertThatThrownBy(() -> sandbox.start(Command.argv("cat"), ProcessOptions.in("/w", Duration.ofSeconds(1))))
                .isInstanceOf(SandboxOperationNotSupported.class).hasMessageContaining("'interactive_exec'");
    }

    @Test
    void aListingsDepthIsBounded() {
        Sandbox sandbox = new Minimal();
        for (int depth : new int[] {0, -1, Sandbox.MAX_LISTING_DEPTH + 1}) {
            assertThatThrownBy(() -> sandbox.listDir(".", "/w", depth)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("from 1 to " + Sandbox.MAX_LISTING_DEPTH);
        }
    }

    @Test
    void theObligatoryMethodsAndTheirConveniencesReachTheImplementation() {
        Minimal sandbox = new Minimal();
        sandbox.writeFile("a.txt", "naïve", "/w");
        assertThat(new String(sandbox.written.get(0), StandardCharsets.UTF_8)).isEqualTo("naïve");
        sandbox.exec(List.of("printf", "%s", "x y"), "/w", Duration.ofSeconds(1));
        assertThat(sandbox.ran).containsExactly(Command.argv("printf", "%s", "x y"));
    }
}
