package org.sandbox4j.core.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.ExecStream;
import org.sandbox4j.core.SandboxExecOutputLimitExceeded;

/**
 * The one capture: the shared cap enforced exactly at its edge, what is kept handed to the result
 * as it is, and a real process's bulk output read whole.
 */
class ExecCaptureTest {

    private static final Duration BOUND = Duration.ofSeconds(60);
    private static final int CAP = 3 * CapturedBytes.FIRST_BLOCK_BYTES + 5;

    private static ExecCapture capture(long cap) {
        return new ExecCapture(ExecOptions.in("/", BOUND).withOutputCap(cap), "capture-test");
    }

    private static byte[] pattern(int length) {
        byte[] bytes = new byte[length];
        new Random(length).nextBytes(bytes);
        return bytes;
    }

    /** Hands out at most {@code most} bytes a read, as a pipe does under a slow writer. */
    private static InputStream trickle(byte[] bytes, int most) {
        return new ByteArrayInputStream(bytes) {
            @Override
            public synchronized int read(byte[] into, int off, int len) {
                return super.read(into, off, Math.min(len, most));
            }
        };
    }

    @Test
    void outputExactlyAtTheCapIsKeptWhole() {
        byte[] bytes = pattern(CAP);
        ExecCapture capture = capture(CAP);
        AtomicInteger stops = new AtomicInteger();
        capture.drain(new ByteArrayInputStream(bytes), ExecStream.STDOUT, stops::incrementAndGet);
        assertThat(stops).hasValue(0);
        assertThat(capture.capExceeded()).isFalse();
        assertThat(capture.refusal("cmd", "was killed")).isEmpty();
        ExecResult result = capture.result(0, Duration.ZERO);
        assertThat(result.stdout()).isEqualTo(bytes);
        assertThat(result.stderrSize()).isZero();
    }

    @Test
    void oneByteOverTheCapStopsTheCommandAndIsRefusedWithTheOneWording() {
        byte[] bytes = pattern(CAP + 1);
        ExecCapture capture = capture(CAP);
        AtomicInteger stops = new AtomicInteger();
        capture.drain(trickle(bytes, 1000), ExecStream.STDOUT, stops::incrementAndGet);
        assertThat(stops).hasValue(1);
        assertThat(capture.capExceeded()).isTrue();
        assertThat(capture.stopped()).isTrue();
        // Nothing past the cap is kept: exactly the cap's worth, the first bytes.
        assertThat(capture.stdout()).isEqualTo(java.util.Arrays.copyOf(bytes, CAP));
        assertThat(capture.refusal("cmd", "was killed")).get()
                .isInstanceOf(SandboxExecOutputLimitExceeded.class)
                .satisfies(refusal -> assertThat(refusal)
                        .hasMessage(ExecRefusals.outputCapExceeded("cmd", CAP, "was killed").getMessage()));
    }

    @Test
    void theCapIsSharedByBothStreamsAndTheListenerGetsWhatIsKept() {
        ByteArrayOutputStream heard = new ByteArrayOutputStream();
        ExecCapture capture = new ExecCapture(ExecOptions.in("/", BOUND).withOutputCap(10)
                .withListener((stream, chunk) -> heard.writeBytes(chunk)), "capture-test");
        assertThat(capture.offer(ExecStream.STDERR, "123456".getBytes(StandardCharsets.US_ASCII))).isTrue();
        AtomicInteger stops = new AtomicInteger();
        capture.drain(new ByteArrayInputStream("abcdefgh".getBytes(StandardCharsets.US_ASCII)), ExecStream.STDOUT,
                stops::incrementAndGet);
        assertThat(stops).hasValue(1);
        assertThat(capture.capExceeded()).isTrue();
        assertThat(new String(capture.stdout(), StandardCharsets.US_ASCII)).isEqualTo("abcd");
        assertThat(heard.toString(StandardCharsets.US_ASCII)).isEqualTo("123456abcd");
    }

    @Test
    void anOfferThatFillsTheCapExactlyIsWholeAndTheNextByteIsNot() {
        ExecCapture capture = capture(4);
        assertThat(capture.offer(ExecStream.STDOUT, new byte[] {1, 2, 3, 4}, 0, 4)).isTrue();
        assertThat(capture.capExceeded()).isFalse();
        assertThat(capture.offer(ExecStream.STDOUT, new byte[0])).isTrue();
        assertThat(capture.capExceeded()).isFalse();
        assertThat(capture.offer(ExecStream.STDERR, new byte[] {5})).isFalse();
        assertThat(capture.capExceeded()).isTrue();
        assertThat(capture.stderr()).isEmpty();
    }

