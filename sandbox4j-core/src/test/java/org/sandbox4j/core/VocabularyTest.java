package org.sandbox4j.core;

import org.sandbox4j.core.spi.GuestText;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.List;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/** The wire vocabulary: exact spellings, refuse-unknown parsing, and the two ladders. */
class VocabularyTest {

    /** Each vocabulary enum with its own parse method and its exact wire values in declaration order. */
    static Stream<Arguments> vocabularies() {
        return Stream.of(
                vocabulary(Isolation.class, Isolation::parse,
                        "none", "runtime", "os_process", "container", "hardened_container", "microvm", "vm"),
                vocabulary(Egress.class, Egress::parse, "unrestricted", "allowlist", "deny-all", "closed"),
                vocabulary(Capability.class, Capability::parse, "exec", "host_tools", "files_in",
                        "files_out", "files_list", "files_delete", "interactive_exec", "snapshot", "attached_identity"),
                vocabulary(ProcessSignal.class, ProcessSignal::parse, "hangup", "interrupt", "quit", "user1", "user2",
                        "terminate"),
                vocabulary(OsFamily.class, OsFamily::parse, "posix", "windows"),
                vocabulary(EntryKind.class, EntryKind::parse, "file", "directory", "symlink", "other"),
                vocabulary(OutputDisposition.class, OutputDisposition::parse, "land", "consume"),
                vocabulary(Identity.class, Identity::parse, "app", "user"),
                vocabulary(SourceIntegrity.class, SourceIntegrity::parse, "untrusted", "trusted"),
                vocabulary(NameNormalization.class, NameNormalization::parse, "nfc", "none"));
    }

