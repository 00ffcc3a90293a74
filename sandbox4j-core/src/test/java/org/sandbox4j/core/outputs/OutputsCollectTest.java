package org.sandbox4j.core.outputs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;

import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.sandbox4j.core.DeclaredOutput;
import org.sandbox4j.core.NameNormalization;
import org.sandbox4j.core.SandboxArtifactNameCollision;
import org.sandbox4j.core.SandboxArtifactNameInvalid;
import org.sandbox4j.core.SandboxEntry;
import org.sandbox4j.core.SandboxInterrupted;
import org.sandbox4j.core.SandboxNotADirectory;
import org.sandbox4j.core.SandboxOutputMissing;
import org.sandbox4j.core.SandboxOutputNotConfined;
import org.sandbox4j.core.SandboxOutputNotRegular;
import org.sandbox4j.core.SandboxOutputSinkRequired;
import org.sandbox4j.core.SandboxOutputSizeUnknown;
import org.sandbox4j.core.SandboxOutputUnreachable;
import org.sandbox4j.core.SandboxPathNotConfined;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.SandboxTransferCapExceeded;
import org.sandbox4j.core.TransferLimits;
import org.sandbox4j.core.fakes.ScriptedSandbox;

class OutputsCollectTest {

    private static final String KIND = "execute_code";
    private static final String WD = SandboxSpec.DEFAULT_WORK_DIR;

    private static String inWd(String relative) {
        return WD + "/" + relative;
    }

    private static SandboxSpec.Builder spec(DeclaredOutput... outputs) {
        return SandboxSpec.builder(KIND).declaredOutputs(outputs);
    }

    private static RecordingSandbox sandbox(ScriptedSandbox.Builder builder) {
        return new RecordingSandbox(builder.build());
    }

    private static RecordingSandbox withFiles(String... relativePathThenContent) {
        ScriptedSandbox.Builder builder = ScriptedSandbox.builder();
        for (int i = 0; i < relativePathThenContent.length; i += 2) {
            builder.seedFile(inWd(relativePathThenContent[i]), relativePathThenContent[i + 1]);
        }
        return sandbox(builder);
    }

    private static String text(Artifact artifact) {
        return new String(artifact.content(), StandardCharsets.UTF_8);
    }

    @Test
    void landingOutputsAreDeliveredInDeclarationOrder() {
        RecordingSandbox box = withFiles("chart.png", "png-bytes", "data/table.csv", "a,b\n");
        RecordingSink sink = new RecordingSink();
        SandboxSpec spec = spec(DeclaredOutput.land("chart.png").withMediaType("image/png"),
                DeclaredOutput.land("data/table.csv")).build();

        List<LandedArtifact> landed = Outputs.collect(box, spec, sink);

        assertThat(landed).extracting(LandedArtifact::display).containsExactly("landed chart.png", "landed data/table.csv");
        assertThat(sink.delivered()).hasSize(2);
        Artifact chart = sink.delivered().get(0);
        assertThat(chart.name()).isEqualTo("chart.png");
        assertThat(text(chart)).isEqualTo("png-bytes");
        assertThat(chart.kind()).isEqualTo(KIND);
        assertThat(chart.mediaType()).contains("image/png");
        assertThat(sink.delivered().get(1).mediaType()).isEmpty();
    }

    @Test
    void everythingIsStatedBeforeAnythingIsReadAndInTheSpecsWorkDir() {
        RecordingSandbox box = new RecordingSandbox(ScriptedSandbox.builder()
                .seedFile("/elsewhere/wd/a.txt", "aaaa").seedFile("/elsewhere/wd/b.txt", "bbbbbb").build());
        SandboxSpec spec = spec(DeclaredOutput.land("a.txt"), DeclaredOutput.land("b.txt")).workDir("/elsewhere/wd")
                .build();

        Outputs.collect(box, spec, new RecordingSink());

        assertThat(box.calls()).containsExactly(
                "stat a.txt in /elsewhere/wd",
                "stat b.txt in /elsewhere/wd",
                "read a.txt in /elsewhere/wd max 4",
                "read b.txt in /elsewhere/wd max 6");
    }

