package org.sandbox4j.core.fakes;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.ExecStream;
import org.sandbox4j.core.spi.ConfinedFilesSandbox;
import org.sandbox4j.core.spi.ExecCapture;
import org.sandbox4j.core.spi.GuestPaths;
import org.sandbox4j.core.spi.TreeRemoval;
import org.sandbox4j.core.spi.WorkspaceFiles;

/**
 * A sandbox for core's own unit tests (core cannot depend on the testkit: that would be a reactor
 * cycle). Its files are real: the whole guest file system ({@code /} and below) is a temporary
 * host directory this sandbox owns, served by the kit's {@link WorkspaceFiles}, so every seed is a
 * real host operation and every file method runs the code real backends run. Its commands are
 * scripted: {@link #exec} records the call, then answers with the first scripted result whose key
 * is a substring of the shell line, or empty output and exit code 0; nothing runs, so a scripted
 * {@code rm -rf} removes nothing. The temporary directories are removed when the test JVM exits.
 */
public final class ScriptedSandbox implements ConfinedFilesSandbox {

    private static final String BACKEND_NAME = "scripted";
    /** The whole guest file system is the workspace: a guest path maps to the same path below it. */
    private static final String MOUNT_POINT = "/";
    private static final int SUCCESS = 0;
    private static final ExecResult NOTHING_SCRIPTED = ExecResult.of("", "", SUCCESS, Duration.ZERO);
    /** A seeded link's target: relative and absent, so following it (a bug) reaches nothing. */
    private static final String DANGLING_TARGET = "absent-link-target";

    private final Path root;
    private final WorkspaceFiles files;
    private final Map<String, ExecResult> outputs;
    private final RuntimeException raises;
    private final List<RecordedCommand> commands = new ArrayList<>();

    private ScriptedSandbox(Builder builder) {
        this.root = TemporaryRoots.create();
        this.files = new WorkspaceFiles(root, MOUNT_POINT, BACKEND_NAME);
        this.outputs = Collections.unmodifiableMap(new LinkedHashMap<>(builder.outputs));
        this.raises = builder.raises;
        builder.seeds.forEach(seed -> seed.plantIn(this));
    }

    /** A builder for an empty sandbox that answers every command with empty output and exit code 0. */
    public static Builder builder() {
        return new Builder();
    }

    @Override
    public WorkspaceFiles files() {
        return files;
    }

    /**
     * Records the call, then answers as scripted. The output cap applies to scripted output as to
     * a real command's ({@link ExecCapture}): the listener gets no more than the cap allows, then
     * the refusal is thrown.
     */
    @Override
    public ExecResult exec(Command command, ExecOptions options) {
        Objects.requireNonNull(command, "command");
        Objects.requireNonNull(options, "options");
        String shellLine = command.toShellLine();
        synchronized (commands) {
            commands.add(new RecordedCommand(command, shellLine, options));
        }
        if (raises != null) {
            throw raises;
        }
        ExecResult result = outputs.entrySet().stream().filter(scripted -> shellLine.contains(scripted.getKey()))
                .map(Map.Entry::getValue).findFirst().orElse(NOTHING_SCRIPTED);
        ExecCapture capture = new ExecCapture(options, BACKEND_NAME);
        if (capture.offer(ExecStream.STDOUT, result.stdout())) {
            capture.offer(ExecStream.STDERR, result.stderr());
        }
        long total = (long) result.stdout().length + result.stderr().length;
        Optional<RuntimeException> refused = capture.refusal(shellLine, "was stopped (" + total + " bytes came)");
        if (refused.isPresent()) {
            throw refused.get();
        }
        return result;
    }

    /** Every {@link #exec} call so far, in order. */
    public List<RecordedCommand> commands() {
        synchronized (commands) {
            return List.copyOf(commands);
        }
    }

    /** Makes {@code absolutePath} a directory, with its parents, unless something is there already. */
    void makeDirectoryUnlessPresent(String absolutePath) {
        Path directory = host(absolutePath);
        if (!Files.exists(directory, LinkOption.NOFOLLOW_LINKS)) {
            io(() -> Files.createDirectories(directory));
        }
    }