    private static <E extends Enum<E> & WireValue> Arguments vocabulary(
            Class<E> type, Function<String, E> parse, String... wireValues) {
        return Arguments.of(type, parse, List.of(wireValues));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("vocabularies")
    void wireValuesAreExactlyTheContractSpellingsInOrder(Class<? extends Enum<?>> type, Function<String, ?> parse,
            List<String> wireValues) {
        assertThat(Arrays.stream(type.getEnumConstants()).map(constant -> ((WireValue) constant).wire()))
                .containsExactlyElementsOf(wireValues);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("vocabularies")
    void parsesEveryWireValueBackToItsConstant(Class<? extends Enum<?>> type, Function<String, ?> parse,
            List<String> wireValues) {
        for (Enum<?> constant : type.getEnumConstants()) {
            assertThat(parse.apply(((WireValue) constant).wire())).isSameAs(constant);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("vocabularies")
    void refusesUnknownTextListingTheValidValues(Class<? extends Enum<?>> type, Function<String, ?> parse,
            List<String> wireValues) {
        String valid = String.join(", ", wireValues);
        for (String unknown : List.of("bogus", "", " ", wireValues.get(0).toUpperCase(), " " + wireValues.get(0),
                wireValues.get(0) + " ", type.getEnumConstants()[0].name() + "x")) {
            assertThatThrownBy(() -> parse.apply(unknown))
                    .as("'%s'", unknown)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("'" + unknown + "' is not a valid " + type.getSimpleName())
                    .hasMessageEndingWith("valid values: " + valid);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("vocabularies")
    void refusesNull(Class<? extends Enum<?>> type, Function<String, ?> parse, List<String> wireValues) {
        assertThatThrownBy(() -> parse.apply(null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("null is not a valid " + type.getSimpleName());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("vocabularies")
    void refusesTheJavaConstantNameWhereItDiffersFromTheWireValue(Class<? extends Enum<?>> type,
            Function<String, ?> parse, List<String> wireValues) {
        for (Enum<?> constant : type.getEnumConstants()) {
            if (!constant.name().equals(((WireValue) constant).wire())) {
                assertThatThrownBy(() -> parse.apply(constant.name())).isInstanceOf(IllegalArgumentException.class);
            }
        }
    }

    @Test
    void quotesAHugeUnknownValueShortInTheRefusal() {
        String hostile = "v".repeat(100_000);
        assertThatThrownBy(() -> Isolation.parse(hostile))
                .hasMessageContaining("(truncated)")
                .satisfies(e -> assertThat(e.getMessage()).hasSizeLessThan(GuestText.MAX_QUOTED_CHARS * 3));
    }

    @Test
    void theOldNameOfTheBottomOsRungNeverParses() {
        assertThatThrownBy(() -> Isolation.parse("process"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("os_process");
        assertThat(Isolation.parse("os_process")).isSameAs(Isolation.OS_PROCESS);
    }

    @Test
    void theLadderIsPinnedWeakestFirst() {
        assertThat(Isolation.values()).containsExactly(Isolation.NONE, Isolation.RUNTIME, Isolation.OS_PROCESS,
                Isolation.CONTAINER, Isolation.HARDENED_CONTAINER, Isolation.MICROVM, Isolation.VM);
        assertThat(Isolation.ladder())
                .isEqualTo("none, runtime, os_process, container, hardened_container, microvm, vm");
    }

    @Test
    void isolationRanksAreDenseAndDistinctFromZero() {
        assertThat(Arrays.stream(Isolation.values()).map(Isolation::rank))
                .containsExactly(0, 1, 2, 3, 4, 5, 6);
    }

    @ParameterizedTest(name = "{0} meets floor {1}: {2}")
    @CsvSource({
        "NONE, NONE, true",
        "MICROVM, MICROVM, true",
        "VM, MICROVM, true",
        "HARDENED_CONTAINER, MICROVM, false",
        "CONTAINER, OS_PROCESS, true",
        "OS_PROCESS, CONTAINER, false",
        "RUNTIME, NONE, true",
        "NONE, RUNTIME, false",
        "VM, NONE, true",
        "NONE, VM, false",
    })
    void meetsFloorComparesRanks(Isolation declared, Isolation floor, boolean meets) {
        assertThat(declared.meetsFloor(floor)).isEqualTo(meets);
    }

    @Test
    void meetsFloorIsExactlyRankAtLeastFloorRank() {
        for (Isolation declared : Isolation.values()) {
            for (Isolation floor : Isolation.values()) {
                assertThat(declared.meetsFloor(floor)).as("%s vs %s", declared, floor)
                        .isEqualTo(declared.ordinal() >= floor.ordinal());
            }
        }
    }

    @Test
    void strongestPicksTheHigherRung() {
        assertThat(Isolation.strongest(Isolation.CONTAINER, Isolation.MICROVM)).isSameAs(Isolation.MICROVM);
        assertThat(Isolation.strongest(Isolation.VM, Isolation.NONE)).isSameAs(Isolation.VM);
        assertThat(Isolation.strongest(Isolation.RUNTIME, Isolation.RUNTIME)).isSameAs(Isolation.RUNTIME);
    }

    @Test
    void sourceIntegrityRanksUntrustedBelowTrusted() {
        assertThat(SourceIntegrity.values()).containsExactly(SourceIntegrity.UNTRUSTED, SourceIntegrity.TRUSTED);
        assertThat(SourceIntegrity.UNTRUSTED.rank()).isZero();
        assertThat(SourceIntegrity.TRUSTED.rank()).isEqualTo(1);
        assertThat(SourceIntegrity.weakest(SourceIntegrity.TRUSTED, SourceIntegrity.UNTRUSTED))
                .isSameAs(SourceIntegrity.UNTRUSTED);
        assertThat(SourceIntegrity.weakest(SourceIntegrity.TRUSTED, SourceIntegrity.TRUSTED))
                .isSameAs(SourceIntegrity.TRUSTED);
    }

    @Test
    void capabilityHasTheContractMembersInOrderWithoutRunCode() {
        // The family's run_code was removed here: code runs through exec (the execute_code kind), and
        // a spec naming run_code is refused by the parser like any other unknown capability.
        assertThat(Capability.values()).containsExactly(Capability.EXEC, Capability.HOST_TOOLS,
                Capability.FILES_IN, Capability.FILES_OUT, Capability.FILES_LIST, Capability.FILES_DELETE,
                Capability.INTERACTIVE_EXEC, Capability.SNAPSHOT, Capability.ATTACHED_IDENTITY);
    }

    @ParameterizedTest
    @ValueSource(strings = {"network", "NETWORK", "undefined"})
    void removedMembersDoNotParse(String removed) {
        assertThatThrownBy(() -> Capability.parse(removed)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Egress.parse(removed)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void defaultCapabilitiesAreExecAndFilesInAndUnmodifiable() {
        assertThat(Capability.DEFAULT_CAPABILITIES).containsExactlyInAnyOrder(Capability.EXEC, Capability.FILES_IN);
        assertThatThrownBy(() -> Capability.DEFAULT_CAPABILITIES.add(Capability.SNAPSHOT))
                .isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> Capability.DEFAULT_CAPABILITIES.remove(Capability.EXEC))
                .isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(Capability.DEFAULT_CAPABILITIES::clear).isInstanceOf(UnsupportedOperationException.class);
        assertThat(Capability.DEFAULT_CAPABILITIES).hasSize(2);
    }
}
