package org.sandbox4j.core.spi;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.function.Function;
import org.sandbox4j.core.EntryKind;
import org.sandbox4j.core.HostCeilings;
import org.sandbox4j.core.SandboxEntry;
import org.sandbox4j.core.SandboxOperationNotSupported;
import org.sandbox4j.core.TransferLimits;

/**
 * The five file methods of a {@link org.sandbox4j.core.Sandbox}, written once: each final method
 * confines the caller's path, walks every ancestor from {@code /} with the backend's no-follow
 * {@link #lstat}, refuses what every backend refuses (a link on the way, a link or directory as a
 * write's leaf, the working directory as a write's or a removal's target — before any walk — a
 * read of anything but a regular file or past its cap, a listing of a non-directory or past the
 * host's ceilings, a directory removed without {@code recursive}), and only then calls one of a
 * few primitives with the confined absolute path. A backend extends this and implements the
 * primitives; its sandbox's file methods delegate here.
 *
 * <p>A backend whose guest can race the walk (it runs while the guest does) makes its primitives
 * no-follow as well: the walk is the refusal that names the problem, not the only defence.
 *
 * @param <C> what one call holds from start to end: an open handle, a memo of stats, or nothing
 */
public abstract class ConfinedFiles<C> {

    /** How a listing names the working directory itself. */
    public static final String WORKING_DIRECTORY_ITSELF = ".";

    /**
     * An entry as the backend's no-follow stat sees it.
     *
     * @param kind     what is there (a link is {@link EntryKind#SYMLINK}, never its target)
     * @param size     a regular file's size; empty when unknown (fails closed: never taken as 0)
     * @param mode     its permission bits ({@code st_mode & 07777}); empty when the backend cannot tell
     * @param modified its modification time; empty when the backend cannot tell
     */
    public record Stat(EntryKind kind, OptionalLong size, OptionalInt mode, Optional<Instant> modified) {
        public Stat {
            Objects.requireNonNull(kind, "kind");
            Objects.requireNonNull(size, "size");
            Objects.requireNonNull(mode, "mode");
            Objects.requireNonNull(modified, "modified");
            size = kind == EntryKind.FILE ? size : OptionalLong.empty();
        }

        /** What is there and, for a file, its size; mode and time unknown. */
        public Stat(EntryKind kind, OptionalLong size) {
            this(kind, size, OptionalInt.empty(), Optional.empty());
        }

        public static Stat of(EntryKind kind) {
            return new Stat(kind, OptionalLong.empty());
        }

        public static Stat file(long size) {
            return new Stat(EntryKind.FILE, OptionalLong.of(size));
        }

        /** This stat with the entry's permission bits and modification time. */
        public Stat with(int modeBits, Instant modifiedAt) {
            return new Stat(kind, size, OptionalInt.of(modeBits & SandboxEntry.MAX_MODE), Optional.of(modifiedAt));
        }
    }

    /** No cap but the host's own ({@link HostCeilings}): for a backend whose specs set none. */
    private static final TransferLimits HOST_CEILINGS_ONLY = new TransferLimits(Long.MAX_VALUE, Long.MAX_VALUE,
            Integer.MAX_VALUE);

    private final TransferLimits filesIn;
    private final TransferLimits filesOut;

    /**
     * @param filesIn  the spec's {@code files_in} (a write's size)
     * @param filesOut the spec's {@code files_out} (a read's cap)
     */
    protected ConfinedFiles(TransferLimits filesIn, TransferLimits filesOut) {
        this.filesIn = Objects.requireNonNull(filesIn, "filesIn");
        this.filesOut = Objects.requireNonNull(filesOut, "filesOut");
    }

    /** Bounded by the host's ceilings only. */
    protected ConfinedFiles() {
        this(HOST_CEILINGS_ONLY, HOST_CEILINGS_ONLY);
    }

    // ---------------------------------------------------------------- the primitives

