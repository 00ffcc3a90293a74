package org.sandbox4j.core.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class JsonTest {

    @Test
    void readsEveryKindOfValue() {
        Map<String, Object> object = Json.parseObject(
                "{\"s\":\"a\\u00e9\\n\\\"\",\"n\":-1.5e2,\"t\":true,\"f\":false,\"z\":null,\"a\":[1,{}],\"e\":\"\\ud83d\\ude00\"}");
        assertThat(object).containsKeys("s", "n", "t", "f", "z", "a", "e");
        assertThat(object.get("s")).isEqualTo("aé\n\"");
        assertThat(object.get("n")).isEqualTo(new BigDecimal("-1.5e2"));
        assertThat(object.get("t")).isEqualTo(true);
        assertThat(object.get("f")).isEqualTo(false);
        assertThat(object.get("z")).isNull();
        assertThat(object.get("a")).isEqualTo(List.of(new BigDecimal(1), Map.of()));
        assertThat(object.get("e")).isEqualTo("😀");
        assertThat(object.keySet()).containsExactly("s", "n", "t", "f", "z", "a", "e");
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "{", "{\"a\":1,}", "[1,]", "{\"a\":1,\"a\":2}", "{\"a\":null,\"a\":2}", "01", "1.", "NaN",
            "Infinity", "\"\\ud800\"", "\"\\udc00x\"", "\"a\u0001\"", "{} {}", "// c\n{}", "'a'", "{a:1}", "tru", "\"\\x\""})
    void refusesWhatIsNotOneStrictValue(String text) {
        assertThatThrownBy(() -> Json.parse(text)).isInstanceOf(Json.Malformed.class).hasMessageContaining("offset");
    }

    @Test
    void boundsNesting() {
        String deep = "[".repeat(Json.MAX_DEPTH + 2) + "]".repeat(Json.MAX_DEPTH + 2);
        assertThatThrownBy(() -> Json.parse(deep)).isInstanceOf(Json.Malformed.class).hasMessageContaining("nesting");
        String fine = "[".repeat(Json.MAX_DEPTH) + "]".repeat(Json.MAX_DEPTH);
        assertThat(Json.parse(fine)).isInstanceOf(List.class);
    }

    @Test
    void objectAndArrayShapesAreChecked() {
        assertThatThrownBy(() -> Json.parseObject("[1]")).isInstanceOf(Json.Malformed.class)
                .hasMessageContaining("an array");
        assertThatThrownBy(() -> Json.parseArrayOfObjects("[1]")).isInstanceOf(Json.Malformed.class)
                .hasMessageContaining("a number");
        assertThatThrownBy(() -> Json.string(Map.of("a", 1), "a")).isInstanceOf(Json.Malformed.class);
        assertThat(Json.parseArrayOfObjects("[{\"a\":\"b\"}]")).containsExactly(Map.of("a", "b"));
    }

    @Test
    void quoteRoundTripsThroughTheReader() {
        for (String text : List.of("", "plain", "q\"b\\s/", "\u0000\u001f\t\r\n", "é😀中", "</script>")) {
            String quoted = Json.quote(text);
            assertThat(Json.parse(quoted)).isEqualTo(text);
            assertThat(quoted.chars().filter(c -> c < 0x20)).isEmpty();
        }
        assertThatThrownBy(() -> Json.quote("a\ud800")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void resultsAreUnmodifiable() {
        Map<String, Object> object = Json.parseObject("{\"a\":[1]}");
        assertThatThrownBy(() -> object.put("b", 1)).isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> ((List<?>) object.get("a")).clear()).isInstanceOf(UnsupportedOperationException.class);
    }
}
