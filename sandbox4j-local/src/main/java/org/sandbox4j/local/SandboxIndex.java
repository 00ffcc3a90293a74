package org.sandbox4j.local;

import java.io.IOException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;
import org.sandbox4j.core.spi.ErrorDetail;

/**
 * Which sandboxes a conversation holds, so that dispose and disposeScope open those records and no
 * others, however many sandboxes the state root holds: {@code .index/<scope sha256>/<thread
 * sha256>/<sandbox id>}, one empty file per sandbox, in the store beside the sandboxes (no guest
 * reaches it). An entry is made (under the sandbox's lock) before its sandbox is renamed into
 * place and removed after it was renamed away, so whoever finds a sandbox finds its entry; nothing
 * is ever rewritten, so replicas sharing the state root add and remove entries without racing.
 *
 * <p>The index is a hint, never the truth: every name read must be a sandbox id, at most
 * {@link #MAX_ENTRIES} are read from one directory (past that a caller scans the records), and the
 * caller re-reads each record it names under the sandbox's lock, dropping an entry whose record is
 * gone or names another conversation. A state root written before the index (no {@value #READY}
 * marker) is indexed from its records when a backend opens it, and the reaper adds what is missing.
 */
final class SandboxIndex {

    private static final System.Logger LOG = System.getLogger(SandboxIndex.class.getName());
    static final String DIRECTORY = ".index";
    /** Present once every record under the store has its entry (written after a full indexing). */
    static final String READY = "ready-1";
    /** The most names read from one index directory: past it the caller scans the records instead. */
    static final int MAX_ENTRIES = 4096;
    /** How often adding an entry retries when a remover took its (then empty) directory meanwhile. */
    private static final int ADD_ATTEMPTS = 8;
    private static final Pattern HASH = Pattern.compile("[0-9a-f]{64}");
    private static final Pattern ID = Pattern.compile("sbx-[0-9a-z-]{1,64}");

    private final Path root;

    private SandboxIndex(Path root) {
        this.root = root;
    }

    /** The index of the store at {@code storeRoot}; its directory is made owner-only by the store. */
    static SandboxIndex in(Path storeRoot) {
        return new SandboxIndex(storeRoot.resolve(DIRECTORY));
    }

    Path root() {
        return root;
    }

    /** One sandbox as the index names it: the conversation's hashes and the sandbox's id. */
    record Entry(String scopeHash, String threadHash, String id) {
    }

    static Entry entryOf(SandboxRecord record) {
        return new Entry(record.scopeHash(), record.threadHash(), record.id());
    }

    /** Whether a full indexing of the store's records finished (in any process). */
    boolean ready() {
        return Files.isRegularFile(root.resolve(READY), LinkOption.NOFOLLOW_LINKS);
    }

    void markReady() throws IOException {
        try {
            Files.createFile(root.resolve(READY));
        } catch (FileAlreadyExistsException already) {
            // Another process indexed it too.
        }
    }

    /** Adds {@code entry}; a no-op when it exists. Call holding the sandbox's lock. */
    void add(Entry entry) throws IOException {
        requireWellFormed(entry);
        Path thread = threadDirectory(entry.scopeHash(), entry.threadHash());
        for (int attempt = 1; ; attempt++) {
            try {
                Files.createDirectories(thread);
                // CREATE_NEW: never through a link, never over what is there.
                Files.createFile(thread.resolve(entry.id()));
                return;
            } catch (FileAlreadyExistsException already) {
                if (Files.isRegularFile(thread.resolve(entry.id()), LinkOption.NOFOLLOW_LINKS)) {
                    return;
                }
                throw already;
            } catch (NoSuchFileException emptiedMeanwhile) {
                // A remover took the directory after it emptied it: make it again.
                if (attempt == ADD_ATTEMPTS) {
                    throw emptiedMeanwhile;
                }
            }
        }
    }

    /** Removes {@code entry} and the directories it leaves empty; best effort. Call holding the sandbox's lock. */
    void remove(Entry entry) {
        if (!wellFormed(entry)) {
            return;
        }
        Path scope = root.resolve(entry.scopeHash());
        Path thread = scope.resolve(entry.threadHash());
        try {
            Files.deleteIfExists(thread.resolve(entry.id()));
            removeIfEmpty(thread);
            removeIfEmpty(scope);
        } catch (IOException e) {
            LOG.log(System.Logger.Level.DEBUG, () -> "could not remove the index entry of " + entry.id() + ": "
                    + ErrorDetail.of(e));
        }
    }

