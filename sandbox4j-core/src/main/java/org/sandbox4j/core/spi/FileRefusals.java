package org.sandbox4j.core.spi;

import org.sandbox4j.core.EntryKind;
import org.sandbox4j.core.HostCeilings;
import org.sandbox4j.core.SandboxFileException;
import org.sandbox4j.core.SandboxFileNotFound;
import org.sandbox4j.core.SandboxIsADirectory;
import org.sandbox4j.core.SandboxNotADirectory;
import org.sandbox4j.core.SandboxNotARegularFile;
import org.sandbox4j.core.SandboxTransferCapExceeded;

/**
 * The refusals of the file methods, worded once for every backend: a method per rule. Each quotes
 * the caller's path escaped ({@link GuestText}) and names the fix.
 */
public final class FileRefusals {

    private FileRefusals() {
    }

    public static SandboxFileNotFound notFound(String path, String workingDirectory) {
        return new SandboxFileNotFound("nothing exists at " + GuestText.quote(path) + " in "
                + GuestText.quote(workingDirectory) + "; check the path and the working directory");
    }

    /** What the walk found was gone when the primitive reached it (another party removed it meanwhile). */
    public static SandboxFileNotFound goneDuringTheCall(String path) {
        return new SandboxFileNotFound(GuestText.quote(path) + " was removed while this call ran; nothing was done: try "
                + "again once nothing else changes it");
    }

    /** A read of a directory. */
    public static SandboxIsADirectory readOfADirectory(String path) {
        return new SandboxIsADirectory(GuestText.quote(path) + " is a directory; only regular files are read (list it "
                + "with listDir)");
    }

    /** A read of a link: a link is never followed. */
    public static SandboxNotARegularFile readOfALink(String path) {
        return new SandboxNotARegularFile(GuestText.quote(path) + " is a link; only regular files are read, and a link "
                + "is never followed: read the file it names by its own path");
    }

    /** A read of a device, socket or FIFO. */
    public static SandboxNotARegularFile readOfASpecialFile(String path) {
        return new SandboxNotARegularFile(GuestText.quote(path) + " is not a regular file (a device, socket or FIFO); "
                + "only regular files are read");
    }

    /** Refuses a read of anything but a regular file, in the one wording per kind. */
    public static void refuseUnlessRegular(EntryKind kind, String path) {
        switch (kind) {
            case DIRECTORY -> throw readOfADirectory(path);
            case SYMLINK -> throw readOfALink(path);
            case OTHER -> throw readOfASpecialFile(path);
            case FILE -> {
                // Readable.
            }
        }
    }

    /**
     * A read whose file is larger than the read's cap: refused whole, never truncated.
     *
     * @param size the file's size, or -1 when only "more than the cap" is known
     */
    public static SandboxTransferCapExceeded readOverCap(String path, long size, long cap) {
        return new SandboxTransferCapExceeded(GuestText.quote(path) + " holds " + (size < 0 ? "more than" : size
                + " bytes, more than") + " the " + cap + " bytes this read allows; nothing was read (a read is refused "
                + "whole, never truncated): raise the cap or make the file smaller");
    }

    /** A listing of something that is not a directory. */
    public static SandboxNotADirectory listOfANonDirectory(String path) {
        return new SandboxNotADirectory(GuestText.quote(path) + " is not a directory; stat it instead of listing it");
    }

    /** A directory to make where a file or other non-directory is. */
    public static SandboxNotADirectory mkdirOntoANonDirectory(String path) {
        return new SandboxNotADirectory(GuestText.quote(path) + " exists and is not a directory; nothing was made: "
                + "remove it first or choose another path");
    }

    /** A directory too large for one listing. */
    public static SandboxTransferCapExceeded listingTooLarge(String path) {
        return new SandboxTransferCapExceeded(GuestText.quote(path) + " holds more than "
                + HostCeilings.MAX_LISTED_ENTRIES + " entries (or " + HostCeilings.MAX_LISTED_NAME_CHARS
                + " characters of names), more than one listing returns; nothing was listed: list a subdirectory, or "
                + "have the guest summarise it through exec");
    }

    /** A removal of a directory without {@code recursive}. */
    public static SandboxFileException removalNeedsRecursive(String path) {
        return new SandboxFileException(GuestText.quote(path) + " is a directory; nothing was removed: pass recursive = "
                + "true to remove it and everything under it");
    }
}