    @Test
    void aNamedOutputLandsUnderItsName() {
        RecordingSink sink = new RecordingSink();

        Outputs.collect(withFiles("out/raw.bin", "x"), spec(DeclaredOutput.land("out/raw.bin").named("result.bin")).build(),
                sink);

        assertThat(sink.names()).containsExactly("result.bin");
    }

    @Nested
    class CallTimeOutputs {

        @Test
        void areRefusedUnlessTheSpecAdmitsThem() {
            RecordingSandbox box = withFiles("late.txt", "late");
            RecordingSink sink = new RecordingSink();

            assertThatThrownBy(() -> Outputs.collect(box, spec().build(), sink, List.of(DeclaredOutput.land("late.txt"))))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("'late.txt'")
                    .hasMessageContaining("outputsNamedAtCallTime(true)");
            assertThat(box.calls()).isEmpty();
            assertThat(sink.delivered()).isEmpty();
        }

        @Test
        void areCollectedAfterTheDeclaredOnesWhenAdmitted() {
            RecordingSink sink = new RecordingSink();
            SandboxSpec spec = spec(DeclaredOutput.land("declared.txt")).outputsNamedAtCallTime(true).build();

            Outputs.collect(withFiles("declared.txt", "d", "late.txt", "l"), spec, sink,
                    List.of(DeclaredOutput.land("late.txt")));

            assertThat(sink.names()).containsExactly("declared.txt", "late.txt");
        }

        @Test
        void anAdmittingSpecWithNothingLandingNeedsNoSink() {
            SandboxSpec spec = spec().outputsNamedAtCallTime(true).build();

            assertThat(Outputs.collect(withFiles(), spec, null, List.of())).isEmpty();
        }

        @Test
        void countAgainstTheSameCaps() {
            SandboxSpec spec = spec(DeclaredOutput.land("declared.txt")).outputsNamedAtCallTime(true)
                    .filesOut(new TransferLimits(100, 100, 1)).build();
            RecordingSink sink = new RecordingSink();

            assertThatThrownBy(() -> Outputs.collect(withFiles("declared.txt", "d", "late.txt", "l"), spec, sink,
                    List.of(DeclaredOutput.land("late.txt"))))
                    .isInstanceOf(SandboxTransferCapExceeded.class);
            assertThat(sink.delivered()).isEmpty();
        }
    }

    @Nested
    class SinkRequired {

        @Test
        void landingOutputsWithoutASinkAreRefusedBeforeTheSandboxIsTouched() {
            RecordingSandbox box = withFiles("chart.png", "png");

            assertThatThrownBy(() -> Outputs.collect(box, spec(DeclaredOutput.land("chart.png")).build(), null))
                    .isInstanceOf(SandboxOutputSinkRequired.class)
                    .hasMessageContaining("'chart.png'")
                    .hasMessageContaining("OutputSink");
            assertThat(box.calls()).isEmpty();
        }

        @Test
        void callTimeLandingOutputsWithoutASinkAreRefused() {
            SandboxSpec spec = spec().outputsNamedAtCallTime(true).build();

            assertThatThrownBy(() -> Outputs.collect(withFiles("late.txt", "l"), spec, null,
                    List.of(DeclaredOutput.land("late.txt"))))
                    .isInstanceOf(SandboxOutputSinkRequired.class)
                    .hasMessageContaining("'late.txt'");
        }

        @Test
        void consumedOutputsNeedNoSink() {
            RecordingSandbox box = withFiles("result.json", "{}");

            assertThat(Outputs.collect(box, spec(DeclaredOutput.consume("result.json")).build(), null)).isEmpty();
            assertThat(box.calls()).containsExactly("stat result.json in " + WD);
        }

        @Test
        void theSharedWordingNamesTheLandingPathsOrTheCallTimeNames() {
            SandboxSpec declared = spec(DeclaredOutput.land("a.png"), DeclaredOutput.land("b.png")).build();
            SandboxSpec callTime = spec().outputsNamedAtCallTime(true).build();

            assertThat(Outputs.missingSinkRefusal(declared, Outputs.landingOutputs(declared), "tool 'render'"))
                    .isInstanceOf(SandboxOutputSinkRequired.class)
                    .hasMessageStartingWith("tool 'render'")
                    .hasMessageContaining("'a.png', 'b.png'");
            assertThat(Outputs.missingSinkRefusal(callTime, List.of(), "tool 'render'").getMessage())
                    .contains("lands artifacts it names at call time");
        }
    }

