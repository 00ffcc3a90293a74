package org.sandbox4j.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.spi.ExecCapture;

/** The reader's side of an exec's output: every bound checked before a byte is read, and the stream kept in sync. */
class OutputSinkTest {

    private static final int ID = 7;
    private static final byte[] NEXT = FrameStream.encode(AgentProtocol.PONG, ID, new byte[0]);

    @Test
    void keepsTheDataAndLeavesTheStreamAtTheNextFrameTrailingBytesDropped() throws IOException {
        ExecCapture capture = capture(1024);
        OutputSink sink = new OutputSink(capture, 64, 16);
        byte[] payload = Payload.create().u8(AgentProtocol.STDOUT).bytes(text("abc")).u8(0x55).u8(0x66).build();
        FrameStream frames = frames(out(payload), NEXT);

        sink.receive(frames, frames.header(false).payloadLength());

        assertThat(frames.header(false).type()).isEqualTo(AgentProtocol.PONG);
        assertThat(capture.stdout()).isEqualTo(text("abc"));
        assertThat(capture.stderr()).isEmpty();
    }

    @Test
    void outputBeyondTheGrantedCreditIsAViolationUntilGrantedBack() throws IOException {
        OutputSink sink = new OutputSink(capture(1024), 8, 4);
        byte[] six = Payload.create().u8(AgentProtocol.STDERR).bytes(new byte[6]).build();
        byte[] three = Payload.create().u8(AgentProtocol.STDERR).bytes(new byte[3]).build();
        FrameStream frames = frames(out(six), out(three), out(three));

        sink.receive(frames, frames.header(false).payloadLength());
        FrameStream.Header over = frames.header(false);
        assertThatThrownBy(() -> sink.receive(frames, over.payloadLength()))
                .isInstanceOf(AgentProtocolViolation.class).hasMessageContaining("more output on stream 2");

        OutputSink granted = new OutputSink(capture(1024), 8, 4);
        FrameStream again = frames(out(six), out(three));
        granted.receive(again, again.header(false).payloadLength());
        granted.granted(AgentProtocol.STDERR, 4);
        granted.receive(again, again.header(false).payloadLength());
    }

    @Test
    void aLengthPastThePayloadOrTheChunkMaximumOrAnUnknownStreamIsAViolation() {
        byte[] longerThanItself = Payload.create().u8(AgentProtocol.STDOUT).u32(100).u8(1).build();
        byte[] overChunk = Payload.create().u8(AgentProtocol.STDOUT).u32(AgentProtocol.OUT_CHUNK_MAX + 1L).build();
        byte[] streamThree = Payload.create().u8(3).bytes(new byte[1]).build();
        byte[] short4 = new byte[4];
        for (byte[] payload : new byte[][] {longerThanItself, overChunk, streamThree, short4}) {
            OutputSink sink = new OutputSink(capture(1024), 1 << 20, 1 << 10);
            FrameStream frames = frames(out(payload));
            assertThatThrownBy(() -> sink.receive(frames, frames.header(false).payloadLength()))
                    .isInstanceOf(AgentProtocolViolation.class);
        }
    }

    @Test
    void pastTheCapBytesAreReadAndDroppedAndTheExecIsToldAtOnce() throws IOException {
        ExecCapture capture = capture(4);
        OutputSink sink = new OutputSink(capture, 64, 16);
        FrameStream frames = frames(out(Payload.create().u8(AgentProtocol.STDOUT).bytes(text("abcdef")).build()), NEXT);

        boolean note = sink.receive(frames, frames.header(false).payloadLength());

        assertThat(note).isTrue();
        assertThat(capture.capExceeded()).isTrue();
        assertThat(capture.stdout()).isEqualTo(text("abcd"));
        assertThat(frames.header(false).type()).isEqualTo(AgentProtocol.PONG);
    }

    @Test
    void aNoteIsDueOncePerGrantAndOneWaitsAtATime() throws IOException {
        OutputSink sink = new OutputSink(capture(1024), 16, 4);
        byte[] two = Payload.create().u8(AgentProtocol.STDOUT).bytes(new byte[2]).build();
        byte[] four = Payload.create().u8(AgentProtocol.STDOUT).bytes(new byte[4]).build();
        FrameStream frames = frames(out(two), out(two), out(four), out(four));

        assertThat(sink.receive(frames, frames.header(false).payloadLength())).isFalse();
        assertThat(sink.receive(frames, frames.header(false).payloadLength())).isTrue();
        assertThat(sink.receive(frames, frames.header(false).payloadLength())).isFalse();
        assertThat(sink.take()).containsExactly(8, 0);
        assertThat(sink.receive(frames, frames.header(false).payloadLength())).isTrue();
    }

    @Test
    void afterAKillOutputIsReadAndNotKept() throws IOException {
        ExecCapture capture = capture(1024);
        OutputSink sink = new OutputSink(capture, 64, 16);
        sink.drop();
        FrameStream frames = frames(out(Payload.create().u8(AgentProtocol.STDOUT).bytes(text("abc")).build()), NEXT);

        sink.receive(frames, frames.header(false).payloadLength());

        assertThat(capture.stdout()).isEmpty();
        assertThat(frames.header(false).type()).isEqualTo(AgentProtocol.PONG);
    }

    @Test
    void aStreamEndingInsideTheDataIsAnEndNotAShortOutput() {
        byte[] frame = out(Payload.create().u8(AgentProtocol.STDOUT).bytes(text("abcdef")).build());
        FrameStream frames = new FrameStream(new ByteArrayInputStream(frame, 0, frame.length - 2));
        OutputSink sink = new OutputSink(capture(1024), 64, 16);
        assertThatThrownBy(() -> sink.receive(frames, frames.header(false).payloadLength()))
                .isInstanceOf(java.io.EOFException.class);
    }

    private static ExecCapture capture(long cap) {
        return new ExecCapture(ExecOptions.in("/", Duration.ofSeconds(5)).withOutputCap(cap), "test");
    }

    private static byte[] out(byte[] payload) {
        return FrameStream.encode(AgentProtocol.OUT, ID, payload);
    }

    private static FrameStream frames(byte[]... encoded) {
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        for (byte[] frame : encoded) {
            all.writeBytes(frame);
        }
        return new FrameStream(new ByteArrayInputStream(all.toByteArray()));
    }

    private static byte[] text(String value) {
        return value.getBytes(StandardCharsets.UTF_8);
    }
}