    /**
     * Runs one file method's work with what it holds for the whole call (open a handle, start a
     * memo, take a lock, put a deadline on it). {@code operation} names the call for messages.
     */
    protected abstract <T> T call(String path, String operation, Function<C, T> body);

    /** The backend's unconfined no-follow stat of a normalised absolute guest path; empty when nothing is there. */
    protected abstract Optional<Stat> lstat(C call, String absolute);

    /**
     * Writes {@code content} at {@code absolute}, creating the missing parents as directories. The
     * leaf was not a link or a directory and no ancestor a link when the walk looked.
     */
    protected abstract void write(C call, String absolute, byte[] content, String path);

    /**
     * Makes the directory at {@code absolute} and its missing parents; a parent that exists is
     * entered, never replaced. Nothing was there and no ancestor was a link when the walk looked; a
     * primitive that finds something there now refuses as {@link #mkdir} would have.
     */
    protected abstract void makeDirectories(C call, String absolute, String path);

    /**
     * Reads the regular file at {@code absolute}, holding at most {@code cap} bytes: past it, refuse
     * with {@link FileRefusals#readOverCap} (it may have grown since the stat).
     */
    protected abstract byte[] read(C call, String absolute, Stat stat, long cap, String path);

    /**
     * The names directly inside the directory at {@code absolute}, with what each is. At most
     * {@link HostCeilings#MAX_LISTED_ENTRIES} may be held: refuse with
     * {@link FileRefusals#listingTooLarge} past it, while reading. Override it when the backend
     * declares {@code files_list}; by default a listing is refused as not supported.
     */
    protected Map<String, Stat> list(C call, String absolute, String path) {
        throw new SandboxOperationNotSupported("this sandbox does not implement listDir (its backend does not declare "
                + "'files_list'); use a backend that declares it");
    }

    /**
     * Removes what is at {@code absolute} (a link as a link, never what it names); a directory
     * only when {@code recursive}, with everything under it and no link inside followed. A
     * directory without {@code recursive} was refused already, as {@code stat} saw it; a primitive
     * that finds a directory there now refuses with {@link FileRefusals#removalNeedsRecursive}.
     */
    protected abstract void unlink(C call, String absolute, Stat stat, boolean recursive, String path);

    /**
     * Refuses, before any walk, a confined path this backend cannot reach at all (one outside the
     * part of the guest it sees). Every path is reachable unless a backend says otherwise.
     */
    protected void refuseUnreachable(String confined, String path) {
        // Reachable.
    }

    // ---------------------------------------------------------------- the file methods

    /** See {@link org.sandbox4j.core.Sandbox#writeFile(String, byte[], String)}. */
    public final void writeFile(String path, byte[] content, String workingDirectory) {
        filesIn.refuseOversizeWrite(content, path);
        refuseUnreachable(GuestPaths.confine(path, workingDirectory), path);
        call(path, "write", call -> {
            String confined = GuestPaths.confineWritePath(stat(call), path, workingDirectory);
            write(call, confined, content, path);
            return null;
        });
    }

    /** See {@link org.sandbox4j.core.Sandbox#mkdir(String, String)}. */
    public final void mkdir(String path, String workingDirectory) {
        refuseUnreachable(GuestPaths.confine(path, workingDirectory), path);
        call(path, "make", call -> {
            String confined = GuestPaths.refuseSymlinkedParents(stat(call), path, workingDirectory, true);
            Optional<Stat> found = lstat(call, confined);
            if (found.isEmpty()) {
                makeDirectories(call, confined, path);
            } else if (found.get().kind() != EntryKind.DIRECTORY) {
                throw FileRefusals.mkdirOntoANonDirectory(path);
            }
            return null;
        });
    }

    /** See {@link org.sandbox4j.core.Sandbox#stat(String, String)}. */
    public final Optional<SandboxEntry> stat(String path, String workingDirectory) {
        refuseUnreachable(GuestPaths.confine(path, workingDirectory), path);
        return call(path, "describe", call -> {
            String confined = GuestPaths.refuseSymlinkedParents(stat(call), path, workingDirectory, false);
            return lstat(call, confined).map(found -> entry(relativeName(confined, workingDirectory), found));
        });
    }

