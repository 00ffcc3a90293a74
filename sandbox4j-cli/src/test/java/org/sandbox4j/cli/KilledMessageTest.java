package org.sandbox4j.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.sandbox4j.microvm.MicroVmBackend;

/** Exit 137 names the limit that likely ended the program, and the flag that raises it. */
class KilledMessageTest {

    @Test
    void aMicroVmGuestsDefaultMemoryIsNamed() {
        Optional<Long> memory = KnownBackend.MICROVM.memoryBytes(GuestLimits.DEFAULTS);
        assertThat(memory).contains((long) MicroVmBackend.DEFAULT_MEMORY_MIB << 20);
        assertThat(Failures.killed(137, memory)).get().asString().contains("exit 137", "256", GuestLimits.MEMORY_FLAG);
    }

    @Test
    void onlyExit137IsExplainedAndSbxSaysWhereToLook() {
        assertThat(Failures.killed(1, Optional.of(1L << 30))).isEmpty();
        assertThat(KnownBackend.SBX.memoryBytes(GuestLimits.DEFAULTS)).isEmpty();
        assertThat(Failures.killed(137, Optional.empty())).get().asString().contains("doctor");
    }
}
