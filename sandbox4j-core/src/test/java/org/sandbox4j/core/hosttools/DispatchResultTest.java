package org.sandbox4j.core.hosttools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class DispatchResultTest {

    @Test
    void aDeliveredValueIsOk() {
        DispatchResult result = DispatchResult.delivered("42");

        assertThat(result.ok()).isTrue();
        assertThat(result.valueJson()).isEqualTo("42");
        assertThat(result.refusal()).isNull();
    }

    @Test
    void aRefusalIsNotOk() {
        DispatchResult result = DispatchResult.refused("Error: no.");

        assertThat(result.ok()).isFalse();
        assertThat(result.valueJson()).isNull();
    }

    @Test
    void neitherIsRefused() {
        assertThatThrownBy(() -> new DispatchResult(null, null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("neither");
    }

    @Test
    void bothIsRefused() {
        assertThatThrownBy(() -> new DispatchResult("1", "Error: no."))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("both");
    }
}
