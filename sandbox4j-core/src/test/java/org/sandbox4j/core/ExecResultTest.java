package org.sandbox4j.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Objects;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.sandbox4j.core.spi.CapturedBytes;
import org.sandbox4j.core.spi.ExecCapture;

/**
 * A result made from captured blocks behaves as one made from arrays did (the record's contract),
 * and its no-copy reads give the same bytes as its copies.
 */
class ExecResultTest {

    private static final Duration ELAPSED = Duration.ofMillis(42);
    /** Several blocks' worth, so every read crosses block edges. */
    private static final int LARGE = 5 << 20;

    private static byte[] pattern(int length) {
        byte[] bytes = new byte[length];
        new Random(length).nextBytes(bytes);
        return bytes;
    }

    /** A result as a backend builds it: fed in pieces, handed over without a copy. */
    private static ExecResult captured(byte[] stdout, byte[] stderr) {
        ExecCapture capture = new ExecCapture(ExecOptions.in("/", Duration.ofSeconds(1)).withOutputCap(32L << 20),
                "result-test");
        for (int at = 0; at < stdout.length; at += 10_000) {
            capture.offer(ExecStream.STDOUT, stdout, at, Math.min(10_000, stdout.length - at));
        }
        capture.offer(ExecStream.STDERR, stderr);
        return capture.result(7, ELAPSED);
    }

    @Test
    void aCapturedResultEqualsOneMadeFromArraysWithTheRecordsHashCode() {
        byte[] out = pattern(LARGE);
        byte[] err = "warning\n".getBytes(StandardCharsets.UTF_8);
        ExecResult fromBlocks = captured(out, err);
        ExecResult fromArrays = new ExecResult(out, err, 7, ELAPSED);
        assertThat(fromBlocks).isEqualTo(fromArrays).isNotSameAs(fromArrays);
        assertThat(fromBlocks.hashCode()).isEqualTo(fromArrays.hashCode())
                .isEqualTo(Objects.hash(Arrays.hashCode(out), Arrays.hashCode(err), 7, ELAPSED));
        assertThat(fromBlocks.toString()).isEqualTo("ExecResult[exitCode=7, stdout=" + LARGE + " bytes, stderr=8 bytes, "
                + "elapsed=" + ELAPSED + "]");
        assertThat(fromBlocks.exitCode()).isEqualTo(7);
        assertThat(fromBlocks.elapsed()).isEqualTo(ELAPSED);
        assertThat(fromBlocks.succeeded()).isFalse();
        assertThat(fromBlocks).isNotEqualTo(captured(Arrays.copyOf(out, LARGE - 1), err));
    }

    @Test
    void streamsTransfersCopiesAndTextGiveTheSameBytes() throws IOException {
        byte[] out = pattern(LARGE);
        byte[] err = pattern(3);
        ExecResult result = captured(out, err);
        assertThat(result.stdoutSize()).isEqualTo(LARGE);
        assertThat(result.stderrSize()).isEqualTo(3);
        assertThat(result.stdout()).isEqualTo(out);
        assertThat(result.stdoutStream().readAllBytes()).isEqualTo(out);
        assertThat(result.stderrStream().readAllBytes()).isEqualTo(err);
        ByteArrayOutputStream transferred = new ByteArrayOutputStream();
        assertThat(result.transferStdoutTo(transferred)).isEqualTo(LARGE);
        assertThat(transferred.toByteArray()).isEqualTo(out);
        ByteArrayOutputStream transferredErr = new ByteArrayOutputStream();
        assertThat(result.transferStderrTo(transferredErr)).isEqualTo(3);
        assertThat(transferredErr.toByteArray()).isEqualTo(err);
        assertThat(result.stdoutText()).isEqualTo(new String(out, StandardCharsets.UTF_8));
        assertThat(result.stderrText()).isEqualTo(new String(err, StandardCharsets.UTF_8));
    }

    @Test
    void nothingACallerDoesToWhatItGetsChangesTheResult() throws IOException {
        byte[] out = "captured".getBytes(StandardCharsets.US_ASCII);
        ExecResult result = captured(out, new byte[0]);
        result.stdout()[0] = 'X';
        byte[] read = new byte[4];
        assertThat(result.stdoutStream().read(read)).isEqualTo(4);
        read[0] = 'Y';
        assertThat(result.stdout()).isNotSameAs(result.stdout());
        assertThat(result.stdoutText()).isEqualTo("captured");
        assertThat(result.transferStdoutTo(OutputStream.nullOutputStream())).isEqualTo(out.length);
        assertThat(result).isEqualTo(ExecResult.captured(CapturedBytes.copyOf(out), CapturedBytes.empty(), 7,
                ELAPSED));
    }

    @Test
    void emptyStreamsReadAsEmpty() throws IOException {
        ExecResult empty = ExecResult.of("", "", 0, Duration.ZERO);
        assertThat(empty.stdoutSize()).isZero();
        assertThat(empty.stdout()).isEmpty();
        assertThat(empty.stdoutStream().read()).isEqualTo(-1);
        assertThat(empty.transferStderrTo(OutputStream.nullOutputStream())).isZero();
        assertThat(empty.stdoutText()).isEmpty();
        assertThat(captured(new byte[0], new byte[0])).isEqualTo(new ExecResult(new byte[0], new byte[0], 7, ELAPSED));
    }
}
