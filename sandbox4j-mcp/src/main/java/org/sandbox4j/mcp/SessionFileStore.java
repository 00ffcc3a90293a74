package org.sandbox4j.mcp;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

import org.sandbox4j.core.EntryKind;
import org.sandbox4j.core.spi.ErrorDetail;
import org.sandbox4j.core.FileStore;
import org.sandbox4j.core.spi.GuestText;
import org.sandbox4j.core.spi.KeyDigest;
import org.sandbox4j.core.NameNormalization;
import org.sandbox4j.core.SandboxArtifactNameInvalid;
import org.sandbox4j.core.SandboxEntry;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxFileNotFound;
import org.sandbox4j.core.SandboxInterrupted;
import org.sandbox4j.core.SandboxLandingFailed;
import org.sandbox4j.core.SandboxThreadContextMissing;
import org.sandbox4j.core.spi.WorkspaceFiles;
import org.sandbox4j.core.outputs.Artifact;
import org.sandbox4j.core.outputs.ArtifactNames;
import org.sandbox4j.core.outputs.LandedArtifact;
import org.sandbox4j.core.outputs.OutputSink;
import org.sandbox4j.core.tool.ToolRefusal;

/**
 * The file area of the MCP session whose tool call is in progress, as a kind sees it: a
 * {@link FileStore} (what {@code execute_code} may share by name) and an {@link OutputSink}
 * (where the outputs it saves land). The session comes from the server's per-call context, never
 * from a tool's arguments, so a model cannot reach another session's files. Made by the server
 * when {@link SandboxMcpServer.Builder#sessionFiles session files} are enabled and handed to the
 * tool factory; the same areas back the {@code write_file}, {@code read_file},
 * {@code list_files} and {@code delete_file} tools.
 *
 * <p>Names are single file names (no {@code /}): core's artifact-name rules
 * ({@link ArtifactNames#validate}) on the raw and the composed (NFC) spelling, then stored in the
 * composed spelling, as every sink delivers them. Every file-system step is core's
 * {@link WorkspaceFiles}: openat-relative, never through a link, writes to a temporary file renamed
 * into place. The caps ({@link SessionFiles}) are checked before anything is written, under a
 * per-session lock, against what the area holds; a write that would break one is refused whole.
 *
 * <p>A session's area is a directory under the root named by the SHA-256 of its session id,
 * made at its first write and deleted when the session ends. Residual: a call still running when
 * its session is closed can make the area again; the server's close deletes it then.
 */
public final class SessionFileStore implements FileStore, OutputSink {

    private static final Logger LOG = System.getLogger(SessionFileStore.class.getName());

    /** Where {@link WorkspaceFiles} sees the root: a name for messages and confinement, nothing on the host. */
    private static final String MOUNT_POINT = "/session-files";
    private static final String FILE_SYSTEM_NAME = "sandbox4j-mcp session files";
    private static final String OWNER_ONLY = "rwx------";
    private static final char[] HEX = "0123456789ABCDEF".toCharArray();

    /** One file of a session's area, as listed. */
    record Entry(String name, long sizeBytes) {
    }

    /** A write done: the name it was stored under, its size, and what the area holds now. */
    record Written(String name, long sizeBytes, int files, long totalBytes) {
    }

    private final SessionFiles limits;
    private final Supplier<String> currentSession;
    private final WorkspaceFiles files;
    private final ConcurrentHashMap<String, ReentrantLock> sessions = new ConcurrentHashMap<>();

    SessionFileStore(SessionFiles limits, Supplier<String> currentSession) {
        this.limits = Objects.requireNonNull(limits, "limits");
        this.currentSession = Objects.requireNonNull(currentSession, "currentSession");
        makeRoot(limits.root());
        this.files = new WorkspaceFiles(limits.root(), MOUNT_POINT, FILE_SYSTEM_NAME);
    }

    /** The host's limits these areas keep. */
    public SessionFiles limits() {
        return limits;
    }

