package org.sandbox4j.testkit;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.NavigableSet;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.EntryKind;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.ExecStream;
import org.sandbox4j.core.spi.GuestPaths;
import org.sandbox4j.core.spi.GuestText;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxExecOutputLimitExceeded;
import org.sandbox4j.core.spi.ExecCapture;
import org.sandbox4j.core.spi.ConfinedFiles;
import java.util.function.Function;
import org.sandbox4j.core.spi.ConfinedFilesSandbox;

/**
 * A {@link Sandbox} held entirely in memory, for tests: a guest file system of regular files,
 * directories, links and other entries, plus scripted command output. Thread-safe (one lock).
 *
 * <h2>The file system</h2>
 * Regular files are stored by normalised absolute guest path. Links ({@link Builder#seedSymlink})
 * and other entries ({@link Builder#seedOther}: devices, sockets, FIFOs) exist only as shapes.
 * A directory exists when it was seeded ({@link Builder#seedDirectory}), created as a parent by
 * {@link #writeFile} (which behaves like {@code mkdir -p}), or is implied by any entry stored
 * below it. The root {@code /} always exists. Every file method confines its path and walks every
 * ancestor from {@code /} with this sandbox's own unconfined no-follow stat, through
 * {@link GuestPaths}, exactly as a real backend must.
 *
 * <p>Tests may also plant entries while the sandbox is in use ({@link #plantFile},
 * {@link #plantSymlink}, {@link #plantDirectory}): these are test hooks standing in for a guest
 * program, and bypass confinement. {@link InMemoryGuestSide} uses them to run the conformance TCK.
 *
 * <p><b>Limitation:</b> this models shape, not escape. A link has no target it can be followed to
 * (a planted link's target is only recorded), so a test here proves that a link is
 * <em>refused</em>, never what following it would have reached. Prove escapes against a real
 * backend with the conformance suite.
 *
 * <h2>Commands</h2>
 * {@link #exec} records every call, then answers with the first scripted output (in the order
 * the builder received them) whose key is a substring of {@code command.toShellLine()}, or with
 * the default stdout and exit code 0 when none matches. {@link Builder#raises} makes it throw
 * instead. Nothing runs and
 * nothing here waits, so timeouts never fire.
 */
public final class InMemorySandbox implements ConfinedFilesSandbox {

    private static final String ROOT = "/";
    private static final String SEPARATOR = "/";
    /** What a command prints when no scripted output matches, unless the builder says otherwise. */
    private static final String DEFAULT_STDOUT = "";
    private static final int SUCCESS = 0;

    private final Object lock = new Object();
    private final NavigableMap<String, byte[]> contents = new TreeMap<>();
    private final NavigableSet<String> symlinks = new TreeSet<>();
    private final NavigableSet<String> nonRegular = new TreeSet<>();
    private final NavigableSet<String> directories = new TreeSet<>();
    /** What each link planted at run time names; recorded for tests, never followed. */
    private final Map<String, String> linkTargets = new TreeMap<>();
    private final List<RecordedCommand> commands = new ArrayList<>();
    private final MapFiles files = new MapFiles();

    private final Map<String, ExecResult> outputs;
    private final ExecResult defaultResult;
    private final RuntimeException raises;

    private InMemorySandbox(Builder builder) {
        this.outputs = Collections.unmodifiableMap(new LinkedHashMap<>(builder.outputs));
        this.defaultResult = ExecResult.of(builder.defaultStdout, "", SUCCESS, Duration.ZERO);
        this.raises = builder.raises;
        for (Seed seed : builder.seeds) {
            plant(seed);
        }
        refuseEntriesBelowNonDirectories();
    }

    /** A builder for an empty sandbox that answers every command with empty output and exit code 0. */
    public static Builder builder() {
        return new Builder();
    }

    // ---------------------------------------------------------------- Sandbox: files

    /**
     * The file methods: a write replaces whatever regular file (or device, socket, FIFO: modelled as
     * a rename into place) was there and makes missing parents; a removal removes links as links.
     */
    @Override
    public ConfinedFiles<?> files() {
        return files;
    }

    /** The maps as the kit's file primitives: every call holds the one lock from walk to primitive. */
    private final class MapFiles extends ConfinedFiles<Object> {

        @Override
        protected <T> T call(String path, String operation, Function<Object, T> body) {
            synchronized (lock) {
                return body.apply(lock);
            }
        }

