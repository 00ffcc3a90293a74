package org.sandbox4j.core.outputs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.sandbox4j.core.NameNormalization;
import org.sandbox4j.core.SandboxArtifactNameInvalid;

class ArtifactNamesTest {

    /** U+0958 is 3 UTF-8 bytes; NFC decomposes it (a composition exclusion) into 6. */
    private static final String GROWS_UNDER_NFC = "\u0958".repeat(85);

    @Test
    void anEmptyNameIsRefused() {
        assertThatThrownBy(() -> ArtifactNames.validate(""))
                .isInstanceOf(SandboxArtifactNameInvalid.class)
                .hasMessageContaining("empty");
    }

    @Test
    void aBackslashIsRefused() {
        assertThatThrownBy(() -> ArtifactNames.validate("dir\\file.txt"))
                .isInstanceOf(SandboxArtifactNameInvalid.class)
                .hasMessageContaining("backslash");
    }

    @Test
    void aLeadingSlashIsRefused() {
        assertThatThrownBy(() -> ArtifactNames.validate("/etc/passwd"))
                .isInstanceOf(SandboxArtifactNameInvalid.class)
                .hasMessageContaining("starts with '/'");
    }

    @ParameterizedTest
    @ValueSource(strings = {"..", "../x", "a/../b", "a/.."})
    void aDotDotSegmentIsRefused(String name) {
        assertThatThrownBy(() -> ArtifactNames.validate(name))
                .isInstanceOf(SandboxArtifactNameInvalid.class)
                .hasMessageContaining("'..' segment");
    }

    @ParameterizedTest
    @ValueSource(strings = {".", "a//b", "a/./b", "./a", "a/", "a/."})
    void anEmptyOrDotSegmentIsRefused(String name) {
        assertThatThrownBy(() -> ArtifactNames.validate(name))
                .isInstanceOf(SandboxArtifactNameInvalid.class)
                .hasMessageContaining("empty or '.' segment");
    }

    @Test
    void controlCharactersAreRefusedByOrdinalWithoutEchoingThem() {
        assertThatThrownBy(() -> ArtifactNames.validate("a\u0001b\nc\nd\u001f"))
                .isInstanceOf(SandboxArtifactNameInvalid.class)
                .hasMessageContaining("ordinals 1, 10, 31")
                .satisfies(refusal -> assertThat(refusal.getMessage()).doesNotContain("\n"));
    }

    @Test
    void aNulIsAControlCharacter() {
        assertThatThrownBy(() -> ArtifactNames.validate("a\0b"))
                .isInstanceOf(SandboxArtifactNameInvalid.class)
                .hasMessageContaining("ordinals 0");
    }

    @Test
    void deleteIsNotAnAsciiControlCharacterHere() {
        assertThatCode(() -> ArtifactNames.validate("a\u007fb")).doesNotThrowAnyException();
    }

    @ParameterizedTest
    @ValueSource(strings = {"\ud800", "a\udc00b", "tail\ud83d"})
    void aLoneSurrogateIsRefused(String name) {
        assertThatThrownBy(() -> ArtifactNames.validate(name))
                .isInstanceOf(SandboxArtifactNameInvalid.class)
                .hasMessageContaining("UTF-8");
    }

    @Test
    void aSurrogatePairIsWellFormed() {
        assertThatCode(() -> ArtifactNames.validate("chart-\ud83d\udcc8.png")).doesNotThrowAnyException();
    }

    @Test
    void overTheByteLimitIsRefusedAndTheLimitItselfIsAdmitted() {
        assertThat(ArtifactNames.MAX_ARTIFACT_NAME_BYTES).isEqualTo(255);
        assertThatCode(() -> ArtifactNames.validate("a".repeat(255))).doesNotThrowAnyException();
        assertThatThrownBy(() -> ArtifactNames.validate("a".repeat(256)))
                .isInstanceOf(SandboxArtifactNameInvalid.class)
                .hasMessageContaining("256 UTF-8 bytes");
    }

    @Test
    void theLimitCountsBytesNotCharacters() {
        assertThatCode(() -> ArtifactNames.validate("é".repeat(127))).doesNotThrowAnyException();
        assertThatThrownBy(() -> ArtifactNames.validate("é".repeat(128)))
                .isInstanceOf(SandboxArtifactNameInvalid.class);
        assertThatThrownBy(() -> ArtifactNames.validate("é".repeat(255)))
                .isInstanceOf(SandboxArtifactNameInvalid.class);
    }

