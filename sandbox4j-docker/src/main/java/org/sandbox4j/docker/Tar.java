package org.sandbox4j.docker;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Optional;
import org.sandbox4j.core.EntryKind;

/**
 * The little of the tar format the Engine API's archive endpoints need: writing directory and
 * file entries (ustar, with a PAX header for a name ustar cannot hold), and reading the first
 * entry's header of an archive the engine streams. Every read is bounded.
 */
final class Tar {

    static final int BLOCK = 512;
    /** A PAX or GNU long-name header larger than this is refused: a real one is a few hundred bytes. */
    static final int MAX_EXTENDED_HEADER_BYTES = 64 * 1024;

    private static final int NAME_LENGTH = 100;
    private static final int MODE_OFFSET = 100;
    private static final int UID_OFFSET = 108;
    private static final int GID_OFFSET = 116;
    private static final int SIZE_OFFSET = 124;
    private static final int SIZE_LENGTH = 12;
    private static final int MTIME_OFFSET = 136;
    private static final int CHECKSUM_OFFSET = 148;
    private static final int CHECKSUM_LENGTH = 8;
    private static final int TYPE_OFFSET = 156;
    private static final int MAGIC_OFFSET = 257;
    private static final int PREFIX_OFFSET = 345;
    private static final int PREFIX_LENGTH = 155;
    private static final byte[] USTAR_MAGIC = "ustar\00000".getBytes(StandardCharsets.US_ASCII);

    private static final byte REGULAR = '0';
    private static final byte REGULAR_OLD = 0;
    private static final byte HARD_LINK = '1';
    private static final byte SYMLINK = '2';
    private static final byte DIRECTORY = '5';
    private static final byte CONTIGUOUS = '7';
    private static final byte PAX_LOCAL = 'x';
    private static final byte PAX_GLOBAL = 'g';
    private static final byte GNU_LONG_NAME = 'L';
    private static final byte GNU_LONG_LINK = 'K';

    private Tar() {
    }

    /** One entry's header as read from an archive. */
    record Header(String name, EntryKind kind, long size) {
    }

    /** Builds an archive in memory: the caller bounds what it adds (a file is already in memory). */
    static final class Writer {
        private final ByteArrayOutputStream out = new ByteArrayOutputStream();
        private final int uid;
        private final int gid;

        Writer(int uid, int gid) {
            this.uid = uid;
            this.gid = gid;
        }

        Writer directory(String name, int mode) {
            header(name.endsWith("/") ? name : name + "/", mode, 0, DIRECTORY);
            return this;
        }

        Writer file(String name, int mode, byte[] content) {
            header(name, mode, content.length, REGULAR);
            out.writeBytes(content);
            pad(content.length);
            return this;
        }

        /** The archive, with its two closing zero blocks. */
        byte[] finish() {
            out.writeBytes(new byte[2 * BLOCK]);
            return out.toByteArray();
        }

        private void header(String name, int mode, long size, byte type) {
            byte[] nameBytes = name.getBytes(StandardCharsets.UTF_8);
            boolean ascii = nameBytes.length == name.length();
            if (nameBytes.length > NAME_LENGTH || !ascii) {
                byte[] record = paxRecord("path", name);
                out.writeBytes(block("PaxHeaders/entry", 0644, record.length, PAX_LOCAL));
                out.writeBytes(record);
                pad(record.length);
                String shortName = type == DIRECTORY ? "entry/" : "entry";
                out.writeBytes(block(shortName, mode, size, type));
            } else {
                out.writeBytes(block(name, mode, size, type));
            }
        }

        private byte[] block(String name, int mode, long size, byte type) {
            byte[] header = new byte[BLOCK];
            put(header, 0, NAME_LENGTH, name.getBytes(StandardCharsets.UTF_8));
            octal(header, MODE_OFFSET, 8, mode);
            octal(header, UID_OFFSET, 8, uid);
            octal(header, GID_OFFSET, 8, gid);
            octal(header, SIZE_OFFSET, SIZE_LENGTH, size);
            octal(header, MTIME_OFFSET, 12, System.currentTimeMillis() / 1000);
            header[TYPE_OFFSET] = type;
            System.arraycopy(USTAR_MAGIC, 0, header, MAGIC_OFFSET, USTAR_MAGIC.length);
            Arrays.fill(header, CHECKSUM_OFFSET, CHECKSUM_OFFSET + CHECKSUM_LENGTH, (byte) ' ');
            long sum = 0;
            for (byte b : header) {
                sum += b & 0xFF;
            }
            octal(header, CHECKSUM_OFFSET, 7, sum);
            return header;
        }

