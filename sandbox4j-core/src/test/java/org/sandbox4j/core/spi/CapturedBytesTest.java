package org.sandbox4j.core.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/** The blocks a capture keeps: every way out gives the same bytes, at and around every block edge. */
class CapturedBytesTest {

    private static final int FIRST = CapturedBytes.FIRST_BLOCK_BYTES;
    private static final int MAX = CapturedBytes.MAX_BLOCK_BYTES;
    private static final long UNBOUNDED = Long.MAX_VALUE;

    /** Bytes that differ from block to block, so a byte out of place shows. */
    private static byte[] pattern(int length, long seed) {
        byte[] bytes = new byte[length];
        new Random(seed).nextBytes(bytes);
        return bytes;
    }

    /** Fills a builder in pieces of {@code piece} bytes, as a feeder of frames would. */
    private static CapturedBytes appended(byte[] bytes, int piece) {
        CapturedBytes.Builder builder = new CapturedBytes.Builder();
        for (int at = 0; at < bytes.length; at += piece) {
            builder.append(bytes, at, Math.min(piece, bytes.length - at), UNBOUNDED);
        }
        return builder.build();
    }

    /** Fills a builder as a reader does: straight into the free end of the last block. */
    private static CapturedBytes readInPlace(byte[] bytes, int most) {
        CapturedBytes.Builder builder = new CapturedBytes.Builder();
        for (int at = 0; at < bytes.length; ) {
            byte[] block = builder.blockWithRoom(UNBOUNDED);
            int count = Math.min(Math.min(most, block.length - builder.filled()), bytes.length - at);
            System.arraycopy(bytes, at, block, builder.filled(), count);
            builder.commit(count);
            at += count;
        }
        return builder.build();
    }