    @Nested
    class Helpers {

        @Test
        void landingOutputsAreTheDeclaredOnesThatLand() {
            DeclaredOutput lands = DeclaredOutput.land("a.png");
            SandboxSpec spec = spec(DeclaredOutput.consume("r.json"), lands).build();

            assertThat(Outputs.landingOutputs(spec)).containsExactly(lands);
        }

        @Test
        void aSpecLandsArtifactsWhenItDeclaresOneOrAdmitsCallTimeNames() {
            assertThat(Outputs.specLandsArtifacts(spec(DeclaredOutput.land("a.png")).build())).isTrue();
            assertThat(Outputs.specLandsArtifacts(spec().outputsNamedAtCallTime(true).build())).isTrue();
            assertThat(Outputs.specLandsArtifacts(spec(DeclaredOutput.consume("r.json")).build())).isFalse();
            assertThat(Outputs.specLandsArtifacts(spec().build())).isFalse();
        }
    }

    @Nested
    class Names {

        @Test
        void anInvalidPathIsRefusedBeforeTheSandboxIsTouched() {
            RecordingSandbox box = withFiles("ok.txt", "ok");
            RecordingSink sink = new RecordingSink();
            SandboxSpec spec = spec(DeclaredOutput.land("ok.txt"), DeclaredOutput.land("../escape.txt")).build();

            assertThatThrownBy(() -> Outputs.collect(box, spec, sink)).isInstanceOf(SandboxArtifactNameInvalid.class);
            assertThat(box.calls()).isEmpty();
            assertThat(sink.delivered()).isEmpty();
        }

        @Test
        void aConsumedOutputsPathIsCheckedToo() {
            RecordingSandbox box = withFiles();

            assertThatThrownBy(() -> Outputs.collect(box, spec(DeclaredOutput.consume("a//b.json")).build(), null))
                    .isInstanceOf(SandboxArtifactNameInvalid.class);
            assertThat(box.calls()).isEmpty();
        }

        @Test
        void anInvalidLandingNameIsRefused() {
            RecordingSandbox box = withFiles("ok.txt", "ok");

            assertThatThrownBy(() -> Outputs.collect(box, spec(DeclaredOutput.land("ok.txt").named("/etc/cron.d/x")).build(),
                    new RecordingSink()))
                    .isInstanceOf(SandboxArtifactNameInvalid.class);
            assertThat(box.calls()).isEmpty();
        }

        @Test
        void theDeliveredSpellingIsNfcForAnNfcSink() {
            RecordingSink sink = new RecordingSink(NameNormalization.NFC);

            Outputs.collect(withFiles("cafe\u0301.png", "x"), spec(DeclaredOutput.land("cafe\u0301.png")).build(), sink);

            assertThat(sink.names()).containsExactly("caf\u00e9.png");
        }

        @Test
        void theDeliveredSpellingIsByteExactForASinkThatSaysSo() {
            RecordingSink sink = new RecordingSink(NameNormalization.NONE);

            Outputs.collect(withFiles("cafe\u0301.png", "x"), spec(DeclaredOutput.land("cafe\u0301.png")).build(), sink);

            assertThat(sink.names()).containsExactly("cafe\u0301.png");
        }

        @Test
        void aNameNfcGrowsPastTheLimitIsRefusedUnderNfcAndAdmittedByteExact() {
            String grows = "\u0958".repeat(85);
            SandboxSpec spec = spec(DeclaredOutput.land("raw.bin").named(grows)).build();

            RecordingSandbox refusedBox = withFiles("raw.bin", "x");
            assertThatThrownBy(() -> Outputs.collect(refusedBox, spec, new RecordingSink(NameNormalization.NFC)))
                    .isInstanceOf(SandboxArtifactNameInvalid.class)
                    .hasMessageContaining("510 UTF-8 bytes");
            assertThat(refusedBox.calls()).isEmpty();

            RecordingSink exact = new RecordingSink(NameNormalization.NONE);
            Outputs.collect(withFiles("raw.bin", "x"), spec, exact);
            assertThat(exact.names()).containsExactly(grows);
        }

