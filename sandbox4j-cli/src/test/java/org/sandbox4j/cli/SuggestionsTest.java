package org.sandbox4j.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

/** What a mistyped name was likely meant to be, and the backend names a typo is told about. */
class SuggestionsTest {

    @Test
    void aTypoASwapOrAPrefixFindsTheName() {
        List<String> names = List.of("bubblewrap", "docker", "microvm", "podman");
        assertThat(Suggestions.among("bubblwrap", names)).containsExactly("bubblewrap");
        assertThat(Suggestions.among("dokcer", names)).containsExactly("docker");
        assertThat(Suggestions.among("micro", names)).containsExactly("microvm");
        assertThat(Suggestions.among("kubernetes", names)).isEmpty();
    }

    @Test
    void aWordLongerThanAnyNameIsComparedWithNone() {
        assertThat(Suggestions.among("d".repeat(100_000), List.of("docker"))).isEmpty();
    }

    @Test
    void anUnknownBackendIsNamedEscapedWithWhatItWasLikelyMeantToBe() {
        assertThatThrownBy(() -> KnownBackend.parse("dokcer")).isInstanceOf(CliFailure.class)
                .hasMessageContaining("unknown backend 'dokcer'; did you mean docker?")
                .hasMessageContaining("choose one of");
        assertThatThrownBy(() -> KnownBackend.parse("evil\u001b[2J")).isInstanceOf(CliFailure.class)
                .hasMessageNotContaining("\u001b");
    }
}
