package org.sandbox4j.agent;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import org.sandbox4j.core.EntryKind;
import org.sandbox4j.core.HostCeilings;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxFileException;
import org.sandbox4j.core.SandboxFileNotFound;
import org.sandbox4j.core.SandboxIsADirectory;
import org.sandbox4j.core.SandboxNotADirectory;
import org.sandbox4j.core.SandboxPathNotConfined;
import org.sandbox4j.core.TransferLimits;
import org.sandbox4j.core.spi.ConfinedFiles;
import org.sandbox4j.core.spi.FileRefusals;
import org.sandbox4j.core.spi.GuestPaths;
import org.sandbox4j.core.spi.GuestText;

/**
 * The kit's file methods ({@link ConfinedFiles}) over a guest agent's no-follow file primitives.
 * The guest path is the agent's path: no mount point lies between them. The kit confines and
 * walks; the agent then resolves every parent again itself with {@code O_NOFOLLOW}, so a link the
 * guest swaps in after the walk turns the call into a refusal, never into I/O through the link.
 * Writes land whole: a temporary file beside the target, renamed over it on commit. Each call
 * waits at most {@link AgentConnection#REQUEST_DEADLINE} for each answer.
 */
public final class AgentFiles extends ConfinedFiles<Void> {

    /** A file's mode when written, and a made parent directory's. */
    static final int FILE_MODE = 0644;
    static final int DIRECTORY_MODE = 0755;
    /** Besides a read's cap, what it may have waiting: its last chunk and its DONE. */
    private static final long READ_SLACK_BYTES = AgentProtocol.READ_CHUNK_MAX + 4096L;
    /** What a listing may have waiting: the host's ceiling on names, and the agent's per-entry fields. */
    private static final long LIST_QUEUE_BYTES = HostCeilings.MAX_LISTED_NAME_CHARS * 4
            + (long) HostCeilings.MAX_LISTED_ENTRIES * 64 + AgentProtocol.MAX_PAYLOAD;
    /** An entry's fixed fields in ENTRIES: kind, mode, size, mtime. */
    private static final int ENTRY_FIXED_BYTES = 1 + 4 + 8 + 8;

    private final AgentConnection connection;
    private final String backendName;
    private final Duration deadline;

    /** Bounded by the host's ceilings only. */
    public AgentFiles(AgentConnection connection, String backendName) {
        super();
        this.connection = Objects.requireNonNull(connection, "connection");
        this.backendName = Objects.requireNonNull(backendName, "backendName");
        this.deadline = AgentConnection.REQUEST_DEADLINE;
    }

    /**
     * @param filesIn  the spec's {@code files_in} (a write's size)
     * @param filesOut the spec's {@code files_out} (a read's cap)
     */
    public AgentFiles(AgentConnection connection, String backendName, TransferLimits filesIn,
            TransferLimits filesOut) {
        super(filesIn, filesOut);
        this.connection = Objects.requireNonNull(connection, "connection");
        this.backendName = Objects.requireNonNull(backendName, "backendName");
        this.deadline = AgentConnection.REQUEST_DEADLINE;
    }

    // ---------------------------------------------------------------- the kit's primitives

    @Override
    protected <T> T call(String path, String operation, Function<Void, T> body) {
        return body.apply(null);
    }

    @Override
    protected Optional<Stat> lstat(Void call, String absolute) {
        Frame answer = connection.request(AgentProtocol.LSTAT, pathPayload(absolute).build(), deadline,
                "describe " + GuestText.quote(absolute));
        if (answer.type() == AgentProtocol.ERROR) {
            AgentError error = connection.error(answer);
            switch (error.code()) {
                case NOT_FOUND:
                case NOT_DIRECTORY:
                    return Optional.empty();
                case SYMLINK:
                    // A parent swapped for a link since the walk looked at it.
                    throw linkOnTheWay(absolute);
                default:
                    throw failure(error, "describe", absolute);
            }
        }
        connection.expect(answer, AgentProtocol.STAT, "describe a path");
        return Optional.of(connection.decode(() -> {
            PayloadReader reader = answer.reader();
            EntryKind kind = kind(reader.u8(), reader);
            int mode = (int) reader.u32();
            long size = reader.u64();
            return stat(kind, mode, size, reader.i64());
        }));
    }

