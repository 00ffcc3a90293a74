package org.sandbox4j.testkit.example;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.LinkedHashMap;
import java.util.stream.Stream;
import org.sandbox4j.core.BackendDeclarations;
import org.sandbox4j.core.Capability;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.EntryKind;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.Isolation;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.core.SandboxEntry;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.spi.ExecRefusals;
import org.sandbox4j.core.spi.GuestEnvironment;
import org.sandbox4j.core.spi.GuestPaths;
import org.sandbox4j.core.spi.GuestText;
import org.sandbox4j.core.spi.KeyDigest;
import org.sandbox4j.core.spi.KeyedLocks;
import org.sandbox4j.core.spi.ProcessPump;
import org.sandbox4j.core.spi.TreeRemoval;
import org.sandbox4j.core.spi.WorkspaceFiles;
import org.sandbox4j.core.spi.ConfinedFilesSandbox;
import org.sandbox4j.core.spi.ConfinedFiles;

/**
 * The worked example of {@code TCK.md} § Writing a backend: a whole backend on the kit
 * ({@code org.sandbox4j.core.spi}) and bubblewrap, nothing else. Each sandbox is a host directory
 * (its workspace) that every command sees at {@value #MOUNT_POINT} inside a fresh bwrap of
 * every namespace, with the host's {@code /usr} read-only. The directory's name is the digest of
 * the conversation, the key and the kind, so the disk is the provider's record: another instance
 * over the same root finds, reuses and disposes of what this one made.
 *
 * <p>It declares {@link Isolation#NONE}: it is a teaching example, and claims nothing it has not
 * proved (the bubblewrap backend in {@code sandbox4j-local} is the real one).
 */
public final class ExampleBackend implements SandboxBackend {

    /** Where the guest sees its workspace; a spec's work dir must lie under it. */
    public static final String MOUNT_POINT = "/sandbox4j";

    private final Path root;
    private final KeyedLocks<String> acquiring = new KeyedLocks<>();

    /** @param root the state directory (the provider's record); trusted host configuration */
    public ExampleBackend(Path root) {
        this.root = root;
    }

    @Override
    public String name() {
        return "example";
    }

    @Override
    public BackendDeclarations declarations() {
        return BackendDeclarations.builder(Isolation.NONE).capabilities(Capability.EXEC, Capability.FILES_IN,
                Capability.FILES_OUT, Capability.FILES_LIST, Capability.FILES_DELETE).build();
    }

    /** Get or create: one lock per sandbox in this JVM, and an atomic mkdir between JVMs. */
    @Override
    public Sandbox acquire(SandboxKey key, SandboxSpec spec) {
        String workDir = GuestPaths.normalize(spec.workDir());
        if (GuestPaths.relativeTo(workDir, MOUNT_POINT).isEmpty()) {
            throw new SandboxException("backend 'example' serves work dirs under " + MOUNT_POINT + " only, not "
                    + GuestText.quote(workDir) + ": choose one under it");
        }
        String name = conversation(key.scope(), key.threadId()) + "." + KeyDigest.ofParts(List.of(key.scope(),
                key.threadId(), key.agentDir())) + "." + KeyDigest.sha256Hex(spec.kind());
        Path directory = root.resolve(name);
        return acquiring.withLock(name, () -> {
            try {
                Files.createDirectories(root);
                Files.createDirectory(directory);
                // Fresh, and no guest has run yet: the work dir exists before the first call.
                Path workspace = Files.createDirectory(directory.resolve("workspace"));
                Files.createDirectories(workspace.resolve(GuestPaths.relativeTo(workDir, MOUNT_POINT).get()));
            } catch (FileAlreadyExistsException warm) {
                // Made before (here or by another instance): reuse it as it is; a guest may have changed it.
            } catch (IOException e) {
                throw new SandboxException("backend 'example' could not create a sandbox: " + e.getMessage(), e);
            }
            return new ExampleSandbox(directory.resolve("workspace"));
        });
    }

    @Override
    public void dispose(SandboxKey key) {
        remove(conversation(key.scope(), key.threadId()) + "." + KeyDigest.ofParts(List.of(key.scope(),
                key.threadId(), key.agentDir())) + ".");
    }

    /** Answered from the disk, never from this instance's memory. */
    @Override
    public int disposeScope(String scope, String threadId) {
        return remove(conversation(scope, threadId) + ".");
    }