        @Test
        void twoOutputsLandingAsOneNameCollide() {
            RecordingSandbox box = withFiles("a.txt", "a", "b.txt", "b");
            SandboxSpec spec = spec(DeclaredOutput.land("a.txt").named("out.txt"), DeclaredOutput.land("b.txt").named("out.txt"))
                    .build();

            assertThatThrownBy(() -> Outputs.collect(box, spec, new RecordingSink()))
                    .isInstanceOf(SandboxArtifactNameCollision.class)
                    .hasMessageContaining("both land as 'out.txt'");
            assertThat(box.calls()).isEmpty();
        }

        @Test
        void caseVariantsCollide() {
            SandboxSpec spec = spec(DeclaredOutput.land("Report.txt"), DeclaredOutput.land("report.TXT")).build();

            assertThatThrownBy(() -> Outputs.collect(withFiles("Report.txt", "a", "report.TXT", "b"), spec, new RecordingSink()))
                    .isInstanceOf(SandboxArtifactNameCollision.class)
                    .hasMessageContaining("differ only by case or Unicode form")
                    .hasMessageContaining("'Report.txt'")
                    .hasMessageContaining("'report.TXT'");
        }

        @Test
        void unicodeFormVariantsCollideOnAByteExactSink() {
            SandboxSpec spec = spec(DeclaredOutput.land("a.bin").named("caf\u00e9"), DeclaredOutput.land("b.bin").named("cafe\u0301"))
                    .build();

            assertThatThrownBy(() -> Outputs.collect(withFiles("a.bin", "a", "b.bin", "b"), spec,
                    new RecordingSink(NameNormalization.NONE)))
                    .isInstanceOf(SandboxArtifactNameCollision.class)
                    .hasMessageContaining("differ only by case or Unicode form");
        }

        @Test
        void unicodeFormVariantsLandAsOneNameOnAnNfcSink() {
            SandboxSpec spec = spec(DeclaredOutput.land("a.bin").named("caf\u00e9"), DeclaredOutput.land("b.bin").named("cafe\u0301"))
                    .build();

            assertThatThrownBy(() -> Outputs.collect(withFiles("a.bin", "a", "b.bin", "b"), spec, new RecordingSink()))
                    .isInstanceOf(SandboxArtifactNameCollision.class)
                    .hasMessageContaining("both land as 'caf\u00e9'");
        }

        @Test
        void spellingsOfOnePathCollide() {
            SandboxSpec spec = spec(DeclaredOutput.land("a.bin").named("dir/x"), DeclaredOutput.land("b.bin").named("DIR/x"))
                    .build();

            assertThatThrownBy(() -> Outputs.collect(withFiles("a.bin", "a", "b.bin", "b"), spec, new RecordingSink()))
                    .isInstanceOf(SandboxArtifactNameCollision.class);
        }

        @Test
        void namesThatOnlyCaseFoldingWouldJoinDoNotCollide() {
            RecordingSink sink = new RecordingSink();
            SandboxSpec spec = spec(DeclaredOutput.land("Stra\u00dfe"), DeclaredOutput.land("Strasse"),
                    DeclaredOutput.land("\ufb01le"), DeclaredOutput.land("file")).build();

            Outputs.collect(withFiles("Stra\u00dfe", "1", "Strasse", "2", "\ufb01le", "3", "file", "4"), spec, sink);

            assertThat(sink.names()).containsExactly("Stra\u00dfe", "Strasse", "\ufb01le", "file");
        }

        @Test
        void onlyLandingNamesCanCollide() {
            RecordingSink sink = new RecordingSink();
            SandboxSpec spec = spec(DeclaredOutput.consume("result.json"), DeclaredOutput.land("result.json")).build();

            Outputs.collect(withFiles("result.json", "{}"), spec, sink);

            assertThat(sink.names()).containsExactly("result.json");
        }
    }

    @Nested
    class StatPhase {