    // ---------------------------------------------------------------- the kind's view: the current session

    /**
     * The names of the current session's files, sorted.
     *
     * @throws SandboxThreadContextMissing outside an MCP tool call
     */
    @Override
    public List<String> listNames() {
        return list(requireSession()).stream().map(Entry::name).toList();
    }

    /**
     * The content of the current session's file {@code name}; empty when there is none, when the
     * name breaks a rule, or when what is there is not a regular file (a link is never followed).
     *
     * @throws SandboxThreadContextMissing outside an MCP tool call
     */
    @Override
    public Optional<byte[]> read(String name) {
        String session = requireSession();
        String stored;
        try {
            stored = storedName(name, "read");
        } catch (ToolRefusal invalid) {
            return Optional.empty();
        }
        Optional<SandboxEntry> entry = stat(session, stored, "read");
        if (entry.isEmpty() || entry.get().kind() != EntryKind.FILE) {
            return Optional.empty();
        }
        return Optional.of(read(session, name));
    }

    /**
     * Lands an output in the current session's area, within the caps; an existing file of that
     * name is replaced whole.
     *
     * @throws SandboxLandingFailed a name with a {@code /}, a cap, a link or a directory at the name,
     *                              or the host refused the write; the message names the artifact only
     */
    @Override
    public LandedArtifact deliver(Artifact artifact) {
        String session = currentSession.get();
        if (session == null) {
            throw new SandboxLandingFailed("the artifact " + GuestText.quote(artifact.name()) + " was not landed: "
                    + "there is no MCP session in progress to hold it");
        }
        byte[] content = artifact.content();
        try {
            write(session, artifact.name(), content);
        } catch (ToolRefusal refused) {
            throw new SandboxLandingFailed("the artifact " + GuestText.quote(artifact.name()) + " was not landed in "
                    + "the session's files: " + refused.sentence(), refused.getCause());
        }
        return LandedArtifact.of(artifact.name(), artifact.name() + " (" + content.length + " bytes; read_file "
                + "reads it)");
    }

    @Override
    public NameNormalization normalization() {
        return NameNormalization.NFC;
    }

    @Override
    public String toString() {
        // The root is a host path: keep it out of anything that might be rendered.
        return "SessionFileStore";
    }

    // ---------------------------------------------------------------- the file tools' operations, by session

    /**
     * Writes {@code content} as {@code name} in {@code session}'s area, making the area if needed.
     *
     * @return the stored name, and what the area holds afterwards
     * @throws ToolRefusal a bad name, a cap, a link or a non-file at the name, or a host failure;
     *                     nothing was written
     */
    Written write(String session, String name, byte[] content) {
        String stored = storedName(name, "written");
        if (content.length > limits.maxFileBytes()) {
            throw new ToolRefusal("Error: " + GuestText.quote(stored) + " would be " + content.length + " bytes, over "
                    + "the limit of " + limits.maxFileBytes() + " bytes per file. Nothing was written; write a smaller "
                    + "file.");
        }
        ReentrantLock lock = lock(session);
        try {
            List<SandboxEntry> present = entries(session, "written");
            int fileCount = 0;
            long totalBytes = 0;
            Optional<SandboxEntry> existing = Optional.empty();
            for (SandboxEntry entry : present) {
                if (storedNameOf(entry).equals(Optional.of(stored))) {
                    existing = Optional.of(entry);
                } else if (entry.kind() == EntryKind.FILE) {
                    fileCount++;
                    totalBytes += entry.sizeBytes().orElse(0);
                }
            }
            existing.ifPresent(entry -> refuseUnlessFile(stored, entry, "written"));
            if (fileCount + 1 > limits.maxFiles()) {
                throw new ToolRefusal("Error: the session already holds " + fileCount + " files, the most it may "
                        + "hold. Nothing was written; delete a file with delete_file first.");
            }
            if (totalBytes + content.length > limits.maxTotalBytes()) {
                throw new ToolRefusal("Error: " + GuestText.quote(stored) + " (" + content.length + " bytes) would "
                        + "bring the session's files to " + (totalBytes + content.length) + " bytes, over the limit "
                        + "of " + limits.maxTotalBytes() + ". Nothing was written; delete files with delete_file "
                        + "first.");
            }
            makeRoot(limits.root());
            try {
                files.writeFile(pathOf(session, stored), content, MOUNT_POINT);
            } catch (SandboxInterrupted cancelled) {
                throw cancelled;
            } catch (SandboxException failure) {
                // Raced with a link or directory planted since the listing: say what is there now.
                stat(session, stored, "written").ifPresent(entry -> refuseUnlessFile(stored, entry, "written"));
                throw hostFailure("writing " + GuestText.quote(stored), "written", failure);
            }
            return new Written(stored, content.length, fileCount + 1, totalBytes + content.length);
        } finally {
            lock.unlock();
        }
    }

