package org.sandbox4j.aca;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;
import org.sandbox4j.core.spi.KeyDigest;
import org.sandbox4j.core.SandboxKey;

class AcaLabelsTest {

    @Test
    void aValueThatFitsIsKept() {
        assertThat(AcaLabels.value("thread-42")).isEqualTo("thread-42");
        assertThat(AcaLabels.value("a".repeat(63))).isEqualTo("a".repeat(63));
    }

    @Test
    void aLongValueIsHashedNeverTruncated() {
        String longValue = "a".repeat(64);
        String hashed = AcaLabels.value(longValue);
        assertThat(hashed).isEqualTo("sha256-" + KeyDigest.sha256Hex(longValue).substring(0, 48));
        assertThat(hashed).hasSizeLessThanOrEqualTo(AcaLabels.MAX_VALUE_CHARS);
        assertThat(AcaLabels.value("a".repeat(64) + "b")).isNotEqualTo(hashed);
    }

    @Test
    void aValueThatWouldBreakTheFilterIsHashed() {
        assertThat(AcaLabels.value("a,b=c")).startsWith(AcaLabels.HASH_PREFIX);
        assertThat(AcaLabels.value("tenant/1")).startsWith(AcaLabels.HASH_PREFIX);
    }

    @Test
    void writeAndQueryUseOneMapping() {
        String scope = "tenant:" + "x".repeat(80);
        Map<String, String> written = AcaLabels.forSandbox(new SandboxKey(scope, "t1", "agent"), "execute_code", Map.of());
        Map<String, String> queried = AcaLabels.conversation(scope, "t1");
        assertThat(written).containsAllEntriesOf(queried);
        assertThat(written).containsKeys("scope", "thread", "agent", "kind");
        assertThat(AcaLabels.filter(queried)).isEqualTo("scope=" + AcaLabels.value(scope) + ",thread=t1");
    }

    @Test
    void aSpecCannotSetTheBackendsOwnKeys() {
        assertThatThrownBy(() -> AcaLabels.forSandbox(new SandboxKey("s", "t", "a"), "k", Map.of("scope", "other")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("scope");
    }
}