        @Override
        protected Optional<Stat> lstat(Object call, String absolute) {
            return kindOf(absolute).map(kind -> kind == EntryKind.FILE ? Stat.file(contents.get(absolute).length)
                    : Stat.of(kind));
        }

        @Override
        protected void write(Object call, String absolute, byte[] content, String path) {
            // The walk stopped at the first missing component, so every missing one is created here.
            for (String directory : GuestPaths.directoryChain(GuestPaths.parent(absolute))) {
                if (kindOf(directory).isEmpty()) {
                    directories.add(directory);
                }
            }
            nonRegular.remove(absolute);
            contents.put(absolute, content.clone());
        }

        @Override
        protected void makeDirectories(Object call, String absolute, String path) {
            for (String directory : GuestPaths.directoryChain(absolute)) {
                if (kindOf(directory).isEmpty()) {
                    directories.add(directory);
                }
            }
        }

        @Override
        protected byte[] read(Object call, String absolute, Stat stat, long cap, String path) {
            return contents.get(absolute).clone();
        }

        @Override
        protected Map<String, Stat> list(Object call, String absolute, String path) {
            SortedSet<String> names = new TreeSet<>();
            String prefix = childPrefix(absolute);
            collectChildNames(contents.navigableKeySet(), prefix, names);
            collectChildNames(symlinks, prefix, names);
            collectChildNames(nonRegular, prefix, names);
            collectChildNames(directories, prefix, names);
            Map<String, Stat> children = new TreeMap<>();
            for (String name : names) {
                children.put(name, lstat(call, prefix + name).orElseThrow());
            }
            return children;
        }

        @Override
        protected void unlink(Object call, String absolute, Stat stat, boolean recursive, String path) {
            switch (stat.kind()) {
                case FILE -> contents.remove(absolute);
                case SYMLINK -> {
                    symlinks.remove(absolute);
                    linkTargets.remove(absolute);
                }
                case OTHER -> nonRegular.remove(absolute);
                case DIRECTORY -> removeTree(absolute);
            }
        }
    }

    // ---------------------------------------------------------------- Sandbox: commands

    /**
     * Records the call, then answers as scripted. The output cap applies to scripted output as it
     * would to a real command: the listener receives no more than the cap allows, then
     * {@link SandboxExecOutputLimitExceeded} is thrown.
     */
    @Override
    public ExecResult exec(Command command, ExecOptions options) {
        Objects.requireNonNull(command, "command");
        Objects.requireNonNull(options, "options");
        String shellLine = command.toShellLine();
        synchronized (lock) {
            commands.add(new RecordedCommand(command, shellLine, options));
        }
        ExecResult result = answer(shellLine);
        deliverWithinCap(shellLine, result, options);
        return result;
    }

    // ---------------------------------------------------------------- planting at run time (test hooks)

    /**
     * Test hook: plants a regular file holding a copy of {@code content}, as a guest-side fixture
     * would be planted, bypassing confinement (the path need not be under any working directory).
     * Its parents become directories; an existing file there is replaced.
     *
     * @throws IllegalArgumentException a directory or link is there, or an ancestor is not a directory
     */
    public void plantFile(String absolutePath, byte[] content) {
        Objects.requireNonNull(content, "content");
        plantAtRunTime(new Seed(absolute(absolutePath), EntryKind.FILE, content.clone()), null);
    }

    /**
     * Test hook: plants a link at {@code absolutePath} naming {@code target}, replacing a file or
     * link there. The target is recorded ({@link #symlinkTarget}) and <b>never followed</b>: this
     * sandbox models shape, not escape, so nothing can be reached through the link.
     *
     * @throws IllegalArgumentException a directory is there, or an ancestor is not a directory
     */
    public void plantSymlink(String absolutePath, String target) {
        Objects.requireNonNull(target, "target");
        plantAtRunTime(new Seed(absolute(absolutePath), EntryKind.SYMLINK, null), target);
    }

    /**
     * Test hook: plants a directory and its parents, like {@code mkdir -p}; an existing directory
     * is left as it is.
     *
     * @throws IllegalArgumentException a file, link or other entry is there or on an ancestor
     */
    public void plantDirectory(String absolutePath) {
        String path = absolute(absolutePath);
        synchronized (lock) {
            if (path.equals(ROOT) || kindOf(path).filter(kind -> kind == EntryKind.DIRECTORY).isPresent()) {
                return;
            }
            plantAtRunTime(new Seed(path, EntryKind.DIRECTORY, null), null);
        }
    }