    /**
     * The content of {@code name} in {@code session}'s area, bounded by the per-file cap.
     *
     * @throws ToolRefusal a bad name, no such file, a link or another non-file, too large, a host failure
     */
    byte[] read(String session, String name) {
        String stored = storedName(name, "read");
        SandboxEntry entry = stat(session, stored, "read").orElseThrow(() -> notFound(stored, "read"));
        refuseUnlessFile(stored, entry, "read");
        if (entry.sizeBytes().orElse(Long.MAX_VALUE) > limits.maxFileBytes()) {
            throw new ToolRefusal("Error: " + GuestText.quote(stored) + " is larger than the " + limits.maxFileBytes()
                    + " bytes a file may hold here. Nothing was read.");
        }
        try {
            return files.readFile(pathOf(session, stored), MOUNT_POINT, limits.maxFileBytes());
        } catch (SandboxInterrupted cancelled) {
            throw cancelled;
        } catch (SandboxFileNotFound gone) {
            throw notFound(stored, "read");
        } catch (SandboxException failure) {
            stat(session, stored, "read").ifPresent(now -> refuseUnlessFile(stored, now, "read"));
            throw hostFailure("reading " + GuestText.quote(stored), "read", failure);
        }
    }

    /**
     * The regular files of {@code session}'s area, sorted by name; links and anything else are
     * left out. Empty before the first write.
     *
     * @throws ToolRefusal a host failure
     */
    List<Entry> list(String session) {
        List<Entry> listed = new ArrayList<>();
        for (SandboxEntry entry : entries(session, "listed")) {
            Optional<String> stored = storedNameOf(entry);
            if (entry.kind() == EntryKind.FILE && stored.isPresent()) {
                listed.add(new Entry(stored.get(), entry.sizeBytes().orElse(0)));
            }
        }
        return List.copyOf(listed);
    }

    /**
     * Deletes {@code name} from {@code session}'s area. A link is removed as a link (its target is
     * never touched); a directory is refused.
     *
     * @throws ToolRefusal a bad name, no such file, a directory, a host failure
     */
    void delete(String session, String name) {
        String stored = storedName(name, "deleted");
        ReentrantLock lock = lock(session);
        try {
            SandboxEntry entry = stat(session, stored, "deleted").orElseThrow(() -> notFound(stored, "deleted"));
            if (entry.kind() == EntryKind.DIRECTORY) {
                throw new ToolRefusal("Error: " + GuestText.quote(stored) + " is a directory, not a file. Nothing "
                        + "was deleted.");
            }
            try {
                files.remove(pathOf(session, stored), MOUNT_POINT, false);
            } catch (SandboxInterrupted cancelled) {
                throw cancelled;
            } catch (SandboxException failure) {
                throw hostFailure("deleting " + GuestText.quote(stored), "deleted", failure);
            }
        } finally {
            lock.unlock();
        }
    }

