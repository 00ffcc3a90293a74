package org.sandbox4j.agent;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;
import org.sandbox4j.core.BackendDeclarations;
import org.sandbox4j.core.Capability;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.Isolation;
import org.sandbox4j.core.ProcessOptions;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxDisposed;
import org.sandbox4j.core.SandboxInterrupted;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxProcess;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.spi.ConfinedFiles;
import org.sandbox4j.core.spi.ConfinedFilesSandbox;
import org.sandbox4j.core.spi.GuestEnvironment;
import org.sandbox4j.core.spi.GuestPaths;
import org.sandbox4j.core.spi.KeyDigest;
import org.sandbox4j.core.spi.KeyedLocks;
import org.sandbox4j.core.spi.TreeRemoval;

/**
 * A small backend on one resident agent, for the TCK: each sandbox is a host directory under the
 * state root (the guest shares the host's file system, so work dirs are relocated into it), every
 * exec and file call goes through the agent. It isolates nothing and declares {@link Isolation#NONE};
 * the directory names are digests of the key, so another instance over the same root finds what
 * this one made. A disposal stops the sandbox's running execs (it interrupts their threads, which
 * kills each command's tree) before its directory is removed.
 */
final class AgentTestBackend implements SandboxBackend {

    static final String NAME = "agent-tck";

    private final Path root;
    private final AgentConnection connection;
    private final boolean interactive;
    private final KeyedLocks<String> acquiring = new KeyedLocks<>();
    /** The threads running each sandbox's execs, by sandbox name: shared by every instance, as the disk is. */
    private static final Map<String, Set<Thread>> RUNNING = new ConcurrentHashMap<>();
    private static final Set<String> DISPOSED = ConcurrentHashMap.newKeySet();
    /** The started processes of each sandbox, by sandbox name: a disposal kills them. */
    private static final Map<String, Set<AgentProcess>> PROCESSES = new ConcurrentHashMap<>();

    AgentTestBackend(Path root, AgentConnection connection) {
        this(root, connection, false);
    }

    /**
     * @param interactive whether it declares {@link Capability#INTERACTIVE_EXEC}: for an agent whose
     *                    kill reaches the whole tree (marker kill, per-exec namespaces)
     */
    AgentTestBackend(Path root, AgentConnection connection, boolean interactive) {
        this.root = root;
        this.connection = connection;
        this.interactive = interactive;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public BackendDeclarations declarations() {
        List<Capability> capabilities = new ArrayList<>(List.of(Capability.EXEC, Capability.FILES_IN,
                Capability.FILES_OUT, Capability.FILES_LIST, Capability.FILES_DELETE));
        if (interactive) {
            capabilities.add(Capability.INTERACTIVE_EXEC);
        }
        return BackendDeclarations.builder(Isolation.NONE).capabilities(capabilities.toArray(Capability[]::new))
                .build();
    }

    @Override
    public Sandbox acquire(SandboxKey key, SandboxSpec spec) {
        String name = conversation(key.scope(), key.threadId()) + "." + KeyDigest.ofParts(List.of(key.scope(),
                key.threadId(), key.agentDir())) + "." + KeyDigest.sha256Hex(spec.kind());
        Path directory = root.resolve(name);
        Path workDir = directory.resolve(GuestPaths.fileName(GuestPaths.normalize(spec.workDir())));
        return acquiring.withLock(name, () -> {
            try {
                Files.createDirectories(root);
                Files.createDirectory(directory);
                Files.createDirectory(workDir);
            } catch (FileAlreadyExistsException warm) {
                // Made before: reused as it is.
            } catch (IOException e) {
                throw new SandboxException("backend '" + NAME + "' could not create a sandbox: " + e.getMessage(), e);
            }
            DISPOSED.remove(name);
            return new AgentTestSandbox(name, workDir.toString(), new AgentFiles(connection, NAME, spec.filesIn(),
                    spec.filesOut()));
        });
    }

    @Override
    public void dispose(SandboxKey key) {
        remove(conversation(key.scope(), key.threadId()) + "." + KeyDigest.ofParts(List.of(key.scope(),
                key.threadId(), key.agentDir())) + ".");
    }

    @Override
    public int disposeScope(String scope, String threadId) {
        return remove(conversation(scope, threadId) + ".");
    }

    private static String conversation(String scope, String threadId) {
        return KeyDigest.ofParts(List.of(scope, threadId));
    }

    private int remove(String prefix) {
        List<Path> matching = new ArrayList<>();
        try (Stream<Path> sandboxes = Files.list(root)) {
            sandboxes.filter(path -> path.getFileName().toString().startsWith(prefix)).forEach(matching::add);
        } catch (IOException nothingYet) {
            return 0;
        }
        int removed = 0;
        for (Path sandbox : matching) {
            String name = sandbox.getFileName().toString();
            DISPOSED.add(name);
            RUNNING.getOrDefault(name, Set.of()).forEach(Thread::interrupt);
            PROCESSES.getOrDefault(name, Set.of()).forEach(AgentProcess::killForDisposal);
            try {
                TreeRemoval.remove(sandbox, TreeRemoval.Mode.GUEST_MAY_RUN, TreeRemoval.DEFAULT_DEADLINE);
                removed++;
            } catch (IOException e) {
                throw new SandboxException("backend '" + NAME + "' could not remove a sandbox: " + e.getMessage(), e);
            }
        }
        return removed;
    }

    private final class AgentTestSandbox implements ConfinedFilesSandbox {

        private final String name;
        private final String workDir;
        private final AgentFiles files;

        AgentTestSandbox(String name, String workDir, AgentFiles files) {
            this.name = name;
            this.workDir = workDir;
            this.files = files;
        }

        @Override
        public Optional<String> relocatedWorkDir() {
            return Optional.of(workDir);
        }

        @Override
        public ConfinedFiles<?> files() {
            return files;
        }

        @Override
        public SandboxProcess start(Command command, ProcessOptions options) {
            if (!interactive) {
                return ConfinedFilesSandbox.super.start(command, options);
            }
            if (DISPOSED.contains(name)) {
                throw new SandboxDisposed("backend '" + NAME + "': the sandbox was disposed of");
            }
            Map<String, String> environment = new LinkedHashMap<>(GuestEnvironment.WITH_SYSTEM_PATH);
            environment.putAll(options.environment());
            AgentProcess process = AgentProcess.launch(connection, GuestCommands.argv(command),
                    options.workingDirectory(), environment, options, command.toShellLine(), name,
                    () -> DISPOSED.contains(name));
            Set<AgentProcess> running = PROCESSES.computeIfAbsent(name, nobody -> ConcurrentHashMap.newKeySet());
            running.add(process);
            process.handle().whenEnded(() -> running.remove(process));
            return process.handle();
        }

        @Override
        public ExecResult exec(Command command, ExecOptions options) {
            Set<Thread> running = RUNNING.computeIfAbsent(name, nobody -> ConcurrentHashMap.newKeySet());
            running.add(Thread.currentThread());
            try {
                return GuestCommands.run(connection, command, options);
            } catch (SandboxInterrupted interrupted) {
                if (DISPOSED.contains(name)) {
                    // The disposal interrupted this thread, not the caller: the caller hears of the disposal.
                    Thread.interrupted();
                    throw new SandboxDisposed("backend '" + NAME + "': the sandbox was disposed of while "
                            + command.toShellLine() + " ran; acquire again for a fresh one");
                }
                throw interrupted;
            } finally {
                running.remove(Thread.currentThread());
            }
        }
    }
}
