package org.sandbox4j.core.spi;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** What a guest or a model chose never reaches a message raw: no line breaks, no terminal escapes, no forged lines. */
class GuestTextTest {

    @Test
    void controlCharactersAndSeparatorsAreWrittenAsEscapes() {
        assertThat(GuestText.quote("a\nb\rc\td")).isEqualTo("'a\\nb\\rc\\td'");
        assertThat(GuestText.quote("\u001b[31mred\u001b[0m")).isEqualTo("'\\u001b[31mred\\u001b[0m'");
        assertThat(GuestText.quote("bell\u0007 del\u007f c1\u0085")).isEqualTo("'bell\\u0007 del\\u007f c1\\u0085'");
        assertThat(GuestText.quote("line\u2028para\u2029")).isEqualTo("'line\\u2028para\\u2029'");
        assertThat(GuestText.quote("\u202etxt.exe")).isEqualTo("'\\u202etxt.exe'");
    }

    @Test
    void loneSurrogatesAreEscapedAndPairsKept() {
        assertThat(GuestText.quote("x\ud800y")).isEqualTo("'x\\ud800y'");
        assertThat(GuestText.quote("\udc00")).isEqualTo("'\\udc00'");
        assertThat(GuestText.quote("emoji \ud83d\ude00")).isEqualTo("'emoji \ud83d\ude00'");
    }

    @Test
    void plainTextIsUnchangedAndLongTextIsCut() {
        assertThat(GuestText.quote("ünïcödé/path name.txt")).isEqualTo("'ünïcödé/path name.txt'");
        assertThat(GuestText.quote("x".repeat(500))).isEqualTo("'" + "x".repeat(GuestText.MAX_QUOTED_CHARS)
                + "' (truncated)");
        assertThat(GuestText.quote(null)).isEqualTo("(none)");
    }
}
