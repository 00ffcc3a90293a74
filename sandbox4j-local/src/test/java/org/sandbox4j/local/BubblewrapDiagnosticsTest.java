package org.sandbox4j.local;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/** The {@code doctor}-style lines name what runs, limits and confines sandboxes on this host. */
@EnabledOnOs(OS.LINUX)
class BubblewrapDiagnosticsTest {

    @TempDir
    Path tempDir;

    @Test
    void theLinesNameBwrapTheLimitsTheStateSeccompAndTheEgressBridge() {
        try (BubblewrapBackend backend = BubblewrapBackend.builder().stateRoot(tempDir.resolve("s")).build()) {
            List<String> lines = backend.diagnostics();

            assertThat(lines).anySatisfy(line -> assertThat(line).startsWith("backend: bubblewrap")
                    .contains("isolation container"));
            assertThat(lines).anySatisfy(line -> assertThat(line).startsWith("bwrap: ")
                    .contains(HostPrograms.find("bwrap").orElseThrow().toString()));
            assertThat(lines).anySatisfy(line -> assertThat(line).startsWith("limits: ")
                    .contains(backend.limitMechanism().description()));
            assertThat(lines).contains("state: " + backend.stateDirectory());
            assertThat(backend.stateDirectory()).startsWith(tempDir.resolve("s"));
            assertThat(lines).anySatisfy(line -> assertThat(line).startsWith("seccomp: FIFOs cannot be made")
                    .contains("no filter of the host's").contains("seccompFilter(path)"));
            assertThat(lines).contains("egress bridge in the guest: socat");
            assertThat(lines).anySatisfy(line -> assertThat(line).isEqualTo("guest file system: host /usr"));
            assertThat(lines.stream().filter(line -> line.startsWith("commands: "))).singleElement()
                    .satisfiesAnyOf(line -> assertThat(line).startsWith("commands: resident agent ("),
                            line -> assertThat(line).matches("commands: one bwrap per command \\(.+\\)"));
        }
    }

    @Test
    void asRootHereTheLimitsLineSaysCgroupV1AndWhereTheGroupsLive() {
        org.junit.jupiter.api.Assumptions.assumeTrue("root".equals(System.getProperty("user.name")));
        try (BubblewrapBackend backend = BubblewrapBackend.builder().stateRoot(tempDir.resolve("s")).build()) {
            assertThat(backend.diagnostics()).anySatisfy(line -> assertThat(line)
                    .startsWith("limits: cgroup v1")
                    .contains("/sys/fs/cgroup/memory/sandbox4j")
                    .contains("cgroup.kill from /sys/fs/cgroup/unified/sandbox4j"));
        }
    }

    @Test
    void aConfiguredSeccompFilterIsNamed() throws IOException {
        // The smallest program the kernel accepts: one instruction, BPF_RET|BPF_K with SECCOMP_RET_ALLOW
        // (0x7fff0000), little-endian {code u16, jt u8, jf u8, k u32}. It allows everything.
        byte[] allowAll = {0x06, 0x00, 0x00, 0x00, 0x00, 0x00, (byte) 0xff, 0x7f};
        Path filter = Files.write(tempDir.resolve("filter.bpf"), allowAll);
        try (BubblewrapBackend backend = BubblewrapBackend.builder().stateRoot(tempDir.resolve("s"))
                .seccompFilter(filter).build()) {
            assertThat(backend.diagnostics()).anySatisfy(line -> assertThat(line)
                    .endsWith("and the host's filter " + filter.toAbsolutePath()));
        }
    }

    @Test
    void aNamedBwrapBinaryIsTheOneNamed() {
        try (BubblewrapBackend backend = BubblewrapBackend.builder().stateRoot(tempDir.resolve("s"))
                .bwrap("/usr/bin/bwrap").build()) {
            assertThat(backend.diagnostics()).anySatisfy(line -> assertThat(line).startsWith("bwrap: /usr/bin/bwrap "));
        }
    }
}