    private static void assertHolds(CapturedBytes captured, byte[] expected) throws IOException {
        assertThat(captured.size()).isEqualTo(expected.length);
        assertThat(captured.isEmpty()).isEqualTo(expected.length == 0);
        assertThat(captured.toByteArray()).isEqualTo(expected);
        ByteArrayOutputStream transferred = new ByteArrayOutputStream();
        assertThat(captured.transferTo(transferred)).isEqualTo(expected.length);
        assertThat(transferred.toByteArray()).isEqualTo(expected);
        try (InputStream stream = captured.inputStream()) {
            assertThat(stream.available()).isEqualTo(expected.length);
            assertThat(stream.readAllBytes()).isEqualTo(expected);
            assertThat(stream.read()).isEqualTo(-1);
        }
        ByteArrayOutputStream streamTransferred = new ByteArrayOutputStream();
        assertThat(captured.inputStream().transferTo(streamTransferred)).isEqualTo(expected.length);
        assertThat(streamTransferred.toByteArray()).isEqualTo(expected);
        assertThat(captured).isEqualTo(CapturedBytes.copyOf(expected));
        assertThat(captured.hashCode()).isEqualTo(Arrays.hashCode(expected));
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, FIRST - 1, FIRST, FIRST + 1, 2 * FIRST, 3 * FIRST + 64, 3 * FIRST + 65,
            3 * FIRST + 129, 100_000})
    void everyWayOutGivesTheSameBytesAtAndAroundBlockEdges(int length) throws IOException {
        byte[] bytes = pattern(length, length);
        assertHolds(appended(bytes, 7), bytes);
        assertHolds(appended(bytes, Math.max(1, length)), bytes);
        assertHolds(readInPlace(bytes, ExecCapture.CHUNK_BYTES), bytes);
        assertHolds(readInPlace(bytes, 1), bytes);
    }

    @Test
    void largeOutputGrowsBlocksToJustUnderFourMebibytesAndNoFurther() throws IOException {
        byte[] bytes = pattern(3 * MAX + 12_345, 7);
        CapturedBytes captured = readInPlace(bytes, ExecCapture.CHUNK_BYTES);
        assertHolds(captured, bytes);
        int[] lengths = captured.blockLengths();
        assertThat(lengths[0]).isEqualTo(FIRST);
        for (int length : Arrays.copyOf(lengths, lengths.length - 1)) {
            // With an array's header each block is a power of two: whole G1 regions, or under half of one.
            assertThat(Integer.bitCount(length + CapturedBytes.ARRAY_HEADER_ALLOWANCE)).isEqualTo(1);
            assertThat(length).isLessThanOrEqualTo(MAX);
        }
        // The last block, less than half used, was cut to what it holds.
        long others = Arrays.stream(lengths, 0, lengths.length - 1).asLongStream().sum();
        assertThat(lengths[lengths.length - 1]).isEqualTo(bytes.length - others).isLessThan(MAX / 2);
        assertThat(lengths).contains(MAX);
        assertThat(Arrays.stream(lengths).asLongStream().sum()).isLessThan(bytes.length + (long) MAX);
    }

    @Test
    void aBlockIsNoLargerThanTheRoomLeft() {
        CapturedBytes.Builder builder = new CapturedBytes.Builder();
        assertThat(builder.blockWithRoom(10)).hasSize(10);
        builder.commit(10);
        assertThat(builder.blockWithRoom(1)).hasSize(1);
        assertThatThrownBy(() -> builder.blockWithRoom(0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aCommitCannotPassTheFreeEnd() {
        CapturedBytes.Builder builder = new CapturedBytes.Builder();
        assertThatThrownBy(() -> builder.commit(1)).isInstanceOf(IllegalArgumentException.class);
        byte[] block = builder.blockWithRoom(4);
        assertThatThrownBy(() -> builder.commit(block.length + 1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> builder.commit(-1)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aSmallOutputKeepsNoMostlyEmptyBlock() throws IOException {
        CapturedBytes captured = appended("hello".getBytes(StandardCharsets.US_ASCII), 5);
        assertThat(captured.blockLengths()).containsExactly(5);
        assertHolds(captured, "hello".getBytes(StandardCharsets.US_ASCII));
    }

    @Test
    void aBlockAllocatedButNeverFilledIsNotKept() {
        CapturedBytes.Builder builder = new CapturedBytes.Builder();
        builder.append(new byte[FIRST], 0, FIRST, UNBOUNDED);
        builder.blockWithRoom(UNBOUNDED);
        CapturedBytes captured = builder.build();
        assertThat(captured.blockLengths()).containsExactly(FIRST);
        assertThat(captured.size()).isEqualTo(FIRST);
    }

    @Test
    void emptyHoldsNothingAndIsOne() throws IOException {
        assertHolds(CapturedBytes.empty(), new byte[0]);
        assertThat(new CapturedBytes.Builder().build()).isSameAs(CapturedBytes.empty());
        assertThat(CapturedBytes.copyOf(new byte[0])).isSameAs(CapturedBytes.empty());
        assertThat(CapturedBytes.empty().blockLengths()).isEmpty();
    }

    @Test
    void buildingGivesTheBlocksUpAndStartsAfresh() throws IOException {
        CapturedBytes.Builder builder = new CapturedBytes.Builder();
        byte[] first = pattern(FIRST + 10, 1);
        builder.append(first, 0, first.length, UNBOUNDED);
        CapturedBytes built = builder.build();
        builder.append(new byte[] {1, 2, 3}, 0, 3, UNBOUNDED);
        assertHolds(built, first);
        assertThat(builder.build().toByteArray()).containsExactly(1, 2, 3);
    }

    @Test
    void aSnapshotWhileFillingSeesOnlyWhatWasKept() {
        CapturedBytes.Builder builder = new CapturedBytes.Builder();
        byte[] block = builder.blockWithRoom(UNBOUNDED);
        block[0] = 'a';
        builder.commit(1);
        block[1] = 'b';
        assertThat(builder.toByteArray()).containsExactly('a');
        assertThat(builder.size()).isEqualTo(1);
    }

    @Test
    void nothingOutsideChangesTheBytes() throws IOException {
        byte[] source = {1, 2, 3};
        CapturedBytes captured = CapturedBytes.copyOf(source);
        source[0] = 9;
        captured.toByteArray()[1] = 9;
        byte[] read = new byte[3];
        assertThat(captured.inputStream().read(read, 0, 3)).isEqualTo(3);
        read[2] = 9;
        assertThat(captured.toByteArray()).containsExactly(1, 2, 3);
    }

    @Test
    void theStreamReadsSkipsAndCountsAcrossBlocks() throws IOException {
        byte[] bytes = pattern(2 * FIRST + 100, 3);
        CapturedBytes captured = readInPlace(bytes, 1000);
        InputStream stream = captured.inputStream();
        assertThat(stream.read()).isEqualTo(bytes[0] & 0xFF);
        assertThat(stream.skip(FIRST - 1)).isEqualTo(FIRST - 1);
        assertThat(stream.read()).isEqualTo(bytes[FIRST] & 0xFF);
        assertThat(stream.available()).isEqualTo(bytes.length - FIRST - 1);
        assertThat(stream.read(new byte[4], 0, 0)).isZero();
        assertThat(stream.skip(Long.MAX_VALUE)).isEqualTo(bytes.length - FIRST - 1);
        assertThat(stream.read(new byte[4], 0, 4)).isEqualTo(-1);
        assertThat(stream.skip(1)).isZero();
        assertThatThrownBy(() -> stream.read(new byte[4], 3, 2)).isInstanceOf(IndexOutOfBoundsException.class);
    }

    @Test
    void equalityIsByContentHoweverTheBlocksSplit() {
        byte[] bytes = pattern(3 * FIRST, 5);
        CapturedBytes inPieces = appended(bytes, 1000);
        CapturedBytes whole = CapturedBytes.copyOf(bytes);
        assertThat(inPieces).isEqualTo(whole).hasSameHashCodeAs(whole);
        assertThat(whole).isEqualTo(inPieces);
        byte[] changed = bytes.clone();
        changed[changed.length - 1]++;
        assertThat(inPieces).isNotEqualTo(CapturedBytes.copyOf(changed));
        assertThat(inPieces).isNotEqualTo(CapturedBytes.copyOf(Arrays.copyOf(bytes, bytes.length - 1)));
        assertThat(inPieces).isNotEqualTo("not bytes");
    }

    @Test
    void textIsDecodedAcrossBlocksAndToStringGivesTheSizeOnly() {
        String text = "é".repeat(FIRST);
        byte[] utf8 = text.getBytes(StandardCharsets.UTF_8);
        // Pieces of 3 bytes split every other two-byte character between blocks as well.
        CapturedBytes captured = appended(utf8, 3);
        assertThat(captured.blockLengths()).hasSizeGreaterThan(1);
        assertThat(captured.toString(StandardCharsets.UTF_8)).isEqualTo(text);
        assertThat(captured.toString()).isEqualTo("CapturedBytes[" + utf8.length + " bytes]").doesNotContain("é");
    }
}
