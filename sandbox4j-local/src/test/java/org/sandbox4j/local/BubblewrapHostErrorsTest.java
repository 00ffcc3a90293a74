package org.sandbox4j.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.sandbox4j.core.Egress;
import org.sandbox4j.core.SandboxEgressNotEnforced;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.SandboxImageNotUsable;

/**
 * What the backend says when the host or the spec is wrong: each refusal has its type and a
 * message naming the fix, and a refused acquire leaves nothing behind.
 */
@EnabledOnOs(OS.LINUX)
class BubblewrapHostErrorsTest {

    private static final SandboxKey KEY = new SandboxKey("errors-scope", "errors-thread", "agent");

    @TempDir
    Path tempDir;

    private BubblewrapBackend backend;

    @AfterEach
    void cleanUp() {
        if (backend != null) {
            backend.dispose(KEY);
            backend.close();
        }
    }

    @Test
    void aMissingBwrapNamesThePackageToInstall() {
        assertThatThrownBy(() -> BubblewrapBackend.builder().stateRoot(tempDir.resolve("s"))
                .bwrap("/nonexistent/bwrap").build())
                .isExactlyInstanceOf(SandboxException.class)
                .hasMessageContaining("/nonexistent/bwrap")
                .hasMessageContaining("install bubblewrap")
                .hasMessageContaining("apt-get install bubblewrap");
    }

    @Test
    void aBwrapThatCannotMakeNamespacesIsReportedAsUserNamespacesDisabled() throws IOException {
        Path fake = LocalBackendUnderTest.script(tempDir.resolve("bwrap"), "#!/bin/sh\necho 'bwrap: No "
                + "permissions to creating new namespace, likely because the kernel does not allow non-privileged "
                + "user namespaces.' >&2\nexit 1\n");

        assertThatThrownBy(() -> BubblewrapBackend.builder().stateRoot(tempDir.resolve("s")).bwrap(fake.toString())
                .build())
                .isExactlyInstanceOf(SandboxException.class)
                .hasMessageContaining(fake.toString())
                .hasMessageContaining("exited 1")
                .hasMessageContaining("No permissions to creating new namespace")
                .hasMessageContaining("user namespaces look disabled")
                .hasMessageContaining("max_user_namespaces");
    }

    @Test
    void aBwrapThatFailsForAnotherReasonSaysToRunItByHand() throws IOException {
        Path fake = LocalBackendUnderTest.script(tempDir.resolve("bwrap"),
                "#!/bin/sh\necho 'bwrap: something unexpected' >&2\nexit 1\n");

        assertThatThrownBy(() -> BubblewrapBackend.builder().stateRoot(tempDir.resolve("s")).bwrap(fake.toString())
                .build())
                .isExactlyInstanceOf(SandboxException.class)
                .hasMessageContaining("something unexpected")
                .hasMessageContaining("run the same bwrap line by hand")
                .hasMessageNotContaining("user namespaces look disabled");
    }

    @Test
    void aStateRootThatCannotBeADirectoryIsNamedWithTheFix() throws IOException {
        Path regularFile = Files.writeString(tempDir.resolve("a-file"), "not a directory");
        Path stateRoot = regularFile.resolve("state");

        assertThatThrownBy(() -> BubblewrapBackend.builder().stateRoot(stateRoot).build())
                .isExactlyInstanceOf(SandboxException.class)
                .hasMessageContaining("cannot use the state root " + stateRoot)
                .hasMessageContaining("stateRoot(...)")
                .hasMessageContaining("XDG_STATE_HOME");
    }

    @Test
    void aSpecNamingAnImageIsRefusedAsNotUsable() {
        backend = backend();

        assertThatThrownBy(() -> backend.acquire(KEY, SandboxSpec.builder("code").image("python:3").build()))
                .isExactlyInstanceOf(SandboxImageNotUsable.class)
                .hasMessageContaining("python:3")
                .hasMessageContaining("rootFilesystem(dir, name)");
        assertThatThrownBy(() -> backend.acquire(KEY, SandboxSpec.builder("code").imageId("sha256:0123").build()))
                .isExactlyInstanceOf(SandboxImageNotUsable.class);
        assertThat(sandboxDirectories()).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {"/work", "relative/x", "/usr/x", "/tmp/x", "/proc/x", "/etc/x", "/usr/local/x"})
    void aWorkDirTheWorkspaceCannotBeBoundAtIsRefusedNamingTheFix(String workDir) {
        backend = backend();

        assertThatThrownBy(() -> backend.acquire(KEY, SandboxSpec.builder("code").workDir(workDir).build()))
                .isExactlyInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(SandboxSpec.DEFAULT_WORK_DIR);
        assertThat(sandboxDirectories()).as("nothing created for %s", workDir).isEmpty();
    }

    @Test
    void unrestrictedEgressIsRefusedAsNotEnforced() {
        backend = backend();

        assertThatThrownBy(() -> backend.acquire(KEY, SandboxSpec.builder("code").egress(Egress.UNRESTRICTED)
                .build()))
                .isExactlyInstanceOf(SandboxEgressNotEnforced.class)
                .hasMessageContaining("'" + Egress.UNRESTRICTED.wire() + "'");
        assertThat(sandboxDirectories()).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {"http://example.com/", "example.com/path", "*", "a.example, b.example", "example.com:0",
            "*.example.com=127.0.0.1"})
    void anAllowlistEntryThatDoesNotParseIsRefusedBeforeAnythingIsCreated(String entry) {
        backend = backend();

        assertThatThrownBy(() -> backend.acquire(KEY, SandboxSpec.builder("code").egress(Egress.ALLOWLIST)
                .egressAllow(entry).build()))
                .isExactlyInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(entry);
        assertThat(sandboxDirectories()).as("nothing created for %s", entry).isEmpty();
    }

    private BubblewrapBackend backend() {
        return BubblewrapBackend.builder().stateRoot(tempDir.resolve("s")).build();
    }

    private java.util.List<Path> sandboxDirectories() {
        try (Stream<Path> children = Files.list(backend.stateDirectory())) {
            return children.filter(path -> !LocalStore.isBackendEntry(path.getFileName().toString())).toList();
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }
}
