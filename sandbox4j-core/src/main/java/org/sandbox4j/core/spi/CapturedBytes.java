package org.sandbox4j.core.spi;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.Charset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * Bytes a command printed, held in the blocks they were read into. Nothing is copied on the way in
 * (a reader reads straight into the free end of the last block, see {@link ExecCapture#drain}) nor
 * on the way out through {@link #inputStream()} and {@link #transferTo}; {@link #toByteArray()} makes
 * the one copy a caller who wants an array asks for. Immutable: only the capture's builder fills
 * blocks, and it gives them up when it builds. Equal by content.
 *
 * <p>Why blocks and not one growing array: an array that grows copies all it holds each time it
 * grows, and trimming it copies it again, so a large output used to pass through the heap several
 * times. Blocks grow from just under 8 KiB (most commands print little) to just
 * under 4 MiB, sized so that with an array's header they fill whole G1 regions of 1, 2 or 4 MiB and
 * stay under half of a larger region: an array one header past a region boundary would cost a
 * whole extra region, a "humongous" waste.
 */
public final class CapturedBytes {

    private static final int KIB = 1024;
    /** More than a HotSpot array's header (16 bytes, 24 without compressed class pointers) plus alignment. */
    static final int ARRAY_HEADER_ALLOWANCE = 64;
    /** The first block's size: a command's whole output, most of the time. */
    static final int FIRST_BLOCK_BYTES = 8 * KIB - ARRAY_HEADER_ALLOWANCE;
    /**
     * The largest block: with its header, just under 4 MiB, so it fills whole G1 regions of 1, 2 and
     * 4 MiB to within a few bytes, and is under half of (not humongous in) a region of 8 MiB or more.
     */
    static final int MAX_BLOCK_BYTES = 4 * KIB * KIB - ARRAY_HEADER_ALLOWANCE;

    private static final CapturedBytes EMPTY = new CapturedBytes(new byte[0][], 0);

    /** Every block is full but the last, which holds {@link #size} minus the others. */
    private final byte[][] blocks;
    private final int size;
    /** How much of the last block is used. */
    private final int lastUsed;

    private CapturedBytes(byte[][] blocks, int size) {
        this.blocks = blocks;
        this.size = size;
        long before = 0;
        for (int i = 0; i < blocks.length - 1; i++) {
            before += blocks[i].length;
        }
        this.lastUsed = (int) (size - before);
    }

    /** No bytes. */
    public static CapturedBytes empty() {
        return EMPTY;
    }

    /** A copy of {@code bytes} (later changes to the array do not show). */
    public static CapturedBytes copyOf(byte[] bytes) {
        Objects.requireNonNull(bytes, "bytes");
        return bytes.length == 0 ? EMPTY : new CapturedBytes(new byte[][] {bytes.clone()}, bytes.length);
    }

    public int size() {
        return size;
    }

    public boolean isEmpty() {
        return size == 0;
    }

    /** A fresh stream over the bytes; it copies only into the arrays its reader hands it. */
    public InputStream inputStream() {
        return new BlocksInputStream();
    }

    /**
     * Writes every byte to {@code out}, block by block, with no copy: {@code out} is handed these
     * bytes' own blocks (as {@link java.io.ByteArrayInputStream#transferTo} hands its array), so it
     * must neither change them nor keep them past the call.
     *
     * @return the number of bytes written
     */
    public long transferTo(OutputStream out) throws IOException {
        Objects.requireNonNull(out, "out");
        for (int i = 0; i < blocks.length; i++) {
            out.write(blocks[i], 0, used(i));
        }
        return size;
    }

    /** A copy of every byte in one array. */
    public byte[] toByteArray() {
        byte[] all = new byte[size];
        int at = 0;
        for (int i = 0; i < blocks.length; i++) {
            System.arraycopy(blocks[i], 0, all, at, used(i));
            at += used(i);
        }
        return all;
    }

    /** The bytes decoded with {@code charset}, malformed input replaced; one block is decoded in place. */
    public String toString(Charset charset) {
        Objects.requireNonNull(charset, "charset");
        return blocks.length == 1 ? new String(blocks[0], 0, size, charset) : new String(toByteArray(), charset);
    }

    /** Equal when both hold the same bytes, however they are split into blocks. */
    @Override
    public boolean equals(Object other) {
        if (this == other) {
            return true;
        }
        if (!(other instanceof CapturedBytes that) || size != that.size) {
            return false;
        }
        int mine = 0;
        int mineAt = 0;
        int theirs = 0;
        int theirsAt = 0;
        for (int left = size; left > 0; ) {
            int count = Math.min(used(mine) - mineAt, that.used(theirs) - theirsAt);
            if (!Arrays.equals(blocks[mine], mineAt, mineAt + count, that.blocks[theirs], theirsAt, theirsAt + count)) {
                return false;
            }
            left -= count;
            mineAt += count;
            theirsAt += count;
            if (mineAt == used(mine)) {
                mine++;
                mineAt = 0;
            }
            if (theirsAt == that.used(theirs)) {
                theirs++;
                theirsAt = 0;
            }
        }
        return true;
    }

    /** {@link Arrays#hashCode(byte[])} of the bytes, as if they were one array. */
    @Override
    public int hashCode() {
        int hash = 1;
        for (int i = 0; i < blocks.length; i++) {
            byte[] block = blocks[i];
            for (int j = 0, end = used(i); j < end; j++) {
                hash = 31 * hash + block[j];
            }
        }
        return hash;
    }

    /** The size only: output may hold secrets. */
    @Override
    public String toString() {
        return "CapturedBytes[" + size + " bytes]";
    }

    /** The blocks' lengths, for tests of the sizing rule. */
    int[] blockLengths() {
        return Arrays.stream(blocks).mapToInt(block -> block.length).toArray();
    }

    private int used(int block) {
        return block < blocks.length - 1 ? blocks[block].length : lastUsed;
    }

    /** Reads the blocks in order; a block's end moves on to the next. */
    private final class BlocksInputStream extends InputStream {
        private int block;
        private int offset;
        private long remaining = size;

        @Override
        public int read() {
            if (!advance()) {
                return -1;
            }
            remaining--;
            return blocks[block][offset++] & 0xFF;
        }

        @Override
        public int read(byte[] into, int off, int len) {
            Objects.checkFromIndexSize(off, len, into.length);
            if (len == 0) {
                return 0;
            }
            if (!advance()) {
                return -1;
            }
            int count = Math.min(len, used(block) - offset);
            System.arraycopy(blocks[block], offset, into, off, count);
            offset += count;
            remaining -= count;
            return count;
        }

        @Override
        public long skip(long n) {
            long skipped = 0;
            while (skipped < n && advance()) {
                int step = (int) Math.min(n - skipped, used(block) - offset);
                offset += step;
                remaining -= step;
                skipped += step;
            }
            return skipped;
        }

        @Override
        public int available() {
            return (int) remaining;
        }

        /** Hands {@code out} the blocks themselves, as {@link CapturedBytes#transferTo} does. */
        @Override
        public long transferTo(OutputStream out) throws IOException {
            Objects.requireNonNull(out, "out");
            long written = 0;
            while (advance()) {
                int count = used(block) - offset;
                out.write(blocks[block], offset, count);
                offset += count;
                remaining -= count;
                written += count;
            }
            return written;
        }

        /** Whether a byte is left, moving past the end of a block to the next. */
        private boolean advance() {
            if (remaining == 0) {
                return false;
            }
            while (offset == used(block)) {
                block++;
                offset = 0;
            }
            return true;
        }

    }

    /**
     * Fills blocks for one stream: hands out the free end of the last block to read into
     * ({@link #blockWithRoom}, {@link #filled}), takes what landed there ({@link #commit}) or copies
     * bytes in ({@link #append}), and {@link #build}s, giving its blocks up. Not thread-safe: one
     * stream's feeder uses it, under the capture's lock where others may look.
     */
    static final class Builder {
        private final List<byte[]> blocks = new ArrayList<>();
        private byte[] current;
        private int filled;
        private int size;
        private int nextBlockBytes = FIRST_BLOCK_BYTES;

        /**
         * The last block, with at least one free byte from {@link #filled()} on; a new block when it is
         * full, of the next size but no larger than {@code most}.
         *
         * @param most at least 1: how much more may be kept (the cap's room), so no block outgrows it
         */
        byte[] blockWithRoom(long most) {
            if (most < 1) {
                throw new IllegalArgumentException("a block needs room for at least one byte, not " + most);
            }
            if (current == null || filled == current.length) {
                current = new byte[(int) Math.min(nextBlockBytes, most)];
                filled = 0;
                blocks.add(current);
                nextBlockBytes = Math.min(MAX_BLOCK_BYTES, 2 * (nextBlockBytes + ARRAY_HEADER_ALLOWANCE)
                        - ARRAY_HEADER_ALLOWANCE);
            }
            return current;
        }

        /** Where the free part of {@link #blockWithRoom}'s block begins. */
        int filled() {
            return filled;
        }

        /** Keeps the {@code count} bytes that were written at {@link #filled()} of the last block. */
        void commit(int count) {
            if (count < 0 || current == null || count > current.length - filled) {
                throw new IllegalArgumentException("cannot keep " + count + " bytes: the last block has "
                        + (current == null ? 0 : current.length - filled) + " free");
            }
            filled += count;
            size = Math.addExact(size, count);
        }

        /** Copies {@code bytes[off, off + len)} in; {@code most} bounds new blocks as in {@link #blockWithRoom}. */
        void append(byte[] bytes, int off, int len, long most) {
            Objects.checkFromIndexSize(off, len, bytes.length);
            int done = 0;
            while (done < len) {
                byte[] block = blockWithRoom(Math.max(1, most - done));
                int count = Math.min(len - done, block.length - filled);
                System.arraycopy(bytes, off + done, block, filled, count);
                commit(count);
                done += count;
            }
        }

        int size() {
            return size;
        }

        /** A copy of what was kept so far (the free end of the last block, still filling, is not read). */
        byte[] toByteArray() {
            return snapshot(false).toByteArray();
        }

        /**
         * The kept bytes, the blocks given up: this builder starts empty again. A last block less than
         * half used is copied to its used length (at most half a block is copied), so a small output
         * does not hold a block that is mostly empty.
         */
        CapturedBytes build() {
            CapturedBytes built = snapshot(true);
            blocks.clear();
            current = null;
            filled = 0;
            size = 0;
            nextBlockBytes = FIRST_BLOCK_BYTES;
            return built;
        }

        private CapturedBytes snapshot(boolean trimLast) {
            if (size == 0) {
                return EMPTY;
            }
            List<byte[]> kept = new ArrayList<>(blocks);
            if (filled == 0) {
                kept.remove(kept.size() - 1);
            } else if (trimLast && filled < current.length / 2) {
                kept.set(kept.size() - 1, Arrays.copyOf(current, filled));
            }
            return new CapturedBytes(kept.toArray(new byte[0][]), size);
        }
    }
}