    /** The host path of an absolute guest path: the same path below the root. Tests name these paths. */
    private Path host(String absolutePath) {
        if (!absolutePath.startsWith(MOUNT_POINT)) {
            throw new IllegalArgumentException("name an absolute guest path, not '" + absolutePath + "'");
        }
        return root.resolve(GuestPaths.normalize(absolutePath).substring(MOUNT_POINT.length()));
    }

    /** One entry to make before the sandbox is handed out: a real host file, link, directory or socket. */
    private record Seed(String path, Kind kind, byte[] content) {

        enum Kind { FILE, SYMLINK, DIRECTORY, SOCKET }

        void plantIn(ScriptedSandbox sandbox) {
            Path at = sandbox.host(path);
            io(() -> Files.createDirectories(at.getParent()));
            switch (kind) {
                case FILE -> io(() -> Files.write(at, content));
                case SYMLINK -> io(() -> Files.createSymbolicLink(at, at.getFileSystem().getPath(DANGLING_TARGET)));
                case DIRECTORY -> io(() -> Files.createDirectory(at));
                case SOCKET -> io(() -> {
                    // A bound unix-domain socket leaves a socket file: neither file, directory nor link.
                    try (ServerSocketChannel socket = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
                        socket.bind(UnixDomainSocketAddress.of(at));
                    }
                    return at;
                });
            }
        }
    }

    @FunctionalInterface
    private interface HostStep {
        Object run() throws IOException;
    }

    private static void io(HostStep step) {
        try {
            step.run();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The roots this JVM made, removed by the kit's {@link TreeRemoval} (no link followed) when it exits. */
    private static final class TemporaryRoots {

        private static final Set<Path> CREATED = ConcurrentHashMap.newKeySet();

        static {
            Runtime.getRuntime().addShutdownHook(new Thread(() -> CREATED.forEach(TemporaryRoots::removeQuietly),
                    "scripted-sandbox-cleanup"));
        }

        static Path create() {
            Path root;
            try {
                root = Files.createTempDirectory("sandbox4j-core-test-");
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            CREATED.add(root);
            return root;
        }

        private static void removeQuietly(Path root) {
            try {
                TreeRemoval.remove(root, TreeRemoval.Mode.PROCESSES_STOPPED, TreeRemoval.DEFAULT_DEADLINE);
            } catch (IOException e) {
                // Best effort at exit: a leftover temporary directory is harmless.
            }
        }
    }

    /** Mutable, single-use builder. Every seed path is an absolute guest path. */
    public static final class Builder {

        private final List<Seed> seeds = new ArrayList<>();
        private final Map<String, ExecResult> outputs = new LinkedHashMap<>();
        private RuntimeException raises;

        private Builder() {
        }

        /** A regular file holding a copy of {@code content}; its parents become directories. */
        public Builder seedFile(String absolutePath, byte[] content) {
            seeds.add(new Seed(absolutePath, Seed.Kind.FILE, content.clone()));
            return this;
        }

        /** A regular file holding {@code text} encoded as UTF-8. */
        public Builder seedFile(String absolutePath, String text) {
            return seedFile(absolutePath, text.getBytes(StandardCharsets.UTF_8));
        }

        /** A link whose target does not exist: the shape every file method must refuse. */
        public Builder seedSymlink(String absolutePath) {
            seeds.add(new Seed(absolutePath, Seed.Kind.SYMLINK, null));
            return this;
        }

        /** A directory, which exists even while empty. */
        public Builder seedDirectory(String absolutePath) {
            seeds.add(new Seed(absolutePath, Seed.Kind.DIRECTORY, null));
            return this;
        }

        /** An entry that is none of file, directory and link (a unix-domain socket): present, never readable. */
        public Builder seedOther(String absolutePath) {
            seeds.add(new Seed(absolutePath, Seed.Kind.SOCKET, null));
            return this;
        }

        /** Answers every command whose shell line contains {@code substring} with {@code result}; first key wins. */
        public Builder output(String substring, ExecResult result) {
            outputs.put(Objects.requireNonNull(substring, "substring"), Objects.requireNonNull(result, "result"));
            return this;
        }

        /** Makes every {@code exec} throw {@code error} after recording the call. */
        public Builder raises(RuntimeException error) {
            this.raises = error;
            return this;
        }

        public ScriptedSandbox build() {
            return new ScriptedSandbox(this);
        }
    }
}
