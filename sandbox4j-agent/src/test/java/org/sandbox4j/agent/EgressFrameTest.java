package org.sandbox4j.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import org.junit.jupiter.api.Test;

/** The tunnel's framing: what is encoded decodes back, and lengths are bounded both ways. */
class EgressFrameTest {

    @Test
    void aFrameDecodesAsEncoded() throws Exception {
        byte[] payload = {1, 2, 3};
        byte[] wire = EgressFrame.encode(0xffff_fffeL, EgressProtocol.DATA, payload);
        assertThat(wire).startsWith(0xff, 0xff, 0xff, 0xfe, EgressProtocol.DATA, 0, 0, 0, 3);
        EgressFrame frame = new EgressFrame.Reader(new ByteArrayInputStream(wire)).read();
        assertThat(frame.stream()).isEqualTo(0xffff_fffeL);
        assertThat(frame.type()).isEqualTo(EgressProtocol.DATA);
        assertThat(frame.payload()).containsExactly(1, 2, 3);
    }

    @Test
    void theLargestPayloadIsAllowedAndOneMoreIsNot() throws Exception {
        byte[] largest = EgressFrame.encode(1, EgressProtocol.DATA, new byte[EgressProtocol.DATA_MAX]);
        assertThat(new EgressFrame.Reader(new ByteArrayInputStream(largest)).read().payload())
                .hasSize(EgressProtocol.DATA_MAX);
        assertThatThrownBy(() -> EgressFrame.encode(1, EgressProtocol.DATA, new byte[EgressProtocol.DATA_MAX + 1]))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> EgressFrame.encode(-1, EgressProtocol.DATA, new byte[0]))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aLengthBeyondTheBoundIsAViolationBeforeAnythingIsAllocated() {
        byte[] header = {0, 0, 0, 1, EgressProtocol.DATA, 0, 1, 0, 1};
        assertThatThrownBy(() -> new EgressFrame.Reader(new ByteArrayInputStream(header)).read())
                .isInstanceOf(AgentProtocolViolation.class).hasMessageContaining("65537 bytes");
    }

    @Test
    void beforeTheHandshakeEverythingUpToAHelloIsSkipped() throws Exception {
        ByteArrayOutputStream wire = new ByteArrayOutputStream();
        wire.write(new byte[] {(byte) 0xff, 0, 0, 0});
        wire.write(EgressFrame.encode(3, EgressProtocol.DATA, new byte[500]));
        wire.write(EgressFrame.encode(0, EgressProtocol.HELLO, new byte[10])); // no magic: not a HELLO
        wire.write(EgressFrame.encode(0, EgressProtocol.HELLO, EgressFrame.hello(1, 7)));
        EgressFrame frame = new EgressFrame.Reader(new ByteArrayInputStream(wire.toByteArray())).readHello();
        assertThat(frame.type()).isEqualTo(EgressProtocol.HELLO);
        assertThat(BigEndian.u32(frame.payload(), 0)).isEqualTo(EgressProtocol.MAGIC);
        assertThat(BigEndian.u32(frame.payload(), 6)).isEqualTo(7);
    }

    @Test
    void aTruncatedFrameIsTheEndOfTheStream() {
        byte[] wire = EgressFrame.encode(1, EgressProtocol.DATA, new byte[100]);
        byte[] truncated = java.util.Arrays.copyOf(wire, 50);
        assertThatThrownBy(() -> new EgressFrame.Reader(new ByteArrayInputStream(truncated)).read())
                .isInstanceOf(EOFException.class);
    }
}