    @Override
    protected void write(Void call, String absolute, byte[] content, String path) {
        makeParents(absolute, path);
        PendingCall write = connection.register(AgentConnection.ONE_ANSWER_BYTES);
        String what = "write " + GuestText.quote(path);
        try {
            connection.send(AgentProtocol.WRITE_OPEN, write.id(), pathPayload(absolute).u32(FILE_MODE)
                    .u32(AgentProtocol.WRITE_MAY_REPLACE).build());
            answer(write, what, path, absolute);
            int chunk = Math.min(AgentProtocol.WRITE_CHUNK, connection.maxPayload() - 16);
            for (int offset = 0; offset < content.length; offset += chunk) {
                int length = Math.min(chunk, content.length - offset);
                connection.send(AgentProtocol.WRITE_DATA, write.id(), Payload.create().bytes(content, offset, length)
                        .build());
            }
            connection.send(AgentProtocol.WRITE_COMMIT, write.id(), Payload.empty());
            long written = answer(write, what, path, absolute);
            if (written != content.length) {
                throw new SandboxFileException("backend '" + backendName + "': the guest agent wrote " + written
                        + " bytes of the " + content.length + " sent to " + GuestText.quote(path));
            }
        } finally {
            connection.unregister(write);
        }
    }

    @Override
    protected byte[] read(Void call, String absolute, Stat stat, long cap, String path) {
        long held = Math.min(cap, HostCeilings.MAX_BUFFERED_BYTES);
        PendingCall read = connection.register(held + READ_SLACK_BYTES);
        long until = System.nanoTime() + deadline.toNanos();
        try {
            // The agent refuses a file over the cap before sending any of it, and one that grows past it while read.
            connection.send(AgentProtocol.READ, read.id(), pathPayload(absolute).u64(held).build());
            ByteArrayOutputStream content = new ByteArrayOutputStream();
            while (true) {
                Frame frame = connection.next(read, until, "read " + GuestText.quote(path), deadline);
                switch (frame.type()) {
                    case AgentProtocol.DATA:
                        byte[] chunk = connection.decode(() -> frame.reader().bytes(AgentProtocol.READ_CHUNK_MAX,
                                "file data"));
                        if (content.size() + (long) chunk.length > held) {
                            throw FileRefusals.readOverCap(path, -1, cap);
                        }
                        content.writeBytes(chunk);
                        break;
                    case AgentProtocol.DONE:
                        return content.toByteArray();
                    case AgentProtocol.ERROR:
                        AgentError error = connection.error(frame);
                        throw readRefusal(error, path, cap);
                    default:
                        throw unexpected("READ", frame);
                }
            }
        } finally {
            connection.unregister(read);
        }
    }

    @Override
    protected Map<String, Stat> list(Void call, String absolute, String path) {
        PendingCall list = connection.register(LIST_QUEUE_BYTES);
        long until = System.nanoTime() + deadline.toNanos();
        try {
            connection.send(AgentProtocol.LIST, list.id(), pathPayload(absolute)
                    .u32(HostCeilings.MAX_LISTED_ENTRIES).build());
            Map<String, Stat> children = new HashMap<>();
            long nameChars = 0;
            while (true) {
                Frame frame = connection.next(list, until, "list " + GuestText.quote(path), deadline);
                switch (frame.type()) {
                    case AgentProtocol.ENTRIES:
                        nameChars += entries(frame, children, path);
                        if (children.size() > HostCeilings.MAX_LISTED_ENTRIES
                                || nameChars > HostCeilings.MAX_LISTED_NAME_CHARS) {
                            throw FileRefusals.listingTooLarge(path);
                        }
                        break;
                    case AgentProtocol.DONE:
                        boolean truncated = connection.decode(() -> {
                            PayloadReader reader = frame.reader();
                            reader.u64();
                            return reader.u8() != 0;
                        });
                        if (truncated) {
                            throw FileRefusals.listingTooLarge(path);
                        }
                        return children;
                    case AgentProtocol.ERROR:
                        AgentError error = connection.error(frame);
                        if (error.code() == AgentProtocol.ErrorCode.NOT_DIRECTORY) {
                            throw FileRefusals.listOfANonDirectory(path);
                        }
                        throw failure(error, "list", path);
                    default:
                        throw unexpected("LIST", frame);
                }
            }
        } finally {
            connection.unregister(list);
        }
    }

