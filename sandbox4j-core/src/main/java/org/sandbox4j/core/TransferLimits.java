package org.sandbox4j.core;

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
     * Refuses, before anything moves, a file of {@code bytes} bytes written into a sandbox under
     * this as its spec's {@code files_in}: one write is one file, and this is its per-file cap.
     *
     * @throws SandboxTransferCapExceeded over {@link #maxBytesPerFile()}
     */
    public void refuseOversizeWrite(long bytes, String path) {
        if (bytes > maxBytesPerFile) {
            throw new SandboxTransferCapExceeded("the write of " + GuestText.quote(path) + " (" + bytes + " bytes) is "
                    + "larger than the spec's files_in cap of " + maxBytesPerFile + " bytes per file; nothing was "
                    + "written: send less, or raise the spec's files_in");
        }
    }

    /**
     * The cap a read out of a sandbox under this as its spec's {@code files_out} really gets: the
     * caller's {@code maxBytes}, never more than the per-file cap.
     */
    public long readCap(long maxBytes) {
        return Math.min(maxBytes, maxBytesPerFile);
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
