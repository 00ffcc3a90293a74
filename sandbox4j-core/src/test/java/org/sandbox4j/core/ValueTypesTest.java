package org.sandbox4j.core;

import org.sandbox4j.core.spi.ErrorDetail;
import org.sandbox4j.core.spi.PosixShell;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.RecordComponent;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The value types' defaults, validation and immutability. */
class ValueTypesTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final long MIB = 1024L * 1024;

    @Nested
    class Spec {

        @Test
        void defaultsMatchTheContract() {
            SandboxSpec spec = SandboxSpec.builder("execute_code").build();

            assertThat(spec.kind()).isEqualTo("execute_code");
            assertThat(spec.image()).isEmpty();
            assertThat(spec.imageId()).isEmpty();
            assertThat(spec.egressAllow()).isEmpty();
            assertThat(spec.workDir()).isEqualTo("/sandbox4j/work").isEqualTo(SandboxSpec.DEFAULT_WORK_DIR);
            assertThat(spec.labels()).isEmpty();
            assertThat(spec.requires()).containsExactly(Capability.EXEC, Capability.FILES_IN);
            assertThat(spec.minIsolation()).isEmpty();
            assertThat(spec.declaredOutputs()).isEmpty();
            assertThat(spec.filesIn()).isEqualTo(TransferLimits.DEFAULT);
            assertThat(spec.filesOut()).isEqualTo(TransferLimits.DEFAULT);
            assertThat(spec.outputsNamedAtCallTime()).isFalse();
            assertThat(spec.identities()).isEmpty();
            assertThat(spec.egress()).isEqualTo(Egress.CLOSED).isEqualTo(SandboxSpec.DEFAULT_EGRESS);
            assertThat(spec.requiresOsFamily()).isEmpty();
        }

        @Test
        void componentOrderIsTheCompatibilityContract() {
            assertThat(Arrays.stream(SandboxSpec.class.getRecordComponents()).map(RecordComponent::getName))
                    .containsExactly("kind", "image", "imageId", "egressAllow", "workDir", "labels", "requires",
                            "minIsolation", "declaredOutputs", "filesIn", "filesOut", "outputsNamedAtCallTime",
                            "identities", "egress", "requiresOsFamily");
        }

        @ParameterizedTest
        @ValueSource(strings = {"CLOSED", "UNRESTRICTED"})
        void anAllowlistWithoutAllowlistModeIsRefusedNamingHostsAndMode(Egress mode) {
            assertThatThrownBy(() -> SandboxSpec.builder("k").egressAllow("pypi.org", "example.com").egress(mode).build())
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("pypi.org")
                    .hasMessageContaining("example.com")
                    .hasMessageContaining("'" + mode.wire() + "'")
                    .hasMessageContaining("Egress.ALLOWLIST");
        }

        @Test
        void allowlistModeAdmitsHosts() {
            SandboxSpec spec = SandboxSpec.builder("k").egress(Egress.ALLOWLIST).egressAllow("pypi.org").build();
            assertThat(spec.egressAllow()).containsExactly("pypi.org");
            assertThat(spec.egress()).isEqualTo(Egress.ALLOWLIST);
        }

        @Test
        void allowlistModeWithoutHostsIsAccepted() {
            // Nothing listed means everything is denied; that is a policy, not a mistake.
            assertThat(SandboxSpec.builder("k").egress(Egress.ALLOWLIST).build().egressAllow()).isEmpty();
        }

        @Test
        void theWorkDirIsNeverValidatedNorRewritten() {
            assertThat(SandboxSpec.builder("k").workDir("C:\\work\\.").build().workDir()).isEqualTo("C:\\work\\.");
            assertThat(SandboxSpec.builder("k").workDir("/w//x/").build().workDir()).isEqualTo("/w//x/");
        }

        @ParameterizedTest
        @ValueSource(strings = {"", " ", "\t"})
        void aBlankKindIsRefused(String kind) {
            assertThatThrownBy(() -> SandboxSpec.builder(kind).build())
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("kind");
        }

        @Test
        void nullsAreRefused() {
            assertThatThrownBy(() -> SandboxSpec.builder(null).build()).isInstanceOf(NullPointerException.class);
            assertThatThrownBy(() -> SandboxSpec.builder("k").egress(null).build()).isInstanceOf(NullPointerException.class);
            assertThatThrownBy(() -> SandboxSpec.builder("k").label("a", null).build())
                    .isInstanceOf(NullPointerException.class);
            assertThatThrownBy(() -> SandboxSpec.builder("k").egress(Egress.ALLOWLIST).egressAllow("a", null).build())
                    .isInstanceOf(NullPointerException.class);
        }

        @Test
        void collectionsAreImmutable() {
            SandboxSpec spec = full();
            assertThatThrownBy(() -> spec.egressAllow().add("x")).isInstanceOf(UnsupportedOperationException.class);
            assertThatThrownBy(() -> spec.labels().put("x", "y")).isInstanceOf(UnsupportedOperationException.class);
            assertThatThrownBy(() -> spec.requires().add(Capability.SNAPSHOT))
                    .isInstanceOf(UnsupportedOperationException.class);
            assertThatThrownBy(() -> spec.declaredOutputs().clear()).isInstanceOf(UnsupportedOperationException.class);
            assertThatThrownBy(() -> spec.identities().add(Identity.USER))
                    .isInstanceOf(UnsupportedOperationException.class);
        }

        @Test
        void theCanonicalConstructorCopiesWhatItIsGiven() {
            List<String> hosts = new ArrayList<>(List.of("pypi.org"));
            Map<String, String> labels = new HashMap<>(Map.of("team", "a"));
            Set<Capability> requires = EnumSet.of(Capability.EXEC);
            List<DeclaredOutput> outputs = new ArrayList<>(List.of(DeclaredOutput.land("out.png")));
            Set<Identity> identities = EnumSet.of(Identity.APP);
            SandboxSpec spec = new SandboxSpec("k", Optional.empty(), Optional.empty(), hosts, "/w", labels, requires,
                    Optional.empty(), outputs, TransferLimits.DEFAULT, TransferLimits.DEFAULT, false, identities,
                    Egress.ALLOWLIST, Optional.empty());

            hosts.add("evil.example");
            labels.put("team", "b");
            requires.add(Capability.SNAPSHOT);
            outputs.add(DeclaredOutput.land("more"));
            identities.add(Identity.USER);

            assertThat(spec.egressAllow()).containsExactly("pypi.org");
            assertThat(spec.labels()).containsExactly(Map.entry("team", "a"));
            assertThat(spec.requires()).containsExactly(Capability.EXEC);
            assertThat(spec.declaredOutputs()).containsExactly(DeclaredOutput.land("out.png"));
            assertThat(spec.identities()).containsExactly(Identity.APP);
        }

        @Test
        void aBuilderChangedAfterBuildLeavesTheSpecAlone() {
            SandboxSpec.Builder builder = SandboxSpec.builder("k").label("a", "1").alsoRequires(Capability.FILES_OUT);
            SandboxSpec first = builder.build();
            builder.label("b", "2").alsoRequires(Capability.SNAPSHOT);

            assertThat(first.labels()).containsOnlyKeys("a");
            assertThat(first.requires()).containsExactly(Capability.EXEC, Capability.FILES_IN, Capability.FILES_OUT);
        }

        @Test
        void requiresReplacesAndAlsoRequiresAdds() {
            assertThat(SandboxSpec.builder("k").requires(Capability.HOST_TOOLS).build().requires())
                    .containsExactly(Capability.HOST_TOOLS);
            assertThat(SandboxSpec.builder("k").requires(Set.of()).build().requires()).isEmpty();
            assertThat(SandboxSpec.builder("k").alsoRequires(Capability.FILES_LIST).build().requires())
                    .containsExactly(Capability.EXEC, Capability.FILES_IN, Capability.FILES_LIST);
        }

        @Test
        void toBuilderRoundTripsEveryComponent() {
            SandboxSpec spec = full();
            assertThat(spec.toBuilder().build()).isEqualTo(spec);
        }

        @Test
        void toBuilderDerivesAChangedCopyWithoutTouchingTheOriginal() {
            SandboxSpec spec = full();
            SandboxSpec changed = spec.toBuilder().label("extra", "x").alsoRequires(Capability.SNAPSHOT)
                    .egress(Egress.CLOSED).egressAllow(List.of()).build();

            assertThat(changed.labels()).containsKey("extra");
            assertThat(changed.requires()).contains(Capability.SNAPSHOT);
            assertThat(changed.egress()).isEqualTo(Egress.CLOSED);
            assertThat(spec).isEqualTo(full());
        }

        @Test
        void toBuilderOfEmptySetsStaysEmpty() {
            SandboxSpec spec = SandboxSpec.builder("k").requires(Set.of()).build();
            assertThat(spec.toBuilder().build().requires()).isEmpty();
        }

        /** A spec with every component away from its default. */
        private SandboxSpec full() {
            return SandboxSpec.builder("execute_code")
                    .image("python:3.12")
                    .imageId("sha256:abc")
                    .egress(Egress.ALLOWLIST)
                    .egressAllow("pypi.org", "files.pythonhosted.org")
                    .workDir("/srv/work")
                    .label("team", "a")
                    .label("tier", "b")
                    .requires(Capability.EXEC, Capability.FILES_IN, Capability.FILES_OUT)
                    .minIsolation(Isolation.MICROVM)
                    .declaredOutputs(DeclaredOutput.land("out.png").withMediaType("image/png"),
                            DeclaredOutput.consume("result.json").optional())
                    .filesIn(new TransferLimits(1, 2, 3))
                    .filesOut(new TransferLimits(4, 5, 6))
                    .outputsNamedAtCallTime(true)
                    .identities(Set.of(Identity.APP))
                    .requiresOsFamily(OsFamily.POSIX)
                    .build();
        }
    }

    @Nested
    class Limits {

        @Test
        void transferDefaultsAre8MiB32MiBAnd64Files() {
            assertThat(TransferLimits.DEFAULT.maxBytesPerFile()).isEqualTo(8 * MIB);
            assertThat(TransferLimits.DEFAULT.maxTotalBytes()).isEqualTo(32 * MIB);
            assertThat(TransferLimits.DEFAULT.maxFiles()).isEqualTo(64);
        }

        @Test
        void theDefaultsFitTheDefaultCeilingByEquality() {
            assertThat(TransferLimits.DEFAULT.within(TransferLimits.DEFAULT)).isTrue();
            assertThat(SandboxLimits.DEFAULT.filesIn()).isEqualTo(TransferLimits.DEFAULT);
            assertThat(SandboxLimits.DEFAULT.filesOut()).isEqualTo(TransferLimits.DEFAULT);
        }

        @Test
        void eachLegOverTheCeilingIsRefusedByWithin() {
            TransferLimits ceiling = TransferLimits.DEFAULT;
            long perFile = ceiling.maxBytesPerFile();
            long total = ceiling.maxTotalBytes();
            int files = ceiling.maxFiles();
            assertThat(new TransferLimits(perFile + 1, total, files).within(ceiling)).isFalse();
            assertThat(new TransferLimits(perFile, total + 1, files).within(ceiling)).isFalse();
            assertThat(new TransferLimits(perFile, total, files + 1).within(ceiling)).isFalse();
        }

        @Test
        void eachLegBelowTheCeilingIsWithin() {
            assertThat(new TransferLimits(0, 0, 0).within(TransferLimits.DEFAULT)).isTrue();
            assertThat(new TransferLimits(1, 32 * MIB, 64).within(TransferLimits.DEFAULT)).isTrue();
            assertThat(TransferLimits.DEFAULT.within(new TransferLimits(0, 0, 0))).isFalse();
        }

        @Test
        void negativeLegsAreRefused() {
            assertThatThrownBy(() -> new TransferLimits(-1, 0, 0)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("negative");
            assertThatThrownBy(() -> new TransferLimits(0, -1, 0)).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> new TransferLimits(0, 0, -1)).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> new TransferLimits(Long.MIN_VALUE, 0, 0)).isInstanceOf(IllegalArgumentException.class);
        }

        @Test
        void sandboxLimitsRefuseNull() {
            assertThatThrownBy(() -> new SandboxLimits(null, TransferLimits.DEFAULT))
                    .isInstanceOf(NullPointerException.class);
            assertThatThrownBy(() -> new SandboxLimits(TransferLimits.DEFAULT, null))
                    .isInstanceOf(NullPointerException.class);
        }
    }

    @Nested
    class Declarations {

        @Test
        void silenceIsReadAsTheReferenceReadsIt() {
            BackendDeclarations silent = BackendDeclarations.builder(Isolation.CONTAINER).build();

            assertThat(silent.isolation()).isEqualTo(Isolation.CONTAINER);
            assertThat(silent.capabilities()).isEqualTo(Capability.DEFAULT_CAPABILITIES);
            assertThat(silent.limits()).isEqualTo(SandboxLimits.DEFAULT);
            assertThat(silent.egressModes()).isEmpty();
            assertThat(silent.osFamilies()).isEmpty();
        }

        @Test
        void theCanonicalConstructorReadsNullSetsAsSilence() {
            BackendDeclarations silent =
                    new BackendDeclarations(Isolation.MICROVM, null, null, SandboxLimits.DEFAULT, null);
            assertThat(silent.capabilities()).isEqualTo(Capability.DEFAULT_CAPABILITIES);
            assertThat(silent.egressModes()).isEmpty();
            assertThat(silent.osFamilies()).isEmpty();
        }

        @Test
        void anExplicitlyEmptyCapabilitySetIsNotSilence() {
            assertThat(BackendDeclarations.builder(Isolation.VM).capabilities(List.of()).build().capabilities()).isEmpty();
        }

        @Test
        void explicitNullLimitsAreRefusedNamingSandboxLimits() {
            assertThatThrownBy(() -> new BackendDeclarations(Isolation.VM, null, null, null, null))
                    .isInstanceOf(SandboxTransferLimitsNotPermitted.class)
                    .hasMessageContaining("SandboxLimits");
            assertThatThrownBy(() -> BackendDeclarations.builder(Isolation.VM).limits(null))
                    .isInstanceOf(SandboxTransferLimitsNotPermitted.class)
                    .hasMessageContaining("SandboxLimits");
        }

        @Test
        void anIsolationIsRequiredAndTheRefusalListsTheLadder() {
            assertThatThrownBy(() -> BackendDeclarations.builder(null).build())
                    .isInstanceOf(NullPointerException.class)
                    .hasMessageContaining(Isolation.ladder());
        }

        @Test
        void declaredSetsAreCopiedAndImmutable() {
            List<Egress> modes = new ArrayList<>(List.of(Egress.CLOSED));
            BackendDeclarations declared = BackendDeclarations.builder(Isolation.CONTAINER)
                    .capabilities(Capability.EXEC, Capability.FILES_IN, Capability.FILES_DELETE)
                    .egressModes(modes)
                    .osFamilies(OsFamily.POSIX)
                    .limits(new SandboxLimits(new TransferLimits(1, 2, 3), TransferLimits.DEFAULT))
                    .build();
            modes.add(Egress.UNRESTRICTED);

            assertThat(declared.egressModes()).containsExactly(Egress.CLOSED);
            assertThat(declared.capabilities())
                    .containsExactly(Capability.EXEC, Capability.FILES_IN, Capability.FILES_DELETE);
            assertThat(declared.osFamilies()).containsExactly(OsFamily.POSIX);
            assertThat(declared.limits().filesIn()).isEqualTo(new TransferLimits(1, 2, 3));
            assertThatThrownBy(() -> declared.capabilities().add(Capability.SNAPSHOT))
                    .isInstanceOf(UnsupportedOperationException.class);
            assertThatThrownBy(() -> declared.egressModes().add(Egress.UNRESTRICTED))
                    .isInstanceOf(UnsupportedOperationException.class);
            assertThatThrownBy(() -> declared.osFamilies().add(OsFamily.WINDOWS))
                    .isInstanceOf(UnsupportedOperationException.class);
        }
    }

    @Nested
    class Entries {

        @Test
        void aLinkHasNoSize() {
            assertThatThrownBy(() -> new SandboxEntry("l", EntryKind.SYMLINK, OptionalLong.of(12)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("link");
            assertThat(SandboxEntry.symlink("l").sizeBytes()).isEmpty();
        }

        @Test
        void aNegativeSizeIsRefused() {
            assertThatThrownBy(() -> SandboxEntry.file("f", -1)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("negative");
        }

        @Test
        void factoriesSetKindAndSize() {
            assertThat(SandboxEntry.file("f", 0)).isEqualTo(new SandboxEntry("f", EntryKind.FILE, OptionalLong.of(0)));
            assertThat(SandboxEntry.fileOfUnknownSize("f").sizeBytes()).isEmpty();
            assertThat(SandboxEntry.directory("d").kind()).isEqualTo(EntryKind.DIRECTORY);
            assertThat(SandboxEntry.other("o").kind()).isEqualTo(EntryKind.OTHER);
            assertThat(SandboxEntry.symlink("l").kind()).isEqualTo(EntryKind.SYMLINK);
        }

        @Test
        void modeAndTimeAreKeptAndCanBeLeftOutForComparison() {
            java.time.Instant time = java.time.Instant.parse("2020-01-02T03:04:05Z");
            SandboxEntry entry = SandboxEntry.file("f", 3).withMode(04755).withModified(time);
            assertThat(entry.mode()).hasValue(04755);
            assertThat(entry.modified()).contains(time);
            assertThat(entry).isNotEqualTo(SandboxEntry.file("f", 3));
            assertThat(entry.withoutAttributes()).isEqualTo(SandboxEntry.file("f", 3));
            assertThatThrownBy(() -> SandboxEntry.file("f", 3).withMode(010000))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("07777");
            assertThatThrownBy(() -> SandboxEntry.file("f", 3).withMode(-1)).isInstanceOf(IllegalArgumentException.class);
        }

        @Test
        void nullsAreRefused() {
            assertThatThrownBy(() -> new SandboxEntry(null, EntryKind.FILE, OptionalLong.empty()))
                    .isInstanceOf(NullPointerException.class);
            assertThatThrownBy(() -> new SandboxEntry("f", null, OptionalLong.empty()))
                    .isInstanceOf(NullPointerException.class);
            assertThatThrownBy(() -> new SandboxEntry("f", EntryKind.FILE, null))
                    .isInstanceOf(NullPointerException.class);
        }
    }

    @Nested
    class Outputs {

        @Test
        void aDeclaredOutputLandsUnderItsPathByDefault() {
            DeclaredOutput output = DeclaredOutput.land("plots/out.png");
            assertThat(output.disposition()).isEqualTo(OutputDisposition.LAND);
            assertThat(output.required()).isTrue();
            assertThat(output.mediaType()).isEmpty();
            assertThat(output.landingName()).isEqualTo("plots/out.png");
            assertThat(output.named("chart.png").landingName()).isEqualTo("chart.png");
            assertThat(output.optional().required()).isFalse();
            assertThat(DeclaredOutput.consume("r.json").disposition()).isEqualTo(OutputDisposition.CONSUME);
        }

        @Test
        void aKeyRefusesNulls() {
            assertThatThrownBy(() -> new SandboxKey(null, "t", "a")).isInstanceOf(NullPointerException.class);
            assertThatThrownBy(() -> new SandboxKey("s", null, "a")).isInstanceOf(NullPointerException.class);
            assertThatThrownBy(() -> new SandboxKey("s", "t", null)).isInstanceOf(NullPointerException.class);
        }
    }

    @Nested
    class Results {

        @Test
        void bytesAreCopiedInAndOut() {
            byte[] out = "out".getBytes(StandardCharsets.UTF_8);
            ExecResult result = new ExecResult(out, new byte[0], 0, Duration.ZERO);
            out[0] = 'X';
            assertThat(result.stdoutText()).isEqualTo("out");

            result.stdout()[0] = 'Y';
            assertThat(result.stdoutText()).isEqualTo("out");
            assertThat(result.stdout()).isNotSameAs(result.stdout());
        }

        @Test
        void textAccessorsDecodeUtf8AndReplaceMalformedInput() {
            ExecResult text = ExecResult.of("h\u00e9llo \u2713", "warn", 3, Duration.ofMillis(5));
            assertThat(text.stdoutText()).isEqualTo("h\u00e9llo \u2713");
            assertThat(text.stderrText()).isEqualTo("warn");
            assertThat(text.exitCode()).isEqualTo(3);
            assertThat(text.succeeded()).isFalse();

            ExecResult malformed = new ExecResult(new byte[] {'a', (byte) 0xFF, 'b'}, new byte[] {(byte) 0xC3},
                    0, Duration.ZERO);
            assertThat(malformed.stdoutText()).isEqualTo("a\uFFFDb");
            assertThat(malformed.stderrText()).isEqualTo("\uFFFD");
            assertThat(malformed.succeeded()).isTrue();
        }

        @Test
        void equalityIsByContent() {
            ExecResult a = ExecResult.of("o", "e", 1, Duration.ofSeconds(1));
            ExecResult b = new ExecResult(new byte[] {'o'}, new byte[] {'e'}, 1, Duration.ofSeconds(1));
            assertThat(a).isEqualTo(b).hasSameHashCodeAs(b);
            assertThat(a).isNotEqualTo(ExecResult.of("o", "e", 2, Duration.ofSeconds(1)));
            assertThat(a).isNotEqualTo(ExecResult.of("o", "E", 1, Duration.ofSeconds(1)));
            assertThat(a).isNotEqualTo(ExecResult.of("O", "e", 1, Duration.ofSeconds(1)));
            assertThat(a).isNotEqualTo(ExecResult.of("o", "e", 1, Duration.ofSeconds(2)));
        }

        @Test
        void toStringGivesSizesNotContent() {
            String secret = "token-abc123";
            assertThat(ExecResult.of(secret, "", 0, Duration.ZERO).toString())
                    .doesNotContain(secret)
                    .contains(secret.length() + " bytes");
        }

        @Test
        void nullsAreRefused() {
            assertThatThrownBy(() -> new ExecResult(null, new byte[0], 0, Duration.ZERO))
                    .isInstanceOf(NullPointerException.class);
            assertThatThrownBy(() -> new ExecResult(new byte[0], null, 0, Duration.ZERO))
                    .isInstanceOf(NullPointerException.class);
            assertThatThrownBy(() -> new ExecResult(new byte[0], new byte[0], 0, null))
                    .isInstanceOf(NullPointerException.class);
        }
    }

    @Nested
    class Commands {

        /** Words a shell would otherwise expand, split, glob or terminate on. */
        private static final List<String> HOSTILE_WORDS = List.of(
                "a b$(echo injected)c", "'", "\"", "it's", "a'b\"c", "'\\''", "line1\nline2", "$HOME", "${IFS}",
                "`id`", "; echo pwned", "&& echo pwned", "| cat", "> /tmp/x", "*", "?", "[a]", "~", "!", "\\",
                "\\n", "", " ", "\t", "-n", "--", "%s", "#comment", "a\\'b");

        private static final long SHELL_BOUND_SECONDS = 30;

        @Test
        void argvIsTheDefaultAndKeepsEveryWordVerbatim() {
            Command.Argv command = Command.argv("printf", "%s", "a b");
            assertThat(command.words()).containsExactly("printf", "%s", "a b");
            assertThat(command).isEqualTo(Command.argv(List.of("printf", "%s", "a b")));
        }

        @Test
        void argvWordsAreCopied() {
            List<String> words = new ArrayList<>(List.of("ls"));
            Command.Argv command = Command.argv(words);
            words.add("-la");
            assertThat(command.words()).containsExactly("ls");
            assertThatThrownBy(() -> command.words().add("x")).isInstanceOf(UnsupportedOperationException.class);
        }

        @Test
        void anEmptyArgvOrProgramIsRefused() {
            assertThatThrownBy(() -> Command.argv(List.of())).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("program");
            assertThatThrownBy(() -> Command.argv("")).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("program");
            assertThatThrownBy(() -> Command.argv("ls", (String) null)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("null");
            assertThatThrownBy(() -> Command.argv((String) null)).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> Command.argv((List<String>) null)).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> Command.argv(java.util.Arrays.asList("ls", null)))
                    .isInstanceOf(IllegalArgumentException.class);
        }

        @Test
        void aNulIsRefusedInEveryForm() {
            assertThatThrownBy(() -> Command.argv("printf", "a\0b")).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("NUL");
            assertThatThrownBy(() -> Command.shell("echo a\0b")).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("NUL");
            assertThatThrownBy(() -> PosixShell.quote("a\0b")).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("NUL");
        }

        @Test
        void aShellLineIsKeptAsIsAndMustNotBeBlank() {
            assertThat(Command.shell("test -d x || mkdir x").toShellLine()).isEqualTo("test -d x || mkdir x");
            assertThatThrownBy(() -> Command.shell(" ")).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> Command.shell(null)).isInstanceOf(IllegalArgumentException.class);
        }

        @Test
        void quotingIsSingleQuotesWithEmbeddedQuotesClosedAndReopened() {
            assertThat(PosixShell.quote("abc")).isEqualTo("'abc'");
            assertThat(PosixShell.quote("")).isEqualTo("''");
            assertThat(PosixShell.quote("it's")).isEqualTo("'it'\\''s'");
            assertThat(PosixShell.join(List.of("a b", "c"))).isEqualTo("'a b' 'c'");
            assertThat(Command.argv("echo", "$HOME").toShellLine()).isEqualTo("'echo' '$HOME'");
        }

        @EnabledOnOs({OS.LINUX, OS.MAC})
        @Test
        void everyHostileWordReachesARealShellVerbatim() throws Exception {
            for (String word : HOSTILE_WORDS) {
                String line = Command.argv("printf", "%s", word).toShellLine();
                assertThat(runInShell(line)).as("word %s as %s", word, line).isEqualTo(word);
            }
        }

        @EnabledOnOs({OS.LINUX, OS.MAC})
        @Test
        void wordBoundariesSurviveARealShell() throws Exception {
            List<String> words = new ArrayList<>(List.of("printf", "<%s>"));
            words.addAll(HOSTILE_WORDS);
            StringBuilder expected = new StringBuilder();
            for (String word : HOSTILE_WORDS) {
                expected.append('<').append(word).append('>');
            }
            assertThat(runInShell(Command.argv(words).toShellLine())).isEqualTo(expected.toString());
        }

        /** Runs {@code line} with {@code /bin/sh -c} and returns its standard output. */
        private String runInShell(String line) throws IOException, InterruptedException {
            assertThat(Path.of("/bin/sh")).satisfies(sh -> assertThat(Files.isExecutable(sh)).isTrue());
            Process process = new ProcessBuilder("/bin/sh", "-c", line).redirectErrorStream(true).start();
            process.getOutputStream().close();
            byte[] output;
            try (InputStream stdout = process.getInputStream()) {
                ByteArrayOutputStream buffer = new ByteArrayOutputStream();
                stdout.transferTo(buffer);
                output = buffer.toByteArray();
            }
            assertThat(process.waitFor(SHELL_BOUND_SECONDS, TimeUnit.SECONDS)).as("sh finished").isTrue();
            assertThat(process.exitValue()).as("exit code of %s", line).isZero();
            return new String(output, StandardCharsets.UTF_8);
        }
    }

    @Nested
    class Options {

        @Test
        void defaults() {
            ExecOptions options = ExecOptions.in("/w", TIMEOUT);
            assertThat(options.workingDirectory()).isEqualTo("/w");
            assertThat(options.timeout()).isEqualTo(TIMEOUT);
            assertThat(options.environment()).isEmpty();
            assertThat(options.stdin()).isEmpty();
            assertThat(options.outputCapBytes()).isEqualTo(8 * MIB).isEqualTo(ExecOptions.DEFAULT_OUTPUT_CAP_BYTES);
            assertThat(options.listener()).isEmpty();
        }

        @Test
        void aTimeoutIsRequiredAndPositive() {
            assertThatThrownBy(() -> ExecOptions.in("/w", null)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("timeout");
            assertThatThrownBy(() -> ExecOptions.in("/w", java.time.temporal.ChronoUnit.FOREVER.getDuration()))
                    .as("a bound that overflows every clock").isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("at most 24 hours");
            assertThat(ExecOptions.in("/w", ExecOptions.MAX_TIMEOUT).timeout()).isEqualTo(Duration.ofDays(1));
            assertThatThrownBy(() -> ExecOptions.in(null, TIMEOUT)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("working directory");
            assertThatThrownBy(() -> ExecOptions.in("/w", Duration.ZERO)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("positive");
            assertThatThrownBy(() -> ExecOptions.in("/w", Duration.ofSeconds(-1)))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> ExecOptions.in("/w", TIMEOUT).withTimeout(Duration.ZERO))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThat(ExecOptions.in("/w", Duration.ofNanos(1)).timeout()).isEqualTo(Duration.ofNanos(1));
        }

        @ParameterizedTest
        @ValueSource(strings = {"", "A=B", "=", "A\0B", "A B", "A\nB", "1ABC", "A-B", "A.B", "\u00c4"})
        void invalidEnvironmentNamesAreRefused(String name) {
            assertThatThrownBy(() -> ExecOptions.in("/w", TIMEOUT).withEnvironment(Map.of(name, "v")))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("environment variable name");
        }

        @Test
        void environmentValuesAreValidated() {
            Map<String, String> nullValue = new HashMap<>();
            nullValue.put("A", null);
            assertThatThrownBy(() -> ExecOptions.in("/w", TIMEOUT).withEnvironment(nullValue))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> ExecOptions.in("/w", TIMEOUT).withEnvironment(Map.of("A", "x\0y")))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("NUL");
            // Anything else is a legal value, '=' and newlines included.
            assertThat(ExecOptions.in("/w", TIMEOUT).withEnvironment(Map.of("A", "b=c\nd")).environment())
                    .containsExactly(Map.entry("A", "b=c\nd"));
        }

        @Test
        void theEnvironmentIsCopiedAndImmutable() {
            Map<String, String> variables = new LinkedHashMap<>(Map.of("A", "1"));
            ExecOptions options = ExecOptions.in("/w", TIMEOUT).withEnvironment(variables);
            variables.put("B", "2");
            assertThat(options.environment()).containsOnlyKeys("A");
            assertThatThrownBy(() -> options.environment().put("C", "3"))
                    .isInstanceOf(UnsupportedOperationException.class);
        }

        @Test
        void stdinIsCopiedInAndOut() {
            byte[] input = {1, 2, 3};
            ExecOptions options = ExecOptions.in("/w", TIMEOUT).withStdin(input);
            input[0] = 9;
            assertThat(options.stdin()).hasValueSatisfying(bytes -> assertThat(bytes).containsExactly(1, 2, 3));
            options.stdin().orElseThrow()[1] = 9;
            assertThat(options.stdin()).hasValueSatisfying(bytes -> assertThat(bytes).containsExactly(1, 2, 3));
        }

        @Test
        void optionsWithEqualStdinAreEqualAndToStringHidesEnvironmentValues() {
            ExecOptions a = ExecOptions.in("/w", TIMEOUT).withStdin(new byte[] {1, 2}).withEnvironment(Map.of("K", "s3cret"));
            ExecOptions b = ExecOptions.in("/w", TIMEOUT).withStdin(new byte[] {1, 2}).withEnvironment(Map.of("K", "s3cret"));
            assertThat(a).isEqualTo(b).hasSameHashCodeAs(b);
            assertThat(a).isNotEqualTo(b.withStdin(new byte[] {1, 3}));
            assertThat(a.toString()).contains("K").contains("2 bytes").doesNotContain("s3cret");
        }

        @Test
        void theOutputCapMustBeAtLeastOneByte() {
            assertThatThrownBy(() -> ExecOptions.in("/w", TIMEOUT).withOutputCap(2L << 30))
                    .as("a cap the host cannot hold").isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("at most " + HostCeilings.MAX_BUFFERED_BYTES);
            assertThat(ExecOptions.in("/w", TIMEOUT).withOutputCap(HostCeilings.MAX_BUFFERED_BYTES).outputCapBytes())
                    .isEqualTo(HostCeilings.MAX_BUFFERED_BYTES);
            assertThatThrownBy(() -> ExecOptions.in("/w", TIMEOUT).withOutputCap(0))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThat(ExecOptions.in("/w", TIMEOUT).withOutputCap(1).outputCapBytes()).isEqualTo(1);
        }

        @Test
        void eachWitherChangesOnlyItsOwnComponent() {
            ExecListener listener = (stream, chunk) -> { };
            ExecOptions base = ExecOptions.in("/w", TIMEOUT)
                    .withEnvironment(Map.of("A", "1"))
                    .withStdin(new byte[] {7})
                    .withOutputCap(99)
                    .withListener(listener);

            assertThat(base.withWorkingDirectory("/other")).satisfies(changed -> {
                assertThat(changed.workingDirectory()).isEqualTo("/other");
                assertSameExcept(base, changed, "workingDirectory");
            });
            assertThat(base.withTimeout(Duration.ofSeconds(1))).satisfies(changed -> {
                assertThat(changed.timeout()).isEqualTo(Duration.ofSeconds(1));
                assertSameExcept(base, changed, "timeout");
            });
            assertThat(base.withEnvironment(Map.of("B", "2"))).satisfies(changed -> {
                assertThat(changed.environment()).containsExactly(Map.entry("B", "2"));
                assertSameExcept(base, changed, "environment");
            });
            assertThat(base.withStdin(new byte[] {8})).satisfies(changed -> {
                assertThat(changed.stdin().orElseThrow()).containsExactly(8);
                assertSameExcept(base, changed, "stdin");
            });
            assertThat(base.withOutputCap(5)).satisfies(changed -> {
                assertThat(changed.outputCapBytes()).isEqualTo(5);
                assertSameExcept(base, changed, "outputCapBytes");
            });
            ExecListener other = (stream, chunk) -> { };
            assertThat(base.withListener(other)).satisfies(changed -> {
                assertThat(changed.listener()).containsSame(other);
                assertSameExcept(base, changed, "listener");
            });
        }

        private void assertSameExcept(ExecOptions expected, ExecOptions actual, String changed) {
            if (!changed.equals("workingDirectory")) {
                assertThat(actual.workingDirectory()).isEqualTo(expected.workingDirectory());
            }
            if (!changed.equals("timeout")) {
                assertThat(actual.timeout()).isEqualTo(expected.timeout());
            }
            if (!changed.equals("environment")) {
                assertThat(actual.environment()).isEqualTo(expected.environment());
            }
            if (!changed.equals("stdin")) {
                assertThat(actual.stdin().orElseThrow()).isEqualTo(expected.stdin().orElseThrow());
            }
            if (!changed.equals("outputCapBytes")) {
                assertThat(actual.outputCapBytes()).isEqualTo(expected.outputCapBytes());
            }
            if (!changed.equals("listener")) {
                assertThat(actual.listener().orElseThrow()).isSameAs(expected.listener().orElseThrow());
            }
        }
    }

    @Nested
    class Caller {

        @Test
        void buildingAContextCallsNothing() {
            AtomicInteger calls = new AtomicInteger();
            CallerContext.of(() -> "s" + calls.incrementAndGet(), () -> "t" + calls.incrementAndGet(),
                    store -> {
                        calls.incrementAndGet();
                        return List.of();
                    });
            assertThat(calls).hasValue(0);
        }

        @Test
        void suppliersAreReadOnEveryCall() {
            AtomicReference<String> scope = new AtomicReference<>("tenant-a");
            AtomicReference<String> thread = new AtomicReference<>("thread-1");
            CallerContext context = CallerContext.of(scope::get, thread::get, FileListing.NONE);

            assertThat(context.key("agent")).isEqualTo(new SandboxKey("tenant-a", "thread-1", "agent"));
            thread.set("thread-2");
            assertThat(context.key("agent")).isEqualTo(new SandboxKey("tenant-a", "thread-2", "agent"));
            scope.set("tenant-b");
            assertThat(context.key("other")).isEqualTo(new SandboxKey("tenant-b", "thread-2", "other"));
        }

        @ParameterizedTest
        @ValueSource(strings = {"", " ", "\t\n"})
        void aBlankThreadIsRefusedWithoutConsultingTheScope(String blank) {
            assertThreadRefusedBeforeScope(blank);
        }

        @Test
        void aMissingThreadIsRefusedWithoutConsultingTheScope() {
            assertThreadRefusedBeforeScope(null);
        }

        private void assertThreadRefusedBeforeScope(String thread) {
            AtomicInteger scopeReads = new AtomicInteger();
            CallerContext context = CallerContext.of(() -> {
                scopeReads.incrementAndGet();
                return "tenant";
            }, () -> thread, FileListing.NONE);

            assertThatThrownBy(() -> context.key("agent"))
                    .isInstanceOf(SandboxThreadContextMissing.class)
                    .hasMessageContaining("thread");
            assertThat(scopeReads).as("scope supplier reads").hasValue(0);
        }

        @Test
        void aNullScopeIsRefused() {
            CallerContext context = CallerContext.of(() -> null, () -> "thread", FileListing.NONE);
            assertThatThrownBy(() -> context.key("agent")).isInstanceOf(SandboxThreadContextMissing.class)
                    .hasMessageContaining("scope");
        }

        @Test
        void listFilesAsksTheListingOnEveryCallAndReturnsAnImmutableCopy() {
            List<String> names = new ArrayList<>(List.of("a.csv"));
            FileStore store = new FileStore() {
                @Override
                public List<String> listNames() {
                    return names;
                }

                @Override
                public Optional<byte[]> read(String name) {
                    return Optional.empty();
                }
            };
            CallerContext all = CallerContext.of(() -> "s", () -> "t", FileListing.ALL);

            List<String> first = all.listFiles(store);
            names.add("b.csv");
            assertThat(first).containsExactly("a.csv");
            assertThat(all.listFiles(store)).containsExactly("a.csv", "b.csv");
            assertThatThrownBy(() -> first.add("c")).isInstanceOf(UnsupportedOperationException.class);
            assertThat(CallerContext.of(() -> "s", () -> "t", FileListing.NONE).listFiles(store)).isEmpty();
        }

        @Test
        void nullSuppliersAreRefused() {
            assertThatThrownBy(() -> CallerContext.of(null, () -> "t", FileListing.NONE))
                    .isInstanceOf(NullPointerException.class);
            assertThatThrownBy(() -> CallerContext.of(() -> "s", null, FileListing.NONE))
                    .isInstanceOf(NullPointerException.class);
            assertThatThrownBy(() -> CallerContext.of(() -> "s", () -> "t", null))
                    .isInstanceOf(NullPointerException.class);
        }
    }

    @Nested
    class ErrorDetails {

        @Test
        void typeAndMessage() {
            assertThat(ErrorDetail.of(new SandboxFileNotFound("'a.txt' is missing")))
                    .isEqualTo("SandboxFileNotFound: 'a.txt' is missing");
        }

        @Test
        void aMissingMessageLeavesTheTypeAlone() {
            assertThat(ErrorDetail.of(new IllegalStateException())).isEqualTo("IllegalStateException");
        }

        @Test
        void causesFollowJoinedByBars() {
            Exception error = new SandboxException("outer", new IOException("middle", new IllegalStateException()));
            assertThat(ErrorDetail.of(error))
                    .isEqualTo("SandboxException: outer | caused by IOException: middle | caused by IllegalStateException");
        }

        @Test
        void aLongOrCyclicCauseChainIsBounded() {
            Exception head = new IllegalStateException("0");
            Exception tail = head;
            for (int i = 1; i < 20; i++) {
                Exception next = new IllegalStateException(String.valueOf(i));
                tail.initCause(next);
                tail = next;
            }
            String line = ErrorDetail.of(head);
            assertThat(line.split(" \\| caused by ", -1)).hasSizeLessThan(20).hasSizeGreaterThan(1);

            Exception a = new IllegalStateException("a");
            Exception b = new IllegalStateException("b", a);
            a.initCause(b);
            assertThat(ErrorDetail.of(a)).startsWith("IllegalStateException: a | caused by IllegalStateException: b");
        }
    }
}
