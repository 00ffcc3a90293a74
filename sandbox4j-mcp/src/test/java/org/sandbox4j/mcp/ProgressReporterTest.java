package org.sandbox4j.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.modelcontextprotocol.spec.McpSchema.ProgressNotification;

import org.junit.jupiter.api.Test;
import org.sandbox4j.core.ExecStream;

class ProgressReporterTest {

    @Test
    void chunksAreCoalescedAndACharacterCutByTheChunkingArrivesWhole() throws Exception {
        List<ProgressNotification> sent = new CopyOnWriteArrayList<>();
        byte[] text = "a日b".getBytes(StandardCharsets.UTF_8);
        try (ProgressReporter progress = ProgressReporter.start("token", sent::add)) {
            progress.onOutput(ExecStream.STDOUT, Arrays.copyOfRange(text, 0, 2));
            awaitSent(sent, 1);
            progress.onOutput(ExecStream.STDOUT, Arrays.copyOfRange(text, 2, text.length));
            awaitSent(sent, 2);
        }
        assertThat(sent).extracting(ProgressNotification::message).containsExactly("a", "日b");
        assertThat(sent).extracting(ProgressNotification::progressToken).containsOnly("token");
        assertThat(sent.get(1).progress()).isGreaterThan(sent.get(0).progress());
    }

    @Test
    void outputPastTheCapIsCountedNotKept() throws Exception {
        List<ProgressNotification> sent = new CopyOnWriteArrayList<>();
        try (ProgressReporter progress = ProgressReporter.start(1, sent::add)) {
            byte[] big = new byte[ProgressReporter.MAX_MESSAGE_BYTES + 100];
            Arrays.fill(big, (byte) 'x');
            progress.onOutput(ExecStream.STDERR, big);
            awaitSent(sent, 1);
        }
        String message = sent.get(0).message();
        assertThat(message).startsWith("x".repeat(ProgressReporter.MAX_MESSAGE_BYTES))
                .contains("100 bytes of output not shown");
        assertThat(message.length()).isLessThan(ProgressReporter.MAX_MESSAGE_BYTES + 200);
    }

    @Test
    void nothingIsSentOnceClosedOrWhileNotWanted() throws Exception {
        List<ProgressNotification> sent = new CopyOnWriteArrayList<>();
        ProgressReporter closed = ProgressReporter.start("closed", sent::add);
        closed.close();
        closed.onOutput(ExecStream.STDOUT, "late".getBytes(StandardCharsets.UTF_8));
        try (ProgressReporter unwanted = ProgressReporter.start("cancelled", sent::add, () -> false)) {
            unwanted.onOutput(ExecStream.STDOUT, "x".getBytes(StandardCharsets.UTF_8));
            Thread.sleep(ProgressReporter.FLUSH_INTERVAL.multipliedBy(4).toMillis());
        }
        assertThat(sent).isEmpty();
    }

    @Test
    void completeUtf8LengthHoldsBackOnlyAnIncompleteLastCharacter() {
        byte[] japanese = "日".getBytes(StandardCharsets.UTF_8);
        assertThat(ProgressReporter.completeUtf8Length(japanese)).isEqualTo(3);
        assertThat(ProgressReporter.completeUtf8Length(Arrays.copyOf(japanese, 2))).isZero();
        assertThat(ProgressReporter.completeUtf8Length("ab".getBytes(StandardCharsets.UTF_8))).isEqualTo(2);
        assertThat(ProgressReporter.completeUtf8Length(new byte[] {'a', (byte) 0xf0, (byte) 0x9f})).isEqualTo(1);
        assertThat(ProgressReporter.completeUtf8Length(new byte[0])).isZero();
    }

    private static void awaitSent(List<ProgressNotification> sent, int count) throws InterruptedException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (sent.size() < count && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(sent).hasSizeGreaterThanOrEqualTo(count);
    }
}
