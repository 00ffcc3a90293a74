package org.sandbox4j.microvm;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.UserPrincipal;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.spi.ErrorDetail;
import org.sandbox4j.core.spi.GuestPaths;
import org.sandbox4j.core.spi.Json;
import org.sandbox4j.core.spi.ProcessPump;

/**
 * Snapshots of a booted, idle guest, one per launch (everything on QEMU's command line but the
 * sandbox's own directory, and the guest files' sizes and modification times), under
 * {@code <stateRoot>/snapshots/<digest>.vmstate}. A snapshot is QEMU's migration stream of a
 * template guest, taken while it runs (a guest migrated while paused would be restored paused);
 * it is written under a temporary name and renamed whole, so a crash never leaves half of one, and
 * every backend instance and process on the state root reuses it.
 *
 * <p>Every guest restored from one snapshot starts with the same random pool: {@link MicroVm#restore}
 * reseeds it before anything runs.
 */
final class GuestSnapshots {

    static final String DIRECTORY = "snapshots";
    static final String SUFFIX = ".vmstate";
    static final String PARTIAL = ".partial-";
    private static final Duration STALE_PARTIAL = Duration.ofHours(1);
    /** The work dir every snapshot's template makes: the default one, normalised. */
    static final String WORK_DIR = GuestPaths.normalize(SandboxSpec.DEFAULT_WORK_DIR);
    /** Java listens here, in the template's QEMU directory, and QEMU migrates into it. */
    static final String MIGRATION_SOCKET = "migrate.sock";
    /** The stream holds guest RAM (zero pages compressed) plus device state: well under RAM plus this. */
    private static final long SLACK_BYTES = 64L << 20;
    /** QEMU throttles migration to 32 MiB/s unless told otherwise. */
    private static final long MAX_BANDWIDTH = 10L << 30;
    private static final Duration POLL = Duration.ofMillis(20);
    private static final SecureRandom RANDOM = new SecureRandom();

    private final Path directory;

    GuestSnapshots(Path stateRoot) {
        this.directory = stateRoot.resolve(DIRECTORY);
    }

    /** Where the snapshot of {@code launch} is, or would be. */
    Path fileFor(QemuLaunch launch) {
        MessageDigest sha256;
        try {
            sha256 = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
        // QEMU's argv in a fixed directory: the sandbox's own paths and user are not in the snapshot.
        for (String word : launch.in(Path.of("/"), Optional.empty()).qemuArgv()) {
            sha256.update(word.getBytes(StandardCharsets.UTF_8));
            sha256.update((byte) 0);
        }
        // A snapshot restores only into the QEMU that made it: another version refuses its stream.
        for (Path file : List.of(launch.qemu(), launch.guest().kernel(), launch.guest().initrd(),
                launch.guest().root())) {
            sha256.update(fingerprint(file).getBytes(StandardCharsets.UTF_8));
            sha256.update((byte) 0);
        }
        return directory.resolve(HexFormat.of().formatHex(sha256.digest(), 0, 16) + SUFFIX);
    }

    /** The most bytes a snapshot of {@code launch} may hold: a longer one is not QEMU's. */
    static long maxBytes(QemuLaunch launch) {
        return ((long) launch.memoryMib() << 20) + SLACK_BYTES;
    }

    /** The snapshot of {@code launch} when one is there: a regular file (not a link) of a plausible size. */
    Optional<Path> existing(QemuLaunch launch) {
        Path file = fileFor(launch);
        try {
            BasicFileAttributes attributes = Files.readAttributes(file, BasicFileAttributes.class,
                    LinkOption.NOFOLLOW_LINKS);
            return attributes.isRegularFile() && attributes.size() > 0 && attributes.size() <= maxBytes(launch)
                    ? Optional.of(file) : Optional.empty();
        } catch (IOException absent) {
            return Optional.empty();
        }
    }

    /**
     * Removes what a crashed maker left: partial files older than any make takes (seconds), so one
     * another process is writing now is kept.
     */
    void removeStalePartials() {
        Instant before = Instant.now().minus(STALE_PARTIAL);
        try (Stream<Path> files = Files.list(directory)) {
            files.filter(file -> file.getFileName().toString().contains(PARTIAL))
                    .filter(file -> modifiedBefore(file, before))
                    .forEach(this::discard);
        } catch (IOException noneYet) {
            // No snapshot directory: nothing was ever left here.
        }
    }

    private static boolean modifiedBefore(Path file, Instant instant) {
        try {
            return Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS)
                    .lastModifiedTime().toInstant().isBefore(instant);
        } catch (IOException gone) {
            return false;
        }
    }

    /** Removes a snapshot that failed to restore, so the next acquire makes it again. */
    void discard(Path snapshot) {
        try {
            Files.deleteIfExists(snapshot);
        } catch (IOException e) {
            // The next make replaces it by rename all the same.
        }
    }

