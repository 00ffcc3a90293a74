package org.sandbox4j.codeact;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The supervisor's fixed numbers and its guards on guest-written ids and on what it removes. */
class HostToolSupervisorRulesTest {

    private static final String RUN = "/sandbox4j/work/abc123";
    private static final String T = RUN + "/host_tools";

    @Test
    void theWorstCaseOverheadBeyondTheTimeoutIsEighteenSeconds() {
        assertThat(HostToolSupervisor.WORST_CASE_OVERHEAD).isEqualTo(Duration.ofSeconds(18));
        assertThat(HostToolSupervisor.GRACE).isEqualTo(Duration.ofSeconds(2));
        assertThat(HostToolSupervisor.RECLAIM_GRACE).isEqualTo(Duration.ofSeconds(10));
    }

    @Test
    void theFramingIsTheElevenBytesAroundADeliveredValue() {
        assertThat(HostToolSupervisor.FRAMING_BYTES).isEqualTo(11);
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"1", "42\n", "0", "0042"})
    void asciiDigitsAreAnId(String raw) {
        assertThat(HostToolSupervisor.parseId(raw.getBytes(StandardCharsets.UTF_8)))
                .contains(Long.parseLong(raw.strip()));
    }

    @ParameterizedTest(name = "[{index}]")
    @ValueSource(strings = {"", "\n", "-1", "+1", "1 2", "12\n\n", " 12", "²", "١٢", "1;kill -9 1", "$(id)",
            "99999999999999999999", "0x10", "12\r\n"})
    void anythingElseIsNoId(String raw) {
        assertThat(HostToolSupervisor.parseId(raw.getBytes(StandardCharsets.UTF_8))).isEmpty();
    }

    @Test
    void theTransportDirectoryIsRemovedOnlyWhenEveryGuardHolds() {
        GuestRunLayout good = GuestRunLayout.of(RUN, "program.py", GuestRunLayout.PYTHON_SHIM);
        assertThat(HostToolSupervisor.transportReclaimRefusal(good)).isEmpty();

        // A transport file outside T.
        assertThat(HostToolSupervisor.transportReclaimRefusal(new GuestRunLayout(RUN, RUN + "/work",
                RUN + "/program.py", T + "/sandbox4j_host_tools.py", T + "/run_program.sh", T + "/host_tool_calls",
                T + "/program_output.txt", T + "/program_exit_code", T + "/program_pid", T + "/program_session")))
                .hasValueSatisfying(reason -> assertThat(reason).contains("not directly in it"));
        // T and work overlap.
        assertThat(HostToolSupervisor.transportReclaimRefusal(withTransport(RUN + "/work", RUN + "/work")))
                .hasValueSatisfying(reason -> assertThat(reason).contains("overlaps"));
        assertThat(HostToolSupervisor.transportReclaimRefusal(withTransport(T, T + "/work")))
                .hasValueSatisfying(reason -> assertThat(reason).contains("overlaps"));
        // T is the run directory, or outside it, or holds '..'.
        assertThat(HostToolSupervisor.transportReclaimRefusal(withTransport(RUN, "/elsewhere/work")))
                .hasValueSatisfying(reason -> assertThat(reason).contains("run directory itself"));
        assertThat(HostToolSupervisor.transportReclaimRefusal(withTransport("/sandbox4j/other", RUN + "/work")))
                .hasValueSatisfying(reason -> assertThat(reason).contains("not inside the run directory"));
        assertThat(HostToolSupervisor.transportReclaimRefusal(withTransport(RUN + "/x/..", RUN + "/work")))
                .isPresent();
        // Too shallow even when "inside".
        assertThat(HostToolSupervisor.transportReclaimRefusal(new GuestRunLayout("/", "/work", "/t/p.py",
                "/t/s.py", "/t/l.sh", "/t/c", "/t/o", "/t/e", "/t/p", "/t/s")))
                .hasValueSatisfying(reason -> assertThat(reason).contains("too close to the root"));
    }

    private static GuestRunLayout withTransport(String transport, String work) {
        return new GuestRunLayout(RUN, work, transport + "/program.py", transport + "/sandbox4j_host_tools.py",
                transport + "/run_program.sh", transport + "/host_tool_calls", transport + "/program_output.txt",
                transport + "/program_exit_code", transport + "/program_pid", transport + "/program_session");
    }

    @Test
    void aTimeoutSaysWhatReachedTheProgramAndNeverMixesOutputWithTheHostsNote() {
        SandboxProgramTimeout group = new SandboxProgramTimeout("The program did not finish within 5 seconds.",
                SandboxProgramTimeout.Outcome.SENT, Optional.of(SandboxProgramTimeout.Reach.GROUP), false,
                Optional.of("partial\n"), "unused");
        assertThat(group.getMessage()).isEqualTo("The program did not finish within 5 seconds. Its process group was"
                + " sent SIGKILL.\nOutput so far:\npartial\n");
        assertThat(group.outputSoFar()).isEqualTo("partial\n");
        assertThat(group.reach()).contains(SandboxProgramTimeout.Reach.GROUP);

        SandboxProgramTimeout program = new SandboxProgramTimeout("S.", SandboxProgramTimeout.Outcome.SENT,
                Optional.of(SandboxProgramTimeout.Reach.PROGRAM), false, Optional.of(""), "unused");
        assertThat(program.getMessage()).isEqualTo("S. SIGKILL reaches the program alone; processes it started may"
                + " still be running.\nThe program printed nothing.");

        SandboxProgramTimeout refused = new SandboxProgramTimeout("S.", SandboxProgramTimeout.Outcome.REFUSED,
                Optional.empty(), false, Optional.empty(), "reading it ran out of time.");
        assertThat(refused.getMessage()).isEqualTo("S. It could not be signalled and may still be running.\n"
                + "No output was read — reading it ran out of time.");
        assertThat(refused.outputSoFar()).isEmpty();
        assertThat(refused.reach()).isEmpty();
        assertThat(refused).isInstanceOf(org.sandbox4j.core.SandboxTimeoutException.class);
    }

    @Test
    void aReachGoesWithASentSignalOnly() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new SandboxProgramTimeout("S.",
                SandboxProgramTimeout.Outcome.REFUSED, Optional.of(SandboxProgramTimeout.Reach.GROUP), false,
                Optional.empty(), "n")).isInstanceOf(IllegalArgumentException.class);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new SandboxProgramTimeout("S.",
                SandboxProgramTimeout.Outcome.SENT, Optional.empty(), false, Optional.empty(), "n"))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