    /** Deletes {@code session}'s area and everything in it, without following a link. Never throws. */
    void deleteArea(String session) {
        ReentrantLock lock = lock(session);
        try {
            files.remove(areaOf(session), MOUNT_POINT, true);
            LOG.log(Level.DEBUG, () -> "deleted the file area of MCP session " + session);
        } catch (SandboxFileNotFound never) {
            // Never written to, or already gone: the outcome asked for.
        } catch (RuntimeException failure) {
            LOG.log(Level.WARNING, () -> "deleting the file area of MCP session " + session + " failed: "
                    + ErrorDetail.of(failure));
        } finally {
            sessions.remove(session, lock);
            lock.unlock();
        }
    }

    /** Deletes the area of every session this store has seen. Never throws. */
    void deleteAll() {
        for (String session : List.copyOf(sessions.keySet())) {
            deleteArea(session);
        }
    }

    /** The directory name of {@code session}'s area: a digest, so the raw id never reaches the file system. */
    static String areaOf(String session) {
        return KeyDigest.sha256Hex(session);
    }

    /** The host directory of {@code session}'s area (it may not exist), for the host and tests. */
    Path areaDirectory(String session) {
        return limits.root().resolve(areaOf(session));
    }

    // ---------------------------------------------------------------- steps

    private String requireSession() {
        String session = currentSession.get();
        if (session == null) {
            throw new SandboxThreadContextMissing("the session files were used outside an MCP tool call; they belong "
                    + "to the session of the call in progress");
        }
        return session;
    }

    /**
     * Takes {@code session}'s lock. A lock its area's deletion let go of is not taken: a call that
     * waited on it gets the session's new lock, so an area made again is recorded, and deleted at close.
     */
    private ReentrantLock lock(String session) {
        while (true) {
            ReentrantLock lock = sessions.computeIfAbsent(session, id -> new ReentrantLock());
            lock.lock();
            if (sessions.get(session) == lock) {
                return lock;
            }
            lock.unlock();
        }
    }

    /**
     * The spelling {@code name} is stored under: core's artifact-name rules on the raw and the
     * composed form, one segment only.
     */
    static String storedName(String name, String done) {
        String stored;
        try {
            ArtifactNames.validate(name);
            stored = ArtifactNames.deliveredName(name, NameNormalization.NFC);
            ArtifactNames.validate(stored);
        } catch (SandboxArtifactNameInvalid invalid) {
            // The rule's message quotes the name when it is safe to (never one holding control characters).
            throw new ToolRefusal("Error: that file name is not usable (" + invalid.getMessage() + "). Nothing was "
                    + done + ".");
        }
        if (stored.indexOf('/') >= 0) {
            throw new ToolRefusal("Error: " + GuestText.quote(name) + " holds a '/'; the session's files are one flat "
                    + "folder, so use a plain file name. Nothing was " + done + ".");
        }
        return stored;
    }

    private static String pathOf(String session, String stored) {
        return areaOf(session) + "/" + hostNameOf(stored);
    }

    /**
     * The host file name a stored name is kept under: ASCII letters, digits, {@code .}, {@code _}
     * and {@code -} as they are, every other UTF-8 byte as {@code %XX}. The host's name is then the
     * same whatever the JVM's file-name encoding ({@code sun.jnu.encoding}, from the locale the
     * host launched it with: ASCII under {@code LANG} unset or {@code C}), and the stored name,
     * not the host's, stays the truth.
     */
    static String hostNameOf(String stored) {
        StringBuilder host = new StringBuilder(stored.length());
        for (byte b : stored.getBytes(StandardCharsets.UTF_8)) {
            int c = b & 0xff;
            if (c < 0x80 && (Character.isLetterOrDigit(c) || c == '.' || c == '_' || c == '-')) {
                host.append((char) c);
            } else {
                host.append('%').append(HEX[c >> 4]).append(HEX[c & 0xf]);
            }
        }
        return host.toString();
    }