    /** An answer no request of this kind gets: the stream cannot be trusted any more. */
    private RuntimeException unexpected(String request, Frame frame) {
        return connection.broken(new AgentProtocolViolation("a " + request + " answered with a frame of type 0x"
                + Integer.toHexString(frame.type())));
    }

    /** A link is removed as a link; a directory with everything under it, no link inside followed. */
    @Override
    protected void unlink(Void call, String absolute, Stat stat, boolean recursive, String path) {
        int type = recursive ? AgentProtocol.REMOVE_TREE : AgentProtocol.UNLINK;
        Frame answer = connection.request(type, pathPayload(absolute).build(), deadline,
                "remove " + GuestText.quote(path));
        if (answer.type() == AgentProtocol.ERROR) {
            AgentError error = connection.error(answer);
            switch (error.code()) {
                case NOT_FOUND:
                    return;
                case IS_DIRECTORY:
                    throw FileRefusals.removalNeedsRecursive(path);
                default:
                    throw failure(error, "remove", path);
            }
        }
        connection.done(answer, "remove " + GuestText.quote(path));
    }

    // ---------------------------------------------------------------- steps

    /** Makes each missing parent of {@code absolute}, top down; one made meanwhile by another is as good. */
    @Override
    protected void makeDirectories(Void call, String absolute, String path) {
        makeChain(GuestPaths.directoryChain(absolute), path);
    }

    private void makeParents(String absolute, String path) {
        makeChain(GuestPaths.directoryChain(GuestPaths.parent(absolute)), path);
    }

    /** Makes each missing directory of {@code chain} in turn; one the guest made meanwhile is entered. */
    private void makeChain(List<String> chain, String path) {
        for (String directory : chain) {
            Optional<Stat> existing = lstat(null, directory);
            if (existing.isPresent()) {
                if (existing.get().kind() == EntryKind.SYMLINK) {
                    throw linkOnTheWay(directory);
                }
                if (existing.get().kind() != EntryKind.DIRECTORY) {
                    throw new SandboxNotADirectory(GuestText.quote(directory) + " is not a directory");
                }
                continue;
            }
            Frame answer = connection.request(AgentProtocol.MKDIR, pathPayload(directory).u32(DIRECTORY_MODE).build(),
                    deadline, "make the directory " + GuestText.quote(directory));
            if (answer.type() == AgentProtocol.ERROR) {
                AgentError error = connection.error(answer);
                if (error.code() != AgentProtocol.ErrorCode.EXISTS) {
                    throw failure(error, "make a parent directory for", path);
                }
            } else {
                connection.done(answer, "make a directory");
            }
        }
    }

    /** The next answer of a write: its DONE's value, or its ERROR as the kit's refusal. */
    private long answer(PendingCall write, String what, String path, String absolute) {
        Frame frame = connection.next(write, System.nanoTime() + deadline.toNanos(), what, deadline);
        if (frame.type() == AgentProtocol.ERROR) {
            AgentError error = connection.error(frame);
            switch (error.code()) {
                case IS_DIRECTORY:
                    throw new SandboxIsADirectory(GuestText.quote(path) + " is a directory; a write needs a file path");
                case SYMLINK:
                    throw linkOnTheWay(GuestPaths.parent(absolute));
                default:
                    throw failure(error, "write", path);
            }
        }
        return connection.done(frame, what);
    }