    // ---------------------------------------------------------------- inspection for tests

    /** Every {@link #exec} call so far, in order. */
    public List<RecordedCommand> commands() {
        synchronized (lock) {
            return List.copyOf(commands);
        }
    }

    /** A copy of the bytes of the regular file at {@code absolutePath}; empty for anything else. */
    public Optional<byte[]> contentOf(String absolutePath) {
        String path = absolute(absolutePath);
        synchronized (lock) {
            return Optional.ofNullable(contents.get(path)).map(byte[]::clone);
        }
    }

    /** Whether anything is at {@code absolutePath}: a file, a directory (explicit or implied), a link or another entry. */
    public boolean exists(String absolutePath) {
        return kindOf(absolute(absolutePath)).isPresent();
    }

    /**
     * What is at {@code absolutePath}, described without following a link: empty when nothing is
     * there. A directory implied by an entry below it counts.
     */
    public Optional<EntryKind> kindAt(String absolutePath) {
        return kindOf(absolute(absolutePath));
    }

    /**
     * The target recorded for the link at {@code absolutePath} by {@link #plantSymlink}; empty when
     * no link is there or it was seeded without one. Nothing in this sandbox ever follows it.
     */
    public Optional<String> symlinkTarget(String absolutePath) {
        String path = absolute(absolutePath);
        synchronized (lock) {
            return symlinks.contains(path) ? Optional.ofNullable(linkTargets.get(path)) : Optional.empty();
        }
    }

    /** The links, by absolute path, sorted. */
    public Set<String> symlinks() {
        synchronized (lock) {
            return Collections.unmodifiableSet(new TreeSet<>(symlinks));
        }
    }

    /**
     * The explicit directories (seeded, or created as parents by {@link #writeFile}), by absolute
     * path, sorted. A directory only implied by a seeded entry below it is not listed; ask
     * {@link #exists} about it.
     */
    public Set<String> directories() {
        synchronized (lock) {
            return Collections.unmodifiableSet(new TreeSet<>(directories));
        }
    }

    /** The devices, sockets and FIFOs, by absolute path, sorted. */
    public Set<String> nonRegular() {
        synchronized (lock) {
            return Collections.unmodifiableSet(new TreeSet<>(nonRegular));
        }
    }

    /** A copy of every regular file: absolute path to bytes, sorted by path. */
    public Map<String, byte[]> contents() {
        synchronized (lock) {
            NavigableMap<String, byte[]> copy = new TreeMap<>();
            contents.forEach((path, bytes) -> copy.put(path, bytes.clone()));
            return Collections.unmodifiableMap(copy);
        }
    }

    // ---------------------------------------------------------------- internals

    /** The unconfined no-follow stat the ancestor walk uses. */
    private Optional<EntryKind> kindOf(String absolutePath) {
        synchronized (lock) {
            if (absolutePath.equals(ROOT)) {
                return Optional.of(EntryKind.DIRECTORY);
            }
            if (contents.containsKey(absolutePath)) {
                return Optional.of(EntryKind.FILE);
            }
            if (symlinks.contains(absolutePath)) {
                return Optional.of(EntryKind.SYMLINK);
            }
            if (nonRegular.contains(absolutePath)) {
                return Optional.of(EntryKind.OTHER);
            }
            if (directories.contains(absolutePath) || anythingBelow(absolutePath)) {
                return Optional.of(EntryKind.DIRECTORY);
            }
            return Optional.empty();
        }
    }

    private boolean anythingBelow(String absolutePath) {
        String prefix = childPrefix(absolutePath);
        return startsWith(contents.ceilingKey(prefix), prefix)
                || startsWith(symlinks.ceiling(prefix), prefix)
                || startsWith(nonRegular.ceiling(prefix), prefix)
                || startsWith(directories.ceiling(prefix), prefix);
    }

    private static boolean startsWith(String candidate, String prefix) {
        return candidate != null && candidate.startsWith(prefix);
    }

    /** {@code /a} gives {@code /a/}; the root stays {@code /}. Comparing against it keeps {@code /a2} out. */
    private static String childPrefix(String directory) {
        return directory.equals(ROOT) ? ROOT : directory + SEPARATOR;
    }