    /** See {@link org.sandbox4j.core.Sandbox#readFile(String, String, long)}. */
    public final byte[] readFile(String path, String workingDirectory, long maxBytes) {
        long cap = filesOut.readCap(maxBytes);
        refuseUnreachable(GuestPaths.confine(path, workingDirectory), path);
        return call(path, "read", call -> {
            String confined = GuestPaths.refuseSymlinkedParents(stat(call), path, workingDirectory, false);
            Stat found = lstat(call, confined).orElseThrow(() -> FileRefusals.notFound(path, workingDirectory));
            FileRefusals.refuseUnlessRegular(found.kind(), path);
            if (found.size().isPresent() && found.size().getAsLong() > cap) {
                throw FileRefusals.readOverCap(path, found.size().getAsLong(), cap);
            }
            byte[] content = read(call, confined, found, cap, path);
            if (content.length > cap) {
                throw FileRefusals.readOverCap(path, content.length, cap);
            }
            return content;
        });
    }

    /** See {@link org.sandbox4j.core.Sandbox#listDir(String, String)}; sorted by name. */
    public final List<SandboxEntry> listDir(String path, String workingDirectory) {
        refuseUnreachable(GuestPaths.confine(path, workingDirectory), path);
        return call(path, "list", call -> {
            String confined = GuestPaths.refuseSymlinkedParents(stat(call), path, workingDirectory, true);
            Stat self = lstat(call, confined).orElseThrow(() -> FileRefusals.notFound(path, workingDirectory));
            if (self.kind() != EntryKind.DIRECTORY) {
                throw FileRefusals.listOfANonDirectory(path);
            }
            Map<String, Stat> children = list(call, confined, path);
            if (children.size() > HostCeilings.MAX_LISTED_ENTRIES) {
                throw FileRefusals.listingTooLarge(path);
            }
            String prefix = relativeName(confined, workingDirectory);
            List<SandboxEntry> entries = new ArrayList<>(children.size());
            for (Map.Entry<String, Stat> child : new TreeMap<>(children).entrySet()) {
                String name = child.getKey();
                entries.add(entry(prefix.equals(WORKING_DIRECTORY_ITSELF) ? name : prefix + "/" + name,
                        child.getValue()));
            }
            return List.copyOf(entries);
        });
    }

    /** See {@link org.sandbox4j.core.Sandbox#remove(String, String, boolean)}; a missing path is success. */
    public final void remove(String path, String workingDirectory, boolean recursive) {
        String confined = GuestPaths.confineRemovalPath(path, workingDirectory);
        refuseUnreachable(confined, path);
        call(path, "remove", call -> {
            GuestPaths.refuseSymlinkedParents(stat(call), confined, workingDirectory, false);
            Optional<Stat> found = lstat(call, confined);
            if (found.isEmpty()) {
                return null;
            }
            if (found.get().kind() == EntryKind.DIRECTORY && !recursive) {
                throw FileRefusals.removalNeedsRecursive(path);
            }
            unlink(call, confined, found.get(), recursive, path);
            return null;
        });
    }

    // ---------------------------------------------------------------- shared

    /** How a listing or stat names {@code confined}: relative to the working directory, {@value #WORKING_DIRECTORY_ITSELF} for itself. */
    public static String relativeName(String confined, String workingDirectory) {
        return GuestPaths.relativeTo(confined, workingDirectory).filter(relative -> !relative.isEmpty())
                .orElse(WORKING_DIRECTORY_ITSELF);
    }

    private NoFollowStat stat(C call) {
        return absolute -> lstat(call, absolute).map(Stat::kind);
    }

    private static SandboxEntry entry(String relative, Stat stat) {
        return new SandboxEntry(relative, stat.kind(), stat.size(), stat.mode(), stat.modified());
    }
}