        private void pad(long length) {
            int rest = (int) (length % BLOCK);
            if (rest != 0) {
                out.writeBytes(new byte[BLOCK - rest]);
            }
        }
    }

    /** A PAX record {@code "<len> key=value\n"}, whose length counts its own digits. */
    static byte[] paxRecord(String key, String value) {
        int body = (" " + key + "=" + value + "\n").getBytes(StandardCharsets.UTF_8).length;
        int length = body + Integer.toString(body).length();
        if (Integer.toString(length).length() != Integer.toString(body).length()) {
            length++;
        }
        return (length + " " + key + "=" + value + "\n").getBytes(StandardCharsets.UTF_8);
    }

    private static void put(byte[] header, int offset, int length, byte[] value) {
        System.arraycopy(value, 0, header, offset, Math.min(length, value.length));
    }

    private static void octal(byte[] header, int offset, int length, long value) {
        String digits = Long.toOctalString(value);
        String padded = "0".repeat(Math.max(0, length - 1 - digits.length())) + digits;
        put(header, offset, length - 1, padded.getBytes(StandardCharsets.US_ASCII));
        header[offset + length - 1] = 0;
    }

    /**
     * Reads the first real entry's header (skipping PAX and GNU long-name headers, whose contents
     * may name the entry and its size), leaving {@code in} at the start of that entry's data.
     *
     * @return empty for an archive with no entry
     * @throws IOException for a truncated or malformed archive
     */
    static Optional<Header> firstHeader(InputStream in) throws IOException {
        String longName = null;
        Long paxSize = null;
        while (true) {
            byte[] header = in.readNBytes(BLOCK);
            if (header.length < BLOCK) {
                if (header.length == 0) {
                    return Optional.empty();
                }
                throw new EOFException("the archive ends inside a header");
            }
            if (isZero(header)) {
                return Optional.empty();
            }
            verifyChecksum(header);
            byte type = header[TYPE_OFFSET];
            long size = size(header);
            if (type == PAX_LOCAL || type == PAX_GLOBAL || type == GNU_LONG_NAME || type == GNU_LONG_LINK) {
                byte[] data = readPadded(in, size);
                if (type == PAX_LOCAL) {
                    String[] records = parsePax(data);
                    if (records[0] != null) {
                        longName = records[0];
                    }
                    if (records[1] != null) {
                        paxSize = Long.parseLong(records[1]);
                    }
                } else if (type == GNU_LONG_NAME) {
                    longName = cString(data, 0, data.length);
                }
                continue;
            }
            String name = longName != null ? longName : ustarName(header);
            return Optional.of(new Header(name, kindOf(type), paxSize != null ? paxSize : size));
        }
    }

    /** Skips the padding after an entry's data of {@code size} bytes. */
    static void skipPadding(InputStream in, long size) throws IOException {
        int rest = (int) (size % BLOCK);
        if (rest != 0) {
            in.skipNBytes(BLOCK - rest);
        }
    }

    private static EntryKind kindOf(byte type) {
        return switch (type) {
            case REGULAR, REGULAR_OLD, CONTIGUOUS -> EntryKind.FILE;
            case DIRECTORY -> EntryKind.DIRECTORY;
            case SYMLINK -> EntryKind.SYMLINK;
            // A hard link names another entry's data: never read through it.
            case HARD_LINK -> EntryKind.OTHER;
            default -> EntryKind.OTHER;
        };
    }