    private static void collectChildNames(NavigableSet<String> paths, String prefix, Set<String> names) {
        for (String path : paths.tailSet(prefix, false)) {
            if (!path.startsWith(prefix)) {
                break;
            }
            String below = path.substring(prefix.length());
            int slash = below.indexOf(SEPARATOR);
            names.add(slash < 0 ? below : below.substring(0, slash));
        }
    }

    private void removeTree(String directory) {
        directories.remove(directory);
        String prefix = childPrefix(directory);
        removeBelow(contents.navigableKeySet(), prefix);
        removeBelow(symlinks, prefix);
        linkTargets.keySet().removeIf(path -> path.startsWith(prefix));
        removeBelow(nonRegular, prefix);
        removeBelow(directories, prefix);
    }

    private static void removeBelow(NavigableSet<String> paths, String prefix) {
        Iterator<String> below = paths.tailSet(prefix, false).iterator();
        while (below.hasNext() && below.next().startsWith(prefix)) {
            below.remove();
        }
    }

    private ExecResult answer(String text) {
        if (raises != null) {
            throw raises;
        }
        for (Map.Entry<String, ExecResult> scripted : outputs.entrySet()) {
            if (text.contains(scripted.getKey())) {
                return scripted.getValue();
            }
        }
        return defaultResult;
    }

    /** The scripted result goes through the same capture every backend's output does: one cap, one listener rule. */
    private static void deliverWithinCap(String shellLine, ExecResult result, ExecOptions options) {
        ExecCapture capture = new ExecCapture(options, "in-memory");
        long total = (long) result.stdout().length + result.stderr().length;
        if (capture.offer(ExecStream.STDOUT, result.stdout())) {
            capture.offer(ExecStream.STDERR, result.stderr());
        }
        Optional<RuntimeException> refused = capture.refusal(shellLine, "was stopped (" + total + " bytes came)");
        if (refused.isPresent()) {
            throw refused.get();
        }
    }

    /** Plants one entry at run time, refusing shapes no guest has (what the builder refuses for seeds). */
    private void plantAtRunTime(Seed seed, String linkTarget) {
        if (seed.path().equals(ROOT)) {
            throw new IllegalArgumentException("the root '/' always exists as a directory; plant entries below it");
        }
        synchronized (lock) {
            for (String ancestor : GuestPaths.directoryChain(GuestPaths.parent(seed.path()))) {
                Optional<EntryKind> kind = kindOf(ancestor);
                if (kind.isPresent() && kind.get() != EntryKind.DIRECTORY) {
                    throw new IllegalArgumentException("cannot plant " + GuestText.quote(seed.path()) + ": its "
                            + "ancestor " + GuestText.quote(ancestor) + " is " + kind.get().wire() + ", not a directory "
                            + "(an in-memory link has no target to hold it)");
                }
            }
            Optional<EntryKind> existing = kindOf(seed.path());
            if (existing.isPresent() && existing.get() == EntryKind.DIRECTORY) {
                throw new IllegalArgumentException("cannot plant a " + seed.kind().wire() + " at "
                        + GuestText.quote(seed.path()) + ": a directory is there");
            }
            if (existing.isPresent() && seed.kind() == EntryKind.DIRECTORY) {
                throw new IllegalArgumentException("cannot plant a directory at " + GuestText.quote(seed.path())
                        + ": a " + existing.get().wire() + " is there");
            }
            if (existing.isPresent() && existing.get() == EntryKind.SYMLINK && seed.kind() == EntryKind.FILE) {
                throw new IllegalArgumentException("cannot plant a file at " + GuestText.quote(seed.path())
                        + ": a link is there, and planting never follows a link");
            }
            plant(seed);
            if (linkTarget != null) {
                linkTargets.put(seed.path(), linkTarget);
            }
        }
    }

    private void plant(Seed seed) {
        linkTargets.remove(seed.path());
        contents.remove(seed.path());
        symlinks.remove(seed.path());
        nonRegular.remove(seed.path());
        directories.remove(seed.path());
        switch (seed.kind()) {
            case FILE:
                contents.put(seed.path(), seed.content());
                break;
            case SYMLINK:
                symlinks.add(seed.path());
                break;
            case OTHER:
                nonRegular.add(seed.path());
                break;
            default:
                directories.add(seed.path());
        }
    }