    /**
     * The ids indexed for the conversation {@code (scopeHash, threadHash)}; empty when the index
     * cannot answer (too many names, or unreadable): the caller then scans the records.
     */
    Optional<List<String>> ids(String scopeHash, String threadHash) {
        if (!HASH.matcher(scopeHash).matches() || !HASH.matcher(threadHash).matches()) {
            return Optional.empty();
        }
        return names(threadDirectory(scopeHash, threadHash), ID, MAX_ENTRIES);
    }

    /** Every entry under the scope {@code scopeHash}; empty when the index cannot answer. */
    Optional<List<Entry>> entries(String scopeHash) {
        if (!HASH.matcher(scopeHash).matches()) {
            return Optional.empty();
        }
        Optional<List<String>> threads = names(root.resolve(scopeHash), HASH, MAX_ENTRIES);
        if (threads.isEmpty()) {
            return Optional.empty();
        }
        List<Entry> entries = new ArrayList<>();
        for (String thread : threads.get()) {
            Optional<List<String>> ids = ids(scopeHash, thread);
            if (ids.isEmpty() || entries.size() + ids.get().size() > MAX_ENTRIES) {
                return Optional.empty();
            }
            ids.get().forEach(id -> entries.add(new Entry(scopeHash, thread, id)));
        }
        return Optional.of(entries);
    }

    /**
     * Every entry in the index, for the reaper, which walks every record anyway: it has a scope
     * directory per conversation scope, so it is not held to {@link #MAX_ENTRIES}; unreadable parts
     * are skipped.
     */
    List<Entry> all() {
        List<Entry> entries = new ArrayList<>();
        for (String scope : names(root, HASH, Integer.MAX_VALUE).orElse(List.of())) {
            for (String thread : names(root.resolve(scope), HASH, Integer.MAX_VALUE).orElse(List.of())) {
                ids(scope, thread).orElse(List.of()).forEach(id -> entries.add(new Entry(scope, thread, id)));
            }
        }
        return entries;
    }

    private Path threadDirectory(String scopeHash, String threadHash) {
        return root.resolve(scopeHash).resolve(threadHash);
    }

    /**
     * The names in {@code directory} that match {@code shape} (others are ignored); an empty list
     * when it does not exist, empty when it has more than {@code limit} names, cannot be read, or
     * is not a directory (a link is not followed).
     */
    private static Optional<List<String>> names(Path directory, Pattern shape, int limit) {
        try {
            if (!Files.readAttributes(directory, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS).isDirectory()) {
                return Optional.empty();
            }
        } catch (NoSuchFileException none) {
            return Optional.of(List.of());
        } catch (IOException e) {
            return Optional.empty();
        }
        List<String> names = new ArrayList<>();
        int read = 0;
        try (DirectoryStream<Path> children = Files.newDirectoryStream(directory)) {
            for (Path child : children) {
                if (++read > limit) {
                    LOG.log(System.Logger.Level.WARNING, () -> "the sandbox index " + directory + " holds more than "
                            + limit + " names: answering from the records instead");
                    return Optional.empty();
                }
                String name = child.getFileName().toString();
                if (shape.matcher(name).matches()) {
                    names.add(name);
                }
            }
        } catch (NoSuchFileException removedMeanwhile) {
            return Optional.of(List.of());
        } catch (IOException | java.nio.file.DirectoryIteratorException e) {
            LOG.log(System.Logger.Level.DEBUG, () -> "could not read the sandbox index " + directory + ": "
                    + ErrorDetail.of(e));
            return Optional.empty();
        }
        return Optional.of(names);
    }

    private static void removeIfEmpty(Path directory) throws IOException {
        try {
            Files.deleteIfExists(directory);
        } catch (DirectoryNotEmptyException inUse) {
            // Another sandbox of the conversation is indexed there.
        }
    }

    /** Whether {@code entry} can be indexed: hex digests and a sandbox id (a garbled record's cannot). */
    static boolean wellFormed(Entry entry) {
        return HASH.matcher(entry.scopeHash()).matches() && HASH.matcher(entry.threadHash()).matches()
                && ID.matcher(entry.id()).matches();
    }

    private static void requireWellFormed(Entry entry) throws IOException {
        if (!wellFormed(entry)) {
            throw new IOException("not an index entry: " + entry.id());
        }
    }
}
