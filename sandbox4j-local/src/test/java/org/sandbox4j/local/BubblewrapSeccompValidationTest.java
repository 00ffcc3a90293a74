package org.sandbox4j.local;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sandbox4j.core.SandboxException;

/** A file that is no seccomp program fails the backend's construction, not every later exec. */
class BubblewrapSeccompValidationTest {

    @TempDir
    Path temp;

    @Test
    void aFilterTheKernelRefusesIsRefusedAtConstruction() throws Exception {
        // Five bytes: not a whole number of 8-byte BPF instructions, so bwrap and the kernel refuse it.
        Path garbage = Files.write(temp.resolve("not-a-filter.bpf"), new byte[] {1, 2, 3, 4, 5});
        assertThatThrownBy(() -> BubblewrapBackend.builder().stateRoot(Files.createDirectory(temp.resolve("s")))
                .seccompFilter(garbage).build())
                .isInstanceOf(SandboxException.class)
                .hasMessageContaining("cannot apply the seccomp filter " + garbage)
                .hasMessageContaining("seccomp_export_bpf");
    }
}