        @Test
        void aPathThroughALinkIsNotConfinedAndKeepsTheCause() {
            RecordingSandbox box = sandbox(ScriptedSandbox.builder().seedFile(inWd("ok.txt"), "ok")
                    .seedSymlink(inWd("linked")));
            RecordingSink sink = new RecordingSink();
            SandboxSpec spec = spec(DeclaredOutput.land("ok.txt"), DeclaredOutput.land("linked/secret.txt")).build();

            assertThatThrownBy(() -> Outputs.collect(box, spec, sink))
                    .isInstanceOf(SandboxOutputNotConfined.class)
                    .hasMessageContaining("'linked/secret.txt'")
                    .hasCauseInstanceOf(SandboxPathNotConfined.class);
            assertThat(box.calls()).noneMatch(call -> call.startsWith("read"));
            assertThat(sink.delivered()).isEmpty();
        }

        @Test
        void aLinkedWorkingDirectoryIsNotConfined() {
            RecordingSandbox box = sandbox(ScriptedSandbox.builder().seedSymlink(WD));

            assertThatThrownBy(() -> Outputs.collect(box, spec(DeclaredOutput.land("a.txt")).build(), new RecordingSink()))
                    .isInstanceOf(SandboxOutputNotConfined.class);
        }

        @Test
        void aFileInPlaceOfAParentIsUnreachableAndKeepsTheCause() {
            RecordingSandbox box = withFiles("plain.txt", "not a directory");

            assertThatThrownBy(() -> Outputs.collect(box, spec(DeclaredOutput.land("plain.txt/deeper.txt")).build(),
                    new RecordingSink()))
                    .isInstanceOf(SandboxOutputUnreachable.class)
                    .hasCauseInstanceOf(SandboxNotADirectory.class);
        }

        @Test
        void aMissingRequiredOutputIsRefusedAndNothingIsDelivered() {
            RecordingSandbox box = withFiles("present.txt", "p");
            RecordingSink sink = new RecordingSink();
            SandboxSpec spec = spec(DeclaredOutput.land("present.txt"), DeclaredOutput.land("absent.txt")).build();

            assertThatThrownBy(() -> Outputs.collect(box, spec, sink))
                    .isInstanceOf(SandboxOutputMissing.class)
                    .hasMessageContaining("'absent.txt'")
                    .hasMessageContaining("optional");
            assertThat(box.calls()).noneMatch(call -> call.startsWith("read"));
            assertThat(sink.delivered()).isEmpty();
        }

        @Test
        void aMissingOptionalOutputIsSkipped() {
            RecordingSink sink = new RecordingSink();
            SandboxSpec spec = spec(DeclaredOutput.land("absent.txt").optional(), DeclaredOutput.land("present.txt")).build();

            List<LandedArtifact> landed = Outputs.collect(withFiles("present.txt", "p"), spec, sink);

            assertThat(landed).extracting(LandedArtifact::name).containsExactly("present.txt");
        }

        @Test
        void aDirectoryIsNotRegular() {
            RecordingSandbox box = sandbox(ScriptedSandbox.builder().seedDirectory(inWd("dir")));

            assertThatThrownBy(() -> Outputs.collect(box, spec(DeclaredOutput.land("dir")).build(), new RecordingSink()))
                    .isInstanceOf(SandboxOutputNotRegular.class)
                    .hasMessageContaining("directory");
        }

        @Test
        void aLinkIsNotRegularAndIsNeverRead() {
            RecordingSandbox box = sandbox(ScriptedSandbox.builder().seedSymlink(inWd("link.txt")));
            RecordingSink sink = new RecordingSink();

            assertThatThrownBy(() -> Outputs.collect(box, spec(DeclaredOutput.land("link.txt").optional()).build(), sink))
                    .isInstanceOf(SandboxOutputNotRegular.class)
                    .hasMessageContaining("symlink");
            assertThat(box.calls()).noneMatch(call -> call.startsWith("read"));
            assertThat(sink.delivered()).isEmpty();
        }

        @Test
        void aDeviceOrFifoIsNotRegular() {
            RecordingSandbox box = sandbox(ScriptedSandbox.builder().seedOther(inWd("fifo")));

            assertThatThrownBy(() -> Outputs.collect(box, spec(DeclaredOutput.consume("fifo")).build(), null))
                    .isInstanceOf(SandboxOutputNotRegular.class);
        }