    /** A file, link or other entry with entries below it is a shape no guest has: refuse the seeds. */
    private void refuseEntriesBelowNonDirectories() {
        List<String> all = new ArrayList<>(contents.keySet());
        all.addAll(symlinks);
        all.addAll(nonRegular);
        all.addAll(directories);
        for (String path : all) {
            for (String ancestor : GuestPaths.directoryChain(GuestPaths.parent(path))) {
                EntryKind kind = kindOf(ancestor).orElseThrow();
                if (kind != EntryKind.DIRECTORY) {
                    throw new IllegalArgumentException("cannot seed " + GuestText.quote(path) + ": its ancestor "
                            + GuestText.quote(ancestor) + " is seeded as " + kind.wire() + ", not a directory; seed "
                            + "entries only below directories (a seeded link has no target to hold them)");
                }
            }
        }
    }

    private static String absolute(String path) {
        Objects.requireNonNull(path, "path");
        if (!path.startsWith(ROOT)) {
            throw new IllegalArgumentException("the in-memory sandbox is addressed by absolute guest path, not "
                    + GuestText.quote(path) + "; start it with '/'");
        }
        return GuestPaths.normalize(path);
    }

    private record Seed(String path, EntryKind kind, byte[] content) {
    }

    /** Mutable, single-use builder for an {@link InMemorySandbox}. Every seed path is absolute. */
    public static final class Builder {

        private final List<Seed> seeds = new ArrayList<>();
        private final Map<String, ExecResult> outputs = new LinkedHashMap<>();
        private String defaultStdout = DEFAULT_STDOUT;
        private RuntimeException raises;

        private Builder() {
        }

        /** A regular file holding a copy of {@code content}; its parents are implied directories. */
        public Builder seedFile(String absolutePath, byte[] content) {
            Objects.requireNonNull(content, "content");
            return seed(absolutePath, EntryKind.FILE, content.clone());
        }

        /** A regular file holding {@code text} encoded as UTF-8. */
        public Builder seedFile(String absolutePath, String text) {
            Objects.requireNonNull(text, "text");
            return seed(absolutePath, EntryKind.FILE, text.getBytes(StandardCharsets.UTF_8));
        }

        /** A link with no target: it models the shape every file method must refuse, not an escape. */
        public Builder seedSymlink(String absolutePath) {
            return seed(absolutePath, EntryKind.SYMLINK, null);
        }

        /** An explicit directory, which exists even while empty. */
        public Builder seedDirectory(String absolutePath) {
            return seed(absolutePath, EntryKind.DIRECTORY, null);
        }

        /** A device, socket or FIFO: present, never readable. */
        public Builder seedOther(String absolutePath) {
            return seed(absolutePath, EntryKind.OTHER, null);
        }

        /**
         * Answers every command whose shell line (or program whose text) contains {@code substring}
         * with {@code result}. The first key added wins when several match; adding a key again
         * replaces its result and keeps its place.
         */
        public Builder output(String substring, ExecResult result) {
            outputs.put(Objects.requireNonNull(substring, "substring"), Objects.requireNonNull(result, "result"));
            return this;
        }

        /** {@link #output(String, ExecResult)} with {@code stdout}, no stderr and exit code 0. */
        public Builder output(String substring, String stdout) {
            Objects.requireNonNull(stdout, "stdout");
            return output(substring, ExecResult.of(stdout, "", SUCCESS, Duration.ZERO));
        }

        /** What a command prints (with exit code 0) when no scripted output matches; empty unless set. */
        public Builder defaultStdout(String stdout) {
            this.defaultStdout = Objects.requireNonNull(stdout, "stdout");
            return this;
        }

        /** Makes every {@code exec} throw {@code error} after recording the call; null clears. */
        public Builder raises(RuntimeException error) {
            this.raises = error;
            return this;
        }

        /**
         * @throws IllegalArgumentException an entry is seeded below a file, link or other entry
         */
        public InMemorySandbox build() {
            return new InMemorySandbox(this);
        }

        private Builder seed(String absolutePath, EntryKind kind, byte[] content) {
            String path = absolute(absolutePath);
            if (path.equals(ROOT)) {
                throw new IllegalArgumentException("the root '/' always exists as a directory and cannot be seeded; "
                        + "seed entries below it");
            }
            seeds.add(new Seed(path, kind, content));
            return this;
        }
    }
}
