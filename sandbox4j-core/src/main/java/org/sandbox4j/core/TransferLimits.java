package org.sandbox4j.core;

import org.sandbox4j.core.spi.GuestText;

/**
 * Caps for one direction of file transfer. All three legs matter: the file count bounds many tiny
 * files that would each pass the byte caps.
 *
 * @param maxBytesPerFile the largest single file
 * @param maxTotalBytes   all files together
 * @param maxFiles        how many files
 */
public record TransferLimits(long maxBytesPerFile, long maxTotalBytes, int maxFiles) {

    /** 8 MiB. */
    public static final long DEFAULT_MAX_BYTES_PER_FILE = 8L * 1024 * 1024;
    /** 32 MiB. */
    public static final long DEFAULT_MAX_TOTAL_BYTES = 32L * 1024 * 1024;
    /** 64 files. */
    public static final int DEFAULT_MAX_FILES = 64;

    /** 8 MiB per file, 32 MiB in total, 64 files. */
    public static final TransferLimits DEFAULT =
            new TransferLimits(DEFAULT_MAX_BYTES_PER_FILE, DEFAULT_MAX_TOTAL_BYTES, DEFAULT_MAX_FILES);

    public TransferLimits {
        if (maxBytesPerFile < 0 || maxTotalBytes < 0 || maxFiles < 0) {
            throw new IllegalArgumentException("transfer limits cannot be negative: " + maxBytesPerFile
                    + " bytes per file, " + maxTotalBytes + " bytes in total, " + maxFiles + " files");
        }
    }

    /**
     * The content of one write: null is bad input ({@link IllegalArgumentException}), an empty
     * array an empty file.
     */
    public static byte[] requireContent(byte[] content) {
        if (content == null) {
            throw new IllegalArgumentException("writeFile needs content (empty for an empty file), not null");
        }
        return content;
    }

    /** A read's {@code maxBytes}: a negative one is bad input ({@link IllegalArgumentException}). */
    public static long requireMaxBytes(long maxBytes) {
        if (maxBytes < 0) {
            throw new IllegalArgumentException("maxBytes cannot be negative, not " + maxBytes);
        }
        return maxBytes;
    }

    /**
     * Refuses, before anything moves, {@code content} written into a sandbox under this as its
     * spec's {@code files_in}: one write is one file, and this is its per-file cap.
     *
     * @throws IllegalArgumentException   for null content
     * @throws SandboxTransferCapExceeded over {@link #maxBytesPerFile()}
     */
    public void refuseOversizeWrite(byte[] content, String path) {
        if (requireContent(content).length > maxBytesPerFile) {
            throw new SandboxTransferCapExceeded("the write of " + GuestText.quote(path) + " (" + content.length
                    + " bytes) is larger than the spec's files_in cap of " + maxBytesPerFile + " bytes per file; "
                    + "nothing was written: send less, or raise the spec's files_in");
        }
    }

    /**
     * The cap a read out of a sandbox under this as its spec's {@code files_out} really gets: the
     * caller's {@code maxBytes}, never more than the per-file cap nor than the host can hold
     * ({@link HostCeilings#MAX_BUFFERED_BYTES}).
     *
     * @throws IllegalArgumentException for a negative {@code maxBytes}
     */
    public long readCap(long maxBytes) {
        return Math.min(Math.min(requireMaxBytes(maxBytes), maxBytesPerFile), HostCeilings.MAX_BUFFERED_BYTES);
    }

    /** Whether every leg of this is at most the same leg of {@code ceiling}. */
    public boolean within(TransferLimits ceiling) {
        return maxBytesPerFile <= ceiling.maxBytesPerFile
                && maxTotalBytes <= ceiling.maxTotalBytes
                && maxFiles <= ceiling.maxFiles;
    }

    @Override
    public String toString() {
        return maxBytesPerFile + " bytes per file, " + maxTotalBytes + " bytes in total, " + maxFiles + " files";
    }
}