    @ParameterizedTest
    @ValueSource(strings = {"CON", "café.png", "report.pdf", "dir/sub/file.txt", "..hidden", ".profile", "a..b",
            "with space", "a:b"})
    void ordinaryNamesAreAdmitted(String name) {
        assertThatCode(() -> ArtifactNames.validate(name)).doesNotThrowAnyException();
    }

    @Test
    void nfcCanGrowANamePastTheLimit() {
        assertThat(GROWS_UNDER_NFC.getBytes(StandardCharsets.UTF_8)).hasSize(255);
        assertThatCode(() -> ArtifactNames.validate(ArtifactNames.deliveredName(GROWS_UNDER_NFC,
                NameNormalization.NONE))).doesNotThrowAnyException();

        String delivered = ArtifactNames.deliveredName(GROWS_UNDER_NFC, NameNormalization.NFC);
        assertThat(delivered.getBytes(StandardCharsets.UTF_8)).hasSize(510);
        assertThatThrownBy(() -> ArtifactNames.validate(delivered)).isInstanceOf(SandboxArtifactNameInvalid.class);
    }

    @Test
    void theDeliveredNameIsNfcUnlessTheSinkIsByteExact() {
        String decomposed = "cafe\u0301.png";
        assertThat(ArtifactNames.deliveredName(decomposed, NameNormalization.NFC)).isEqualTo("caf\u00e9.png");
        assertThat(ArtifactNames.deliveredName(decomposed, NameNormalization.NONE)).isEqualTo(decomposed);
    }

    @ParameterizedTest
    @CsvSource({
            "Report.PDF, report.pdf",
            "cafe\u0301.png, caf\u00e9.png",
            "CAFE\u0301.png, caf\u00e9.png",
            "a/./b, a/b",
            "a//b, a/b",
            "a/b/, a/b"})
    void spellingsThatLandOnOneFileShareACollisionKey(String one, String other) {
        assertThat(ArtifactNames.collisionKey(one)).isEqualTo(ArtifactNames.collisionKey(other));
    }

    @ParameterizedTest
    @CsvSource({
            "Straße, Strasse",
            "\ufb01le, file",
            "a.txt, b.txt",
            "dir/a, dira"})
    void lowerCaseIsNotCaseFolding(String one, String other) {
        assertThat(ArtifactNames.collisionKey(one)).isNotEqualTo(ArtifactNames.collisionKey(other));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "CON.txt|CON_.txt",
            "con|con_",
            "Aux.tar.gz|Aux_.tar.gz",
            "nul|nul_",
            "PRN|PRN_",
            "COM1|COM1_",
            "lpt9.log|lpt9_.log",
            "COM\u00b9|COM\u00b9_",
            "LPT\u00b3.txt|LPT\u00b3_.txt",
            "name. . |name",
            "...|_",
            "trailing.|trailing",
            "dir/CON/file.|dir/CON_/file",
            "a//b|a/_/b",
            "CON.|CON_"})
    void portableNameRewritesWhatWindowsRefuses(String name, String portable) {
        assertThat(ArtifactNames.portableName(name)).isEqualTo(portable);
    }

    @Test
    void portableNameReplacesEachCharacterWindowsForbids() {
        assertThat(ArtifactNames.portableName("a<b>c:d\"e|f?g*h")).isEqualTo("a_b_c_d_e_f_g_h");
    }

    @Test
    void portableNameReplacesControlCharacters() {
        assertThat(ArtifactNames.portableName("a\u0001b\tc")).isEqualTo("a_b_c");
    }

    @ParameterizedTest
    @ValueSource(strings = {"COM0", "COM10", "COM\u2074", "console.txt", "a.CON", "LPT", "CONSOLE", "report.pdf",
            "caf\u00e9.png"})
    void portableNameLeavesOrdinaryNamesAlone(String name) {
        assertThat(ArtifactNames.portableName(name)).isEqualTo(name);
    }

    @Property
    void portableNamesHoldNothingWindowsRefuses(@ForAll String name) {
        String portable = ArtifactNames.portableName(name);
        for (String segment : portable.split("/", -1)) {
            assertThat(segment).isNotEmpty().doesNotContainPattern("[<>:\"|?*\\x00-\\x1f]");
            assertThat(segment).doesNotEndWith(".").doesNotEndWith(" ");
        }
    }

    @Test
    void portableNameIsNeverAppliedByValidation() {
        assertThatCode(() -> ArtifactNames.validate("CON.txt")).doesNotThrowAnyException();
        assertThatCode(() -> ArtifactNames.validate("a:b")).doesNotThrowAnyException();
    }
}