        @Test
        void anUnknownSizeFailsClosed() {
            RecordingSandbox box = withFiles("sizeless.bin", "x")
                    .onStat(entry -> entry.map(found -> SandboxEntry.fileOfUnknownSize(found.path())));
            RecordingSink sink = new RecordingSink();

            assertThatThrownBy(() -> Outputs.collect(box, spec(DeclaredOutput.land("sizeless.bin")).build(), sink))
                    .isInstanceOf(SandboxOutputSizeUnknown.class);
            assertThat(box.calls()).noneMatch(call -> call.startsWith("read"));
            assertThat(sink.delivered()).isEmpty();
        }

        @Test
        void interruptionPropagatesUnchanged() {
            SandboxInterrupted interrupted = new SandboxInterrupted("cancelled");
            RecordingSandbox box = withFiles("a.txt", "a").onStat(entry -> {
                throw interrupted;
            });

            assertThatThrownBy(() -> Outputs.collect(box, spec(DeclaredOutput.land("a.txt")).build(), new RecordingSink()))
                    .isSameAs(interrupted);
        }

        @Test
        void theFirstFailingDeclarationDecides() {
            SandboxSpec spec = spec(DeclaredOutput.land("absent.txt"), DeclaredOutput.land("linked/x.txt")).build();
            RecordingSandbox box = sandbox(ScriptedSandbox.builder().seedSymlink(inWd("linked")));

            assertThatThrownBy(() -> Outputs.collect(box, spec, new RecordingSink()))
                    .isInstanceOf(SandboxOutputMissing.class);
            assertThat(box.calls()).containsExactly("stat absent.txt in " + WD);
        }
    }

    @Nested
    class Caps {

        @Test
        void aFileOverThePerFileCapIsRefusedAndOneAtTheCapIsAdmitted() {
            SandboxSpec spec = spec(DeclaredOutput.land("big.bin")).filesOut(new TransferLimits(4, 100, 10)).build();
            RecordingSandbox over = withFiles("big.bin", "12345");
            RecordingSink sink = new RecordingSink();

            assertThatThrownBy(() -> Outputs.collect(over, spec, sink))
                    .isInstanceOf(SandboxTransferCapExceeded.class)
                    .hasMessageContaining("per-file cap of 4 bytes");
            assertThat(over.calls()).noneMatch(call -> call.startsWith("read"));
            assertThat(sink.delivered()).isEmpty();

            Outputs.collect(withFiles("big.bin", "1234"), spec, sink);
            assertThat(sink.names()).containsExactly("big.bin");
        }

        @Test
        void oneFileOverTheCountIsRefusedAndTheCountItselfIsAdmitted() {
            RecordingSink sink = new RecordingSink();
            RecordingSandbox box = withFiles("a", "1", "b", "2", "c", "3");
            SandboxSpec three = spec(DeclaredOutput.land("a"), DeclaredOutput.land("b"), DeclaredOutput.land("c"))
                    .filesOut(new TransferLimits(100, 100, 2)).build();

            assertThatThrownBy(() -> Outputs.collect(box, three, sink))
                    .isInstanceOf(SandboxTransferCapExceeded.class)
                    .hasMessageContaining("cap of 2 files");
            assertThat(sink.delivered()).isEmpty();

            SandboxSpec two = spec(DeclaredOutput.land("a"), DeclaredOutput.land("b"))
                    .filesOut(new TransferLimits(100, 100, 2)).build();
            Outputs.collect(box, two, sink);
            assertThat(sink.names()).containsExactly("a", "b");
        }

        @Test
        void consumedOutputsCountTowardTheCaps() {
            RecordingSink sink = new RecordingSink();
            SandboxSpec spec = spec(DeclaredOutput.consume("result.json"), DeclaredOutput.land("chart.png"))
                    .filesOut(new TransferLimits(100, 100, 1)).build();

            assertThatThrownBy(() -> Outputs.collect(withFiles("result.json", "{}", "chart.png", "png"), spec, sink))
                    .isInstanceOf(SandboxTransferCapExceeded.class);
            assertThat(sink.delivered()).isEmpty();
        }