    /** What STAT and ENTRIES say of one entry: its kind, the permission bits of its mode, its size, its mtime in ns. */
    private static Stat stat(EntryKind kind, int mode, long size, long modifiedNanos) {
        Stat stat = kind == EntryKind.FILE ? Stat.file(size) : Stat.of(kind);
        return stat.with(mode, Instant.ofEpochSecond(Math.floorDiv(modifiedNanos, 1_000_000_000L),
                Math.floorMod(modifiedNanos, 1_000_000_000L)));
    }

    /** Decodes one ENTRIES frame into {@code children}; returns the characters of the names it held. */
    private long entries(Frame frame, Map<String, Stat> children, String path) {
        return connection.decode(() -> {
            PayloadReader reader = frame.reader();
            int count = reader.u32Bounded(frame.payload().length / (4 + ENTRY_FIXED_BYTES), "an entry count");
            long chars = 0;
            for (int i = 0; i < count; i++) {
                byte[] raw = reader.bytes(AgentProtocol.MAX_NAME_BYTES, "an entry's name");
                String name = new String(raw, StandardCharsets.UTF_8);
                EntryKind kind = kind(reader.u8(), reader);
                int mode = (int) reader.u32();
                long size = reader.u64();
                long modifiedNanos = reader.i64();
                if (name.isEmpty() || name.equals(".") || name.equals("..") || name.indexOf('/') >= 0
                        || name.indexOf('\0') >= 0) {
                    throw new SandboxPathNotConfined("the listing of " + GuestText.quote(path) + " named "
                            + GuestText.quote(name) + ", which is not a name directly inside it; the listing was "
                            + "refused");
                }
                chars += name.length();
                children.put(name, stat(kind, mode, size, modifiedNanos));
            }
            return chars;
        });
    }

    private static EntryKind kind(int wire, PayloadReader reader) {
        switch (wire) {
            case AgentProtocol.KIND_FILE:
                return EntryKind.FILE;
            case AgentProtocol.KIND_DIRECTORY:
                return EntryKind.DIRECTORY;
            case AgentProtocol.KIND_SYMLINK:
                return EntryKind.SYMLINK;
            case AgentProtocol.KIND_OTHER:
                return EntryKind.OTHER;
            default:
                throw reader.violation("an entry of kind " + wire);
        }
    }

    private static Payload pathPayload(String absolute) {
        return Payload.create().text(absolute);
    }

    private SandboxException readRefusal(AgentError error, String path, long cap) {
        switch (error.code()) {
            case TOO_LARGE:
                return FileRefusals.readOverCap(path, -1, cap);
            case SYMLINK:
                return FileRefusals.readOfALink(path);
            case IS_DIRECTORY:
                return FileRefusals.readOfADirectory(path);
            case NOT_REGULAR:
                return FileRefusals.readOfASpecialFile(path);
            case NOT_FOUND:
                return FileRefusals.goneDuringTheCall(path);
            default:
                return failure(error, "read", path);
        }
    }

    private static SandboxPathNotConfined linkOnTheWay(String directory) {
        return new SandboxPathNotConfined(GuestText.quote(directory) + " is a link rather than a real directory; a "
                + "path through a link is refused");
    }

    /** What the agent's code says of a file call, in core's types; the agent's own words quoted. */
    private SandboxException failure(AgentError error, String action, String path) {
        String could = "could not " + action + " " + GuestText.quote(path) + ": ";
        switch (error.code()) {
            case NOT_FOUND:
                return new SandboxFileNotFound(could + "a component is missing");
            case NOT_DIRECTORY:
                return new SandboxNotADirectory(could + "a component is not a directory");
            case IS_DIRECTORY:
                return new SandboxIsADirectory(could + "it is a directory");
            case SYMLINK:
                return new SandboxPathNotConfined(could + "a component is a link, and a link is never followed");
            case EXISTS:
            case NOT_EMPTY:
            case PERMISSION:
            case TOO_LARGE:
            case NOT_REGULAR:
            case IO:
                return new SandboxFileException(could + error.describe());
            case NO_SPACE:
                return new SandboxFileException(could + "the guest's disk is full (" + error.describe() + "): free "
                        + "space in the sandbox, or give it a larger disk");
            default:
                return connection.refused(error, action + " " + GuestText.quote(path));
        }
    }
}