    /**
     * The stored name a host file name keeps; empty for a name {@link #hostNameOf} would not have
     * made (put there by something else), which these tools then do not show.
     */
    static Optional<String> storedNameOf(String hostName) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(hostName.length());
        for (int i = 0; i < hostName.length(); i++) {
            char c = hostName.charAt(i);
            if (c == '%' && i + 2 < hostName.length()) {
                int high = Character.digit(hostName.charAt(i + 1), 16);
                int low = Character.digit(hostName.charAt(i + 2), 16);
                if (high < 0 || low < 0) {
                    return Optional.empty();
                }
                bytes.write(high << 4 | low);
                i += 2;
            } else if (c < 0x80) {
                bytes.write(c);
            } else {
                return Optional.empty();
            }
        }
        try {
            String stored = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes.toByteArray()))
                    .toString();
            return hostNameOf(stored).equals(hostName) ? Optional.of(stored) : Optional.empty();
        } catch (CharacterCodingException malformed) {
            return Optional.empty();
        }
    }

    /** What the area holds now, sorted by name; empty when it was never made. */
    private List<SandboxEntry> entries(String session, String done) {
        try {
            return files.listDir(areaOf(session), MOUNT_POINT);
        } catch (SandboxFileNotFound notYet) {
            return List.of();
        } catch (SandboxInterrupted cancelled) {
            throw cancelled;
        } catch (SandboxException failure) {
            throw hostFailure("listing the area", done, failure);
        }
    }

    private Optional<SandboxEntry> stat(String session, String stored, String done) {
        try {
            return files.stat(pathOf(session, stored), MOUNT_POINT);
        } catch (SandboxFileNotFound notYet) {
            return Optional.empty();
        } catch (SandboxInterrupted cancelled) {
            throw cancelled;
        } catch (SandboxException failure) {
            throw hostFailure("looking at " + GuestText.quote(stored), done, failure);
        }
    }

    /**
     * An entry's stored name (what {@link WorkspaceFiles} lists is its host name relative to the
     * root, area included); empty for a host name these tools did not make.
     */
    private static Optional<String> storedNameOf(SandboxEntry entry) {
        return storedNameOf(entry.path().substring(entry.path().lastIndexOf('/') + 1));
    }

    private static void refuseUnlessFile(String stored, SandboxEntry entry, String done) {
        switch (entry.kind()) {
            case FILE -> {
            }
            case SYMLINK -> throw new ToolRefusal("Error: " + GuestText.quote(stored) + " is a link, and these "
                    + "tools never follow a link. Nothing was " + done + "; delete it with delete_file, or use "
                    + "another name.");
            default -> throw new ToolRefusal("Error: " + GuestText.quote(stored) + " is not a regular file. "
                    + "Nothing was " + done + "; use another name.");
        }
    }

    private static ToolRefusal notFound(String stored, String done) {
        return new ToolRefusal("Error: there is no file named " + GuestText.quote(stored) + " in this session. "
                + "Nothing was " + done + "; list_files shows what there is.");
    }

    private static ToolRefusal hostFailure(String what, String done, RuntimeException failure) {
        LOG.log(Level.WARNING, () -> "session files: " + what + " failed: " + ErrorDetail.of(failure));
        return new ToolRefusal("Error: the host could not do that; nothing was " + done + ". The detail is in the "
                + "host's log.", failure);
    }

    /** Makes the root, owner-only, if it is missing; an existing root is the host's and left as it is. */
    private static void makeRoot(Path root) {
        if (Files.isDirectory(root)) {
            return;
        }
        try {
            Files.createDirectories(root.getParent());
            Files.createDirectory(root, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString(OWNER_ONLY)));
        } catch (FileAlreadyExistsException raced) {
            if (!Files.isDirectory(root)) {
                throw new UncheckedIOException("the session files' root exists and is not a directory", raced);
            }
        } catch (UnsupportedOperationException notPosix) {
            throw new UnsupportedOperationException("session files need a POSIX file system (Linux, macOS)", notPosix);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot make the session files' root", e);
        }
    }
}