        @Test
        void consumedBytesCountTowardTheTotal() {
            SandboxSpec spec = spec(DeclaredOutput.consume("result.json"), DeclaredOutput.land("chart.png"))
                    .filesOut(new TransferLimits(100, 8, 10)).build();

            assertThatThrownBy(() -> Outputs.collect(withFiles("result.json", "12345", "chart.png", "1234"), spec,
                    new RecordingSink()))
                    .isInstanceOf(SandboxTransferCapExceeded.class)
                    .hasMessageContaining("cap of 8 bytes");
        }

        @Test
        void overTheTotalIsRefusedAndTheTotalItselfIsAdmitted() {
            RecordingSink sink = new RecordingSink();
            RecordingSandbox box = withFiles("a", "123456", "b", "123456");
            SandboxSpec.Builder spec = spec(DeclaredOutput.land("a"), DeclaredOutput.land("b"));

            assertThatThrownBy(() -> Outputs.collect(box, spec.filesOut(new TransferLimits(100, 11, 10)).build(), sink))
                    .isInstanceOf(SandboxTransferCapExceeded.class)
                    .hasMessageContaining("total to 12 bytes");
            assertThat(box.calls()).noneMatch(call -> call.startsWith("read"));
            assertThat(sink.delivered()).isEmpty();

            Outputs.collect(box, spec.filesOut(new TransferLimits(100, 12, 10)).build(), sink);
            assertThat(sink.names()).containsExactly("a", "b");
        }

        @Test
        void hugeCapsDoNotOverflow() {
            RecordingSink sink = new RecordingSink();
            SandboxSpec spec = spec(DeclaredOutput.land("a"), DeclaredOutput.land("b"))
                    .filesOut(new TransferLimits(Long.MAX_VALUE, Long.MAX_VALUE, Integer.MAX_VALUE)).build();
            RecordingSandbox box = withFiles("a", "1", "b", "2")
                    .onStat(entry -> entry.map(found -> SandboxEntry.file(found.path(), Long.MAX_VALUE - 1)));

            assertThatThrownBy(() -> Outputs.collect(box, spec, sink)).isInstanceOf(SandboxTransferCapExceeded.class);
            assertThat(sink.delivered()).isEmpty();
        }
    }

    @Nested
    class ReadPhase {

        @Test
        void nothingToLandMeansNoReadAndNoDelivery() {
            RecordingSandbox box = withFiles("result.json", "{}");
            RecordingSink sink = new RecordingSink();
            SandboxSpec spec = spec(DeclaredOutput.consume("result.json"), DeclaredOutput.land("absent.png").optional())
                    .build();

            assertThat(Outputs.collect(box, spec, sink)).isEmpty();
            assertThat(box.calls()).containsExactly("stat result.json in " + WD, "stat absent.png in " + WD);
            assertThat(sink.delivered()).isEmpty();
        }

        @Test
        void aFileThatGrewAfterItsStatIsRefusedNotTruncated() {
            // The stat reports 2 bytes; the file holds 5 by the time it is read.
            RecordingSandbox box = withFiles("first.txt", "ok", "grown.txt", "grown")
                    .onStat(entry -> entry.map(found -> SandboxEntry.file(found.path(), 2)));
            RecordingSink sink = new RecordingSink();
            SandboxSpec spec = spec(DeclaredOutput.land("first.txt"), DeclaredOutput.land("grown.txt")).build();

            assertThatThrownBy(() -> Outputs.collect(box, spec, sink)).isInstanceOf(SandboxTransferCapExceeded.class);
            assertThat(box.calls()).contains("read grown.txt in " + WD + " max 2");
            assertThat(sink.delivered()).isEmpty();
        }

        @Test
        void aBackendThatReadsPastTheBoundIsRefusedAfterTheFact() {
            RecordingSandbox box = withFiles("a.txt", "abc")
                    .onRead((path, wd, maxBytes) -> "abc plus more than was measured".getBytes(StandardCharsets.UTF_8));
            RecordingSink sink = new RecordingSink();

            assertThatThrownBy(() -> Outputs.collect(box, spec(DeclaredOutput.land("a.txt")).build(), sink))
                    .isInstanceOf(SandboxTransferCapExceeded.class)
                    .hasMessageContaining("more than the 3 bytes");
            assertThat(sink.delivered()).isEmpty();
        }