    private static byte[] readPadded(InputStream in, long size) throws IOException {
        if (size < 0 || size > MAX_EXTENDED_HEADER_BYTES) {
            throw new IOException("an extended tar header of " + size + " bytes is more than the "
                    + MAX_EXTENDED_HEADER_BYTES + " accepted");
        }
        byte[] data = in.readNBytes((int) size);
        if (data.length < size) {
            throw new EOFException("the archive ends inside an extended header");
        }
        skipPadding(in, size);
        return data;
    }

    /** {@code [path, size]} from PAX records, either null when absent. */
    private static String[] parsePax(byte[] data) throws IOException {
        String[] found = new String[2];
        int position = 0;
        while (position < data.length) {
            int space = indexOf(data, (byte) ' ', position);
            if (space < 0) {
                throw new IOException("a malformed PAX record");
            }
            int length = Integer.parseInt(new String(data, position, space - position, StandardCharsets.US_ASCII));
            if (length <= 0 || position + length > data.length) {
                throw new IOException("a PAX record overruns its header");
            }
            String record = new String(data, space + 1, position + length - space - 2, StandardCharsets.UTF_8);
            int equals = record.indexOf('=');
            if (equals > 0) {
                String key = record.substring(0, equals);
                String value = record.substring(equals + 1);
                if (key.equals("path")) {
                    found[0] = value;
                } else if (key.equals("size")) {
                    found[1] = value;
                }
            }
            position += length;
        }
        return found;
    }

    /** The first {@code value} in {@code data} at or after {@code from}; -1 if none. */
    static int indexOf(byte[] data, byte value, int from) {
        for (int i = from; i < data.length; i++) {
            if (data[i] == value) {
                return i;
            }
        }
        return -1;
    }

    private static String ustarName(byte[] header) {
        String name = cString(header, 0, NAME_LENGTH);
        boolean ustar = header[MAGIC_OFFSET] == 'u' && header[MAGIC_OFFSET + 1] == 's' && header[MAGIC_OFFSET + 2] == 't';
        String prefix = ustar ? cString(header, PREFIX_OFFSET, PREFIX_LENGTH) : "";
        return prefix.isEmpty() ? name : prefix + "/" + name;
    }

    private static long size(byte[] header) throws IOException {
        if ((header[SIZE_OFFSET] & 0x80) != 0) {
            // Base-256 (GNU and Go write it for sizes beyond 8 GiB).
            long value = header[SIZE_OFFSET] & 0x7F;
            for (int i = SIZE_OFFSET + 1; i < SIZE_OFFSET + SIZE_LENGTH; i++) {
                if (value > (Long.MAX_VALUE >> 8)) {
                    throw new IOException("a tar size beyond what a long holds");
                }
                value = (value << 8) | (header[i] & 0xFF);
            }
            return value;
        }
        return octalValue(header, SIZE_OFFSET, SIZE_LENGTH);
    }

    private static void verifyChecksum(byte[] header) throws IOException {
        long expected = octalValue(header, CHECKSUM_OFFSET, CHECKSUM_LENGTH);
        long sum = 0;
        for (int i = 0; i < BLOCK; i++) {
            boolean inChecksum = i >= CHECKSUM_OFFSET && i < CHECKSUM_OFFSET + CHECKSUM_LENGTH;
            sum += inChecksum ? ' ' : header[i] & 0xFF;
        }
        if (sum != expected) {
            throw new IOException("a tar header fails its checksum");
        }
    }

    private static long octalValue(byte[] header, int offset, int length) throws IOException {
        long value = 0;
        boolean digits = false;
        for (int i = offset; i < offset + length; i++) {
            byte b = header[i];
            if (b == 0 || (b == ' ' && digits)) {
                break;
            }
            if (b == ' ') {
                continue;
            }
            if (b < '0' || b > '7') {
                throw new IOException("a malformed octal field in a tar header");
            }
            value = value * 8 + (b - '0');
            digits = true;
        }
        return value;
    }

    private static String cString(byte[] data, int offset, int length) {
        int end = offset;
        while (end < offset + length && data[end] != 0) {
            end++;
        }
        return new String(data, offset, end - offset, StandardCharsets.UTF_8);
    }

    private static boolean isZero(byte[] block) {
        for (byte b : block) {
            if (b != 0) {
                return false;
            }
        }
        return true;
    }
}
