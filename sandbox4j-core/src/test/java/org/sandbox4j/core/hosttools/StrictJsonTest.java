package org.sandbox4j.core.hosttools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;
import org.sandbox4j.core.Egress;
import org.sandbox4j.core.SourceIntegrity;

class StrictJsonTest {

    private static final long UNBOUNDED = Long.MAX_VALUE;

    private static String json(Object value) {
        return StrictJson.write(value, UNBOUNDED);
    }

    public record Point(int x, String label, Optional<Point> next) {
    }

    private record Hidden(int secret) {
    }

    public record Exploding(int value) {
        @Override
        public int value() {
            throw new IllegalStateException("boom");
        }
    }

    private enum Plain { FIRST_ONE }

    @Test
    void scalars() {
        assertThat(json(null)).isEqualTo("null");
        assertThat(json(true)).isEqualTo("true");
        assertThat(json(false)).isEqualTo("false");
        assertThat(json(42)).isEqualTo("42");
        assertThat(json(-7L)).isEqualTo("-7");
        assertThat(json((short) 3)).isEqualTo("3");
        assertThat(json((byte) -1)).isEqualTo("-1");
        assertThat(json(new BigInteger("123456789012345678901234567890"))).isEqualTo("123456789012345678901234567890");
        assertThat(json(new BigDecimal("1.50"))).isEqualTo("1.50");
        assertThat(json(1.5d)).isEqualTo("1.5");
        assertThat(json(0.1f)).isEqualTo("0.1");
        assertThat(json(1e300)).isEqualTo("1.0E300");
        assertThat(json(-0.0d)).isEqualTo("-0.0");
        assertThat(json('c')).isEqualTo("\"c\"");
    }

    @Test
    void nonFiniteNumbersAreRefused() {
        for (Object number : List.of(Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, Float.NaN,
                Float.POSITIVE_INFINITY)) {
            assertThatThrownBy(() -> json(number)).isInstanceOf(StrictJson.NotCarried.class)
                    .hasMessageContaining("only finite numbers");
        }
        assertThatThrownBy(() -> json(List.of(1, Double.NaN))).isInstanceOf(StrictJson.NotCarried.class);
    }

    @Test
    void aCustomNumberIsRefused() {
        assertThatThrownBy(() -> json(new AtomicInteger(1))).isInstanceOf(StrictJson.NotCarried.class)
                .hasMessageContaining("not a supported number type");
    }

    @Test
    void stringsAreEscaped() {
        assertThat(json("quote\" backslash\\ slash/")).isEqualTo("\"quote\\\" backslash\\\\ slash/\"");
        assertThat(json("\n\r\t\b\f")).isEqualTo("\"\\n\\r\\t\\b\\f\"");
        assertThat(json("\u0000\u001f\u0001")).isEqualTo("\"\\u0000\\u001f\\u0001\"");
        assertThat(json("\u007f")).isEqualTo("\"\u007f\"");
    }

    @Test
    void nonAsciiIsKept() {
        assertThat(json("naïve — 日本 😀 \u2028")).isEqualTo("\"naïve — 日本 😀 \u2028\"");
    }

    @Test
    void loneSurrogatesAreRefused() {
        assertThatThrownBy(() -> json("a\uD800b")).isInstanceOf(StrictJson.NotCarried.class)
                .hasMessageContaining("lone surrogate at index 1");
        assertThatThrownBy(() -> json("\uDC00")).isInstanceOf(StrictJson.NotCarried.class);
        assertThatThrownBy(() -> json("end\uD83D")).isInstanceOf(StrictJson.NotCarried.class);
        assertThatThrownBy(() -> json('\uD800')).isInstanceOf(StrictJson.NotCarried.class);
    }

    @Test
    void mapsKeepTheirOrderAndNeedStringKeys() {
        Map<String, Object> map = new LinkedHashMap<>();
        map.put("b", 1);
        map.put("a", null);
        map.put("nested", Map.of("k", List.of()));

        assertThat(json(map)).isEqualTo("{\"b\":1,\"a\":null,\"nested\":{\"k\":[]}}");
        assertThat(json(Map.of())).isEqualTo("{}");
        assertThat(json(Map.of("we\"ird", 1))).isEqualTo("{\"we\\\"ird\":1}");

        Map<Object, Object> numberKey = Map.of(1, "one");
        assertThatThrownBy(() -> json(numberKey)).isInstanceOf(StrictJson.NotCarried.class)
                .hasMessageContaining("java.lang.Integer; JSON object keys are strings");
        Map<String, Object> nullKey = new HashMap<>();
        nullKey.put(null, 1);
        assertThatThrownBy(() -> json(nullKey)).isInstanceOf(StrictJson.NotCarried.class)
                .hasMessageContaining("a map key is null");
    }

    @Test
    void collectionsAndArraysAreArrays() {
        assertThat(json(List.of(1, "two", false))).isEqualTo("[1,\"two\",false]");
        assertThat(json(new Object[] {null, 1})).isEqualTo("[null,1]");
        assertThat(json(new int[] {1, 2})).isEqualTo("[1,2]");
        assertThat(json(new double[] {0.5})).isEqualTo("[0.5]");
        assertThat(json(new boolean[0])).isEqualTo("[]");
        assertThat(json(new char[] {'a'})).isEqualTo("[\"a\"]");
    }