    /**
     * Boots {@code template} (a launch in its own, empty directory), migrates it into the snapshot
     * file of its launch and kills it.
     *
     * @return the snapshot
     * @throws SandboxException the template did not boot, or QEMU did not complete the migration in time
     */
    Path make(QemuLaunch template, Duration deadline, String backendName) {
        long until = System.nanoTime() + deadline.toNanos();
        Path target = fileFor(template);
        Path partial = directory.resolve(target.getFileName() + PARTIAL
                + HexFormat.of().formatHex(randomBytes()));
        try (MicroVm vm = MicroVm.bootTemplate(template, deadline, backendName)) {
            warmUp(vm, deadline, backendName);
            // Only this host user reads snapshots (QEMU is streamed them): a guest's memory is nobody else's.
            Files.createDirectories(directory, PosixFilePermissions.asFileAttribute(
                    PosixFilePermissions.fromString("rwx------")));
            migrate(template, vm.process(), partial, until);
            Files.move(partial, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            return target;
        } catch (IOException e) {
            throw new SandboxException("backend '" + backendName + "' could not snapshot a guest into " + target
                    + ": " + ErrorDetail.of(e), e);
        } finally {
            discard(partial);
        }
    }

    /**
     * Makes the default work dir, as every acquire does first: a restored guest then finds it made,
     * and the programs that made it are in the snapshot's page cache.
     */
    private static void warmUp(MicroVm vm, Duration deadline, String backendName) {
        MicroVmSandbox.makeWorkDir(vm.agent(), WORK_DIR, deadline, backendName);
    }

    private static void migrate(QemuLaunch template, ProcessHandle qemu, Path partial, long until)
            throws IOException {
        Path socket = template.qemuDirectory().resolve(MIGRATION_SOCKET);
        UserPrincipal qemuUser = QemuSockets.serverOf(socket);
        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
                QemuSockets.Guard serverDeadline = QemuSockets.closeAt(until, server)) {
            server.bind(UnixDomainSocketAddress.of(socket));
            if (template.runAs().isPresent()) {
                // QEMU connects as that user, and connecting takes write permission on the socket.
                Files.setAttribute(socket, "unix:uid", template.runAs().get().uid());
                Files.setAttribute(socket, "unix:gid", template.runAs().get().gid());
            }
            CompletableFuture<Long> copied = CompletableFuture.supplyAsync(() -> receive(server, qemuUser, socket,
                    partial, maxBytes(template)), task -> ProcessPump.daemon("snapshot stream", task).start());
            try (QemuMonitor monitor = QemuMonitor.connect(template.monitorSocket(), qemu, until);
                    QemuSockets.Guard monitorDeadline = QemuSockets.closeAt(until, monitor)) {
                monitor.execute("migrate-set-parameters", "{\"max-bandwidth\":" + MAX_BANDWIDTH + "}");
                monitor.execute("migrate", "{\"uri\":" + Json.quote("unix:" + socket) + "}");
                awaitCompletion(monitor, until);
            }
            long left = Math.max(until - System.nanoTime(), 0);
            copied.get(left, TimeUnit.NANOSECONDS);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause() instanceof UncheckedIOException unchecked ? unchecked.getCause()
                    : e.getCause();
            throw cause instanceof IOException io ? io : new IOException(ErrorDetail.of(cause), cause);
        } catch (TimeoutException e) {
            throw new IOException("the migration stream did not end in time", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while snapshotting the guest", e);
        }
    }

    private static void awaitCompletion(QemuMonitor monitor, long until) throws IOException {
        while (true) {
            Object status = monitor.execute("query-migrate", null) instanceof Map<?, ?> reply ? reply.get("status")
                    : null;
            if ("completed".equals(status)) {
                return;
            }
            if ("failed".equals(status) || "cancelled".equals(status)) {
                throw new IOException("QEMU's migration " + status);
            }
            if (System.nanoTime() - until > 0) {
                throw new IOException("QEMU's migration did not complete in time (last status " + status + ")");
            }
            try {
                Thread.sleep(POLL.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while snapshotting the guest", e);
            }
        }
    }

    /**
     * Accepts one connection, stops listening, and copies it into {@code partial}, at most
     * {@code maxBytes}. Only QEMU's user may connect (the socket and its directory are that user's),
     * and a connection from anyone else is refused: the template's migration then never completes,
     * and no snapshot is made of what came in.
     */
    private static long receive(ServerSocketChannel server, UserPrincipal qemuUser, Path socket, Path partial,
            long maxBytes) {
        try (SocketChannel channel = QemuSockets.requirePeer(acceptOne(server), qemuUser, socket);
                FileChannel out = FileChannel.open(partial, StandardOpenOption.CREATE_NEW,
                        StandardOpenOption.WRITE)) {
            ByteBuffer buffer = ByteBuffer.allocate(1 << 16);
            long total = 0;
            while (channel.read(buffer.clear()) >= 0) {
                total += buffer.position();
                if (total > maxBytes) {
                    throw new IOException("QEMU's migration stream exceeds " + maxBytes + " bytes");
                }
                buffer.flip();
                while (buffer.hasRemaining()) {
                    out.write(buffer);
                }
            }
            // Durable before the rename makes it the snapshot: a crash leaves the old name or a whole file.
            out.force(true);
            return total;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static SocketChannel acceptOne(ServerSocketChannel server) throws IOException {
        SocketChannel channel = server.accept();
        server.close();
        return channel;
    }

    private static String fingerprint(Path file) {
        try {
            BasicFileAttributes attributes = Files.readAttributes(file, BasicFileAttributes.class);
            return file + ":" + attributes.size() + ":" + attributes.lastModifiedTime().toMillis();
        } catch (IOException e) {
            return file + ":unreadable";
        }
    }

    private static byte[] randomBytes() {
        byte[] bytes = new byte[6];
        RANDOM.nextBytes(bytes);
        return bytes;
    }
}