    private static String conversation(String scope, String threadId) {
        return KeyDigest.ofParts(List.of(scope, threadId));
    }

    /** Removes every sandbox whose name starts with {@code prefix}, never following a guest's link. */
    private int remove(String prefix) {
        List<Path> matching = new ArrayList<>();
        try (Stream<Path> sandboxes = Files.list(root)) {
            sandboxes.filter(path -> path.getFileName().toString().startsWith(prefix)).forEach(matching::add);
        } catch (IOException nothingYet) {
            return 0;
        }
        int removed = 0;
        for (Path sandbox : matching) {
            try {
                TreeRemoval.remove(sandbox, TreeRemoval.Mode.GUEST_MAY_RUN, TreeRemoval.DEFAULT_DEADLINE);
                removed++;
            } catch (IOException e) {
                System.getLogger(ExampleBackend.class.getName()).log(System.Logger.Level.WARNING,
                        "could not remove " + sandbox.getFileName() + ": " + e.getMessage());
            }
        }
        return removed;
    }

    /** One sandbox: its files through the kit's host-directory skeleton, its commands through bwrap. */
    private static final class ExampleSandbox implements ConfinedFilesSandbox {

        private final Path workspace;
        private final WorkspaceFiles files;

        ExampleSandbox(Path workspace) {
            this.workspace = workspace;
            // Plain bwrap lets a guest make FIFOs, so the files are opened so that none can block them.
            this.files = new WorkspaceFiles(workspace, MOUNT_POINT, "example", WorkspaceFiles.Fifos.MAY_EXIST);
        }

        @Override
        public ConfinedFiles<?> files() {
            return files;
        }

        @Override
        public ExecResult exec(Command command, ExecOptions options) {
            requireWorkingDirectory(options.workingDirectory());
            List<String> argv = new ArrayList<>(List.of("bwrap", "--unshare-all", "--die-with-parent",
                    "--new-session", "--ro-bind", "/usr", "/usr", "--ro-bind-try", "/bin", "/bin", "--ro-bind-try",
                    "/lib", "/lib", "--ro-bind-try", "/lib64", "/lib64", "--ro-bind-try", "/sbin", "/sbin",
                    "--ro-bind", "/etc/passwd", "/etc/passwd", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
                    "--bind", workspace.toString(), MOUNT_POINT, "--chdir", options.workingDirectory(), "--clearenv"));
            Map<String, String> environment = new LinkedHashMap<>(GuestEnvironment.WITH_SYSTEM_PATH);
            environment.putAll(options.environment());
            environment.forEach((variable, value) -> argv.addAll(List.of("--setenv", variable, value)));
            // Behind sh's exec, a missing program exits 127 and a non-executable one 126, as in any shell;
            // the words stay arguments, never shell text.
            argv.addAll(List.of("--", "/bin/sh", "-c"));
            if (command instanceof Command.Shell shell) {
                argv.add(shell.line());
            } else {
                argv.add("exec \"$0\" \"$@\"");
                argv.addAll(((Command.Argv) command).words());
            }
            long start = System.nanoTime();
            Process process;
            try {
                process = new ProcessBuilder(argv).start();
            } catch (IOException e) {
                throw ExecRefusals.couldNotStart("example", "bwrap", e);
            }
            // Killing bwrap kills its PID namespace's init (--die-with-parent), and with it the whole tree.
            return ProcessPump.await(process, Process::destroyForcibly, options, command.toShellLine(), "example",
                    start);
        }

        /**
         * The one typed error for a missing working directory in the workspace, before bwrap runs
         * (outside it, the guest sees only the directories bwrap makes). A guest racing this check
         * makes bwrap's chdir fail instead; sandbox4j-local's bubblewrap backend reads bwrap's
         * {@code --json-status-fd} report to tell that apart from the command's exit.
         */
        private void requireWorkingDirectory(String workingDirectory) {
            if (GuestPaths.relativeTo(GuestPaths.normalize(workingDirectory), MOUNT_POINT).isEmpty()) {
                return;
            }
            Optional<SandboxEntry> entry = files.stat(workingDirectory, "/");
            if (entry.isEmpty()) {
                throw ExecRefusals.workingDirectoryMissing(workingDirectory);
            }
            if (entry.get().kind() != EntryKind.DIRECTORY) {
                throw ExecRefusals.workingDirectoryNotADirectory(workingDirectory);
            }
        }

    }
}