    @Test
    void bytesAreRefusedNamingTheFix() {
        assertThatThrownBy(() -> json(new byte[] {1})).isInstanceOf(StrictJson.NotCarried.class)
                .hasMessageContaining("Base64");
    }

    @Test
    void optionalsAreTheirValueOrNull() {
        assertThat(json(Optional.of("x"))).isEqualTo("\"x\"");
        assertThat(json(Optional.empty())).isEqualTo("null");
    }

    @Test
    void enumsAreTheirWireValueOrName() {
        assertThat(json(SourceIntegrity.UNTRUSTED)).isEqualTo("\"untrusted\"");
        assertThat(json(Egress.ALLOWLIST)).isEqualTo("\"allowlist\"");
        assertThat(json(Plain.FIRST_ONE)).isEqualTo("\"FIRST_ONE\"");
    }

    @Test
    void recordsAreObjectsOfTheirComponents() {
        Point point = new Point(1, "a", Optional.of(new Point(2, "b", Optional.empty())));

        assertThat(json(point)).isEqualTo(
                "{\"x\":1,\"label\":\"a\",\"next\":{\"x\":2,\"label\":\"b\",\"next\":null}}");
    }

    @Test
    void aNonPublicRecordIsStillTheHostsValue() {
        assertThat(json(new Hidden(3))).isEqualTo("{\"secret\":3}");
    }

    @Test
    void aFailingAccessorIsRefused() {
        assertThatThrownBy(() -> json(new Exploding(1))).isInstanceOf(StrictJson.NotCarried.class)
                .hasMessageContaining("Exploding.value failed").hasMessageContaining("boom");
    }

    @Test
    void anythingElseIsRefusedNamingWhatIsAccepted() {
        assertThatThrownBy(() -> json(new StringBuilder("x"))).isInstanceOf(StrictJson.NotCarried.class)
                .hasMessageContaining("java.lang.StringBuilder is not JSON").hasMessageContaining("a record");
    }

    @Test
    void nestingIsBoundedAtTheLimit() {
        assertThat(json(nested(StrictJson.MAX_NESTING_DEPTH))).startsWith("[[");
        assertThatThrownBy(() -> json(nested(StrictJson.MAX_NESTING_DEPTH + 1)))
                .isInstanceOf(StrictJson.NotCarried.class).hasMessageContaining("nesting deeper than");
    }

    @Test
    void aCycleIsRefusedNotOverflowed() {
        List<Object> cycle = new ArrayList<>();
        cycle.add(cycle);

        assertThatThrownBy(() -> json(cycle)).isInstanceOf(StrictJson.NotCarried.class)
                .hasMessageContaining("or a cycle");
    }

    @Test
    void outputIsBounded() {
        assertThat(StrictJson.write("abc", 5)).isEqualTo("\"abc\"");
        assertThatThrownBy(() -> StrictJson.write("abcd", 5)).isInstanceOf(StrictJson.TooLarge.class);
        // Escapes count at their written length.
        assertThatThrownBy(() -> StrictJson.write("\u0000", 5)).isInstanceOf(StrictJson.TooLarge.class);
        assertThatThrownBy(() -> StrictJson.write(List.of("a".repeat(100)), 50)).isInstanceOf(StrictJson.TooLarge.class);
    }

    @Test
    void utf8LengthCountsEncodedBytes() {
        assertThat(StrictJson.utf8Length("")).isZero();
        assertThat(StrictJson.utf8Length("a")).isEqualTo(1);
        assertThat(StrictJson.utf8Length("é")).isEqualTo(2);
        assertThat(StrictJson.utf8Length("€")).isEqualTo(3);
        assertThat(StrictJson.utf8Length("😀")).isEqualTo(4);
    }

    /** Any UTF-16 sequence, lone surrogates and control characters included. */
    @Provide
    Arbitrary<String> anyUtf16() {
        Arbitrary<Character> surrogates = Arbitraries.chars().range(Character.MIN_SURROGATE, Character.MAX_SURROGATE);
        return Arbitraries.oneOf(Arbitraries.chars().all(), surrogates, Arbitraries.chars().range('\u0000', '\u007f'))
                .list().ofMaxSize(24)
                .map(chars -> chars.stream().map(String::valueOf).collect(Collectors.joining()));
    }

    @Property
    void everyWellFormedStringIsWrittenAndMeasuredExactly(@ForAll("anyUtf16") String text) {
        String written;
        try {
            written = json(text);
        } catch (StrictJson.NotCarried lone) {
            assertThat(hasLoneSurrogate(text)).isTrue();
            return;
        }
        assertThat(hasLoneSurrogate(text)).isFalse();
        assertThat(written.chars().noneMatch(c -> c < 0x20)).isTrue();
        assertThat(StrictJson.utf8Length(written)).isEqualTo(written.getBytes(StandardCharsets.UTF_8).length);
    }

    private static boolean hasLoneSurrogate(String text) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return true;
            }
        }
        return false;
    }

    private static Object nested(int depth) {
        Object value = 1;
        for (int level = 0; level < depth; level++) {
            value = List.of(value);
        }
        return value;
    }
}