        @Test
        void theReadPhaseCountsWithAFreshTally() {
            // Two files fill the count cap exactly: a tally carried over from the stat phase would refuse them.
            RecordingSandbox box = withFiles("a", "1", "b", "2")
                    .onStat(entry -> entry.map(found -> SandboxEntry.file(found.path(), 1)))
                    .onRead((path, wd, maxBytes) -> new byte[(int) maxBytes]);
            RecordingSink sink = new RecordingSink();
            SandboxSpec spec = spec(DeclaredOutput.land("a"), DeclaredOutput.land("b"))
                    .filesOut(new TransferLimits(1, 2, 2)).build();

            List<LandedArtifact> landed = Outputs.collect(box, spec, sink);

            assertThat(landed).hasSize(2);
            assertThat(box.calls()).contains("read a in " + WD + " max 1", "read b in " + WD + " max 1");
        }

        @Test
        void anEscapeDiscoveredAtReadTimeIsNotConfined() {
            RecordingSandbox box = withFiles("a.txt", "a").onRead((path, wd, maxBytes) -> {
                throw new SandboxPathNotConfined("swapped for a link");
            });
            RecordingSink sink = new RecordingSink();

            assertThatThrownBy(() -> Outputs.collect(box, spec(DeclaredOutput.land("a.txt")).build(), sink))
                    .isInstanceOf(SandboxOutputNotConfined.class)
                    .hasCauseInstanceOf(SandboxPathNotConfined.class);
            assertThat(sink.delivered()).isEmpty();
        }

        @Test
        void aFileThatVanishedBeforeItsReadIsUnreachable() {
            RecordingSandbox box = withFiles("a.txt", "a").onRead((path, wd, maxBytes) -> {
                throw new org.sandbox4j.core.SandboxFileNotFound("gone");
            });

            assertThatThrownBy(() -> Outputs.collect(box, spec(DeclaredOutput.land("a.txt")).build(), new RecordingSink()))
                    .isInstanceOf(SandboxOutputUnreachable.class);
        }
    }

    @Nested
    class Delivery {

        @Test
        void aSinkFailingMidSetLeavesEarlierDeliveriesAndPropagates() {
            RecordingSink sink = new RecordingSink().refusingDelivery(2);
            SandboxSpec spec = spec(DeclaredOutput.land("a"), DeclaredOutput.land("b"), DeclaredOutput.land("c")).build();

            assertThatThrownBy(() -> Outputs.collect(withFiles("a", "1", "b", "2", "c", "3"), spec, sink))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("refused delivery 2");
            assertThat(sink.names()).containsExactly("a");
        }

        @Test
        void everyReadHappensBeforeTheFirstDelivery() {
            RecordingSandbox box = withFiles("a", "1", "b", "2");
            List<Integer> callsSeenAtDelivery = new java.util.ArrayList<>();
            OutputSink sink = artifact -> {
                callsSeenAtDelivery.add(box.calls().size());
                return LandedArtifact.of(artifact.name(), artifact.name());
            };

            Outputs.collect(box, spec(DeclaredOutput.land("a"), DeclaredOutput.land("b")).build(), sink);

            assertThat(box.calls()).containsExactly("stat a in " + WD, "stat b in " + WD, "read a in " + WD + " max 1",
                    "read b in " + WD + " max 1");
            assertThat(callsSeenAtDelivery).containsExactly(4, 4);
        }
    }

    @Test
    void landedBytesAreVerbatim() {
        byte[] payload = new byte[256];
        for (int i = 0; i < payload.length; i++) {
            payload[i] = (byte) i;
        }
        RecordingSink sink = new RecordingSink();

        Outputs.collect(sandbox(ScriptedSandbox.builder().seedFile(inWd("binary.bin"), payload)),
                spec(DeclaredOutput.land("binary.bin")).build(), sink);

        assertThat(sink.delivered().get(0).content()).isEqualTo(payload);
        assertThat(sink.delivered().get(0).mediaType()).isEqualTo(Optional.empty());
    }
}