    @Test
    void emptyStreamsGiveAnEmptyResult() {
        ExecCapture capture = capture(CAP);
        capture.drain(InputStream.nullInputStream(), ExecStream.STDOUT, () -> { });
        capture.drain(InputStream.nullInputStream(), ExecStream.STDERR, () -> { });
        ExecResult result = capture.result(3, Duration.ofMillis(2));
        assertThat(result).isEqualTo(new ExecResult(new byte[0], new byte[0], 3, Duration.ofMillis(2)));
        assertThat(result.stdoutSize()).isZero();
    }

    @Test
    void theResultHoldsTheBytesOfEveryWayInAndTakingItEndsTheCapture() throws IOException {
        byte[] out = pattern(CAP - 100);
        byte[] err = pattern(100);
        ExecCapture capture = capture(CAP);
        capture.drain(trickle(out, 777), ExecStream.STDOUT, () -> { });
        capture.offer(ExecStream.STDERR, err, 0, 60);
        capture.offer(ExecStream.STDERR, err, 60, 40);
        ExecResult result = capture.result(0, Duration.ZERO);
        assertThat(result.stdout()).isEqualTo(out);
        assertThat(result.stderr()).isEqualTo(err);
        assertThat(result.stdoutStream().readAllBytes()).isEqualTo(out);
        assertThat(capture.result(0, Duration.ZERO)).isSameAs(result);
        assertThat(capture.stdout()).isEqualTo(out);
        // Taken: nothing more is kept, and a feeder is told to stop.
        assertThat(capture.offer(ExecStream.STDOUT, new byte[] {1})).isFalse();
        assertThat(result.stdoutSize()).isEqualTo(out.length);
    }

    @Test
    void aReadThatFailsEndsTheStreamKeepingWhatCame() {
        ExecCapture capture = capture(CAP);
        InputStream breaking = new InputStream() {
            private boolean given;

            @Override
            public int read() {
                return -1;
            }

            @Override
            public int read(byte[] into, int off, int len) throws IOException {
                if (given) {
                    throw new IOException("Stream closed");
                }
                given = true;
                into[off] = 'x';
                return 1;
            }
        };
        AtomicInteger stops = new AtomicInteger();
        capture.drain(breaking, ExecStream.STDOUT, stops::incrementAndGet);
        assertThat(stops).hasValue(0);
        assertThat(capture.refusal("cmd", "was killed")).isEmpty();
        assertThat(capture.result(0, Duration.ZERO).stdoutText()).isEqualTo("x");
    }

    @Test
    @EnabledOnOs(OS.LINUX)
    void aRealProcesssBulkOutputArrivesWholeThroughThePump() throws IOException {
        int lines = 2_000_000;
        Process process = new ProcessBuilder("seq", "1", Integer.toString(lines)).start();
        ExecResult result = ProcessPump.await(process, Process::destroyForcibly,
                ExecOptions.in("/", BOUND).withOutputCap(32L << 20), "seq", "capture-test", System.nanoTime());
        String expected = IntStream.rangeClosed(1, lines).mapToObj(Integer::toString)
                .collect(Collectors.joining("\n", "", "\n"));
        byte[] bytes = expected.getBytes(StandardCharsets.US_ASCII);
        assertThat(result.exitCode()).isZero();
        assertThat(result.stdoutSize()).isEqualTo(bytes.length);
        assertThat(result.stdout()).isEqualTo(bytes);
        ByteArrayOutputStream transferred = new ByteArrayOutputStream(bytes.length);
        assertThat(result.transferStdoutTo(transferred)).isEqualTo(bytes.length);
        assertThat(transferred.toByteArray()).isEqualTo(bytes);
        assertThat(result.stdoutStream().readAllBytes()).isEqualTo(bytes);
        assertThat(result.stdoutText()).isEqualTo(expected);
    }

    @Test
    @EnabledOnOs(OS.LINUX)
    void aRealProcessThatEndsExactlyAtTheCapPassesAndOneThatGoesOnIsKilledAndRefused() {
        long cap = 5L << 20;
        ExecOptions options = ExecOptions.in("/", BOUND).withOutputCap(cap);
        ExecResult atCap = ProcessPump.await(start("head", "-c", Long.toString(cap), "/dev/zero"),
                Process::destroyForcibly, options, "head", "capture-test", System.nanoTime());
        assertThat(atCap.stdoutSize()).isEqualTo(cap);

        // A writer that never stops: only the capture's kill ends it, well before the bound.
        Process endless = start("yes");
        long started = System.nanoTime();
        assertThatThrownBy(() -> ProcessPump.await(endless, Process::destroyForcibly, options, "yes", "capture-test",
                started))
                .isInstanceOf(SandboxExecOutputLimitExceeded.class)
                .hasMessage(ExecRefusals.outputCapExceeded("yes", cap, ExecRefusals.KILLED_WITH_EVERY_PROCESS)
                        .getMessage());
        assertThat(endless.isAlive()).isFalse();
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(BOUND);
    }

    private static Process start(String... argv) {
        try {
            return new ProcessBuilder(argv).start();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
