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
 * sandbox's own directory and user, and the sizes and modification times of QEMU and the guest's
 * files), under {@code <stateRoot>/snapshots/<digest>}: the guest's memory ({@value #MEMORY_SUFFIX})
 * and its device state ({@value #SUFFIX}). The template guest runs on a memory file it shares, so
 * its memory is that file; its migration, taken while it runs (a guest migrated while paused would
 * be restored paused), leaves that memory out ({@code x-ignore-shared}) and is only the device
 * state, some 100 KB. A restored guest maps the memory file privately and read-only, so a restore
 * reads no memory at all: pages come from the host's page cache as the guest touches them, shared
 * by every guest restored from the snapshot until one writes its own copy (the way Kata Containers'
 * VM templating and Firecracker's snapshots work). That takes QEMU 8.2 or later ({@link #unsupported}).
 * Both files are written under temporary names and renamed whole (the memory first, the state last),
 * so a crash never leaves half of a snapshot, and every backend instance and process on the state
 * root reuses it.
 *
 * <p>Every guest restored from one snapshot starts with the same random pool: {@link MicroVm#restore}
 * reseeds it before anything runs.
 */
final class GuestSnapshots {

    static final String DIRECTORY = "snapshots";
    static final String SUFFIX = ".vmstate";
    static final String MEMORY_SUFFIX = ".ram";
    /** The template's memory file, in its QEMU directory while it runs. */
    static final String TEMPLATE_MEMORY = "memory.ram";
    /** Migration leaves out memory the destination maps from the same file. */
    static final String IGNORE_SHARED = "{\"capabilities\":[{\"capability\":\"x-ignore-shared\",\"state\":true}]}";
    /** The first QEMU whose file memory can be opened read-only and mapped privately ({@code rom=off}). */
    static final int[] FIRST_QEMU = {8, 2};
    private static final java.util.regex.Pattern QEMU_VERSION = java.util.regex.Pattern.compile(
            "QEMU emulator version (\\d+)\\.(\\d+)");
    private static final Duration VERSION_TIMEOUT = Duration.ofSeconds(10);
    static final String PARTIAL = ".partial-";
    private static final Duration STALE_PARTIAL = Duration.ofHours(1);
    /** The work dir every snapshot's template makes: the default one, normalised. */
    static final String WORK_DIR = GuestPaths.normalize(SandboxSpec.DEFAULT_WORK_DIR);
    /** Java listens here, in the template's QEMU directory, and QEMU migrates into it. */
    static final String MIGRATION_SOCKET = "migrate.sock";
    /** The device state is some 100 KB: anything past this is not QEMU's. */
    private static final long MAX_STATE_BYTES = 64L << 20;
    /** QEMU throttles migration to 32 MiB/s unless told otherwise. */
    private static final long MAX_BANDWIDTH = 10L << 30;
    private static final Duration POLL = Duration.ofMillis(20);
    private static final SecureRandom RANDOM = new SecureRandom();

    /** A snapshot: the guest's memory, and its device state (the migration stream without the memory). */
    record Snapshot(Path state, Path memory) {
    }

    private final Path directory;
    /** The group every guest's QEMU runs in, which may read snapshots' memory; empty when QEMU runs as this user. */
    private final Optional<Integer> guestGroup;

    GuestSnapshots(Path stateRoot, Optional<Integer> guestGroup) {
        this.directory = stateRoot.resolve(DIRECTORY);
        this.guestGroup = guestGroup;
    }

    /**
     * Why {@code qemu} cannot restore snapshots, or empty when it can (8.2 or later); asked once per
     * backend, with {@code -version}.
     */
    static Optional<String> unsupported(Path qemu) {
        String said;
        try {
            Process process = new ProcessBuilder(qemu.toString(), "-version").redirectErrorStream(true).start();
            process.getOutputStream().close();
            CompletableFuture<byte[]> output = CompletableFuture.supplyAsync(() -> {
                try {
                    return process.getInputStream().readNBytes(4096);
                } catch (IOException e) {
                    return new byte[0];
                }
            }, task -> ProcessPump.daemon("qemu -version", task).start());
            if (!process.waitFor(VERSION_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                return Optional.of(qemu + " -version did not answer within " + VERSION_TIMEOUT.toSeconds() + " s");
            }
            said = new String(output.get(VERSION_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS), StandardCharsets.UTF_8);
        } catch (IOException | ExecutionException | TimeoutException e) {
            return Optional.of(qemu + " -version failed (" + ErrorDetail.of(e) + ")");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.of("interrupted while asking " + qemu + " its version");
        }
        java.util.regex.Matcher version = QEMU_VERSION.matcher(said);
        if (!version.find()) {
            return Optional.of(qemu + " -version did not say its version");
        }
        int major = Integer.parseInt(version.group(1));
        int minor = Integer.parseInt(version.group(2));
        if (major > FIRST_QEMU[0] || (major == FIRST_QEMU[0] && minor >= FIRST_QEMU[1])) {
            return Optional.empty();
        }
        return Optional.of("QEMU " + major + "." + minor + " cannot map a snapshot's memory read-only (" + FIRST_QEMU[0]
                + "." + FIRST_QEMU[1] + " and later can; on Debian 12: apt-get install -t bookworm-backports "
                + "qemu-system-x86)");
    }

    /** Where the snapshot of {@code launch} is, or would be: its state file, beside which its memory is. */
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

    private static Path memoryOf(Path state) {
        String name = state.getFileName().toString();
        return state.resolveSibling(name.substring(0, name.length() - SUFFIX.length()) + MEMORY_SUFFIX);
    }

    private static long memoryBytes(QemuLaunch launch) {
        return (long) launch.memoryMib() << 20;
    }

    /**
     * The snapshot of {@code launch} when one is there: two regular files (not links), the state of
     * a plausible size and the memory exactly the guest's.
     */
    Optional<Snapshot> existing(QemuLaunch launch) {
        Path state = fileFor(launch);
        Path memory = memoryOf(state);
        return sizeOf(state).filter(size -> size > 0 && size <= MAX_STATE_BYTES).isPresent()
                && sizeOf(memory).filter(size -> size == memoryBytes(launch)).isPresent()
                ? Optional.of(new Snapshot(state, memory)) : Optional.empty();
    }

    private static Optional<Long> sizeOf(Path file) {
        try {
            BasicFileAttributes attributes = Files.readAttributes(file, BasicFileAttributes.class,
                    LinkOption.NOFOLLOW_LINKS);
            return attributes.isRegularFile() ? Optional.of(attributes.size()) : Optional.empty();
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
    void discard(Snapshot snapshot) {
        discard(snapshot.state());
        discard(snapshot.memory());
    }

    private void discard(Path file) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            // The next make replaces it by rename all the same.
        }
    }

    /**
     * Boots {@code template} (a launch in its own, empty directory) on a memory file, migrates its
     * device state into the snapshot's state file, kills it and takes its memory file as the
     * snapshot's memory.
     *
     * @return the snapshot
     * @throws SandboxException the template did not boot, or QEMU did not complete the migration in time
     */
    Snapshot make(QemuLaunch template, Duration deadline, String backendName) {
        long until = System.nanoTime() + deadline.toNanos();
        Path state = fileFor(template);
        Path memory = memoryOf(state);
        String suffix = PARTIAL + HexFormat.of().formatHex(randomBytes());
        Path partialState = directory.resolve(state.getFileName() + suffix);
        Path partialMemory = directory.resolve(memory.getFileName() + suffix);
        Path templateMemory = template.qemuDirectory().resolve(TEMPLATE_MEMORY);
        try {
            makeDirectory();
            try (MicroVm vm = MicroVm.bootTemplate(template, templateMemory, deadline, backendName)) {
                warmUp(vm, deadline, backendName);
                migrate(template, vm.process(), partialState, until);
            }
            takeMemory(templateMemory, partialMemory, memoryBytes(template));
            Files.move(partialMemory, memory, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            Files.move(partialState, state, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            return new Snapshot(state, memory);
        } catch (IOException e) {
            throw new SandboxException("backend '" + backendName + "' could not snapshot a guest into " + state
                    + ": " + ErrorDetail.of(e), e);
        } finally {
            discard(partialState);
            discard(partialMemory);
        }
    }

    /**
     * The snapshot directory: this user's; where QEMU runs as guests' own uids, their group may
     * enter it, to open a snapshot's memory (read-only), and nothing more.
     */
    private void makeDirectory() throws IOException {
        Files.createDirectories(directory, PosixFilePermissions.asFileAttribute(
                PosixFilePermissions.fromString("rwx------")));
        if (guestGroup.isPresent()) {
            Files.setAttribute(directory, "unix:gid", guestGroup.get(), LinkOption.NOFOLLOW_LINKS);
            Files.setPosixFilePermissions(directory, PosixFilePermissions.fromString("rwxr-x---"));
        }
    }

    /**
     * Moves the template's memory file, once its QEMU is gone, out of the directory that QEMU could
     * write into the snapshot directory, as this user's: it must be a regular file of the guest's
     * size with no other link to it (so nothing the template's user kept can reach it afterwards),
     * and it is made durable before it is named a snapshot's. Guests' group may read it; nobody
     * else, and no one but this user may write it.
     */
    private void takeMemory(Path templateMemory, Path partialMemory, long bytes) throws IOException {
        Object links = Files.getAttribute(templateMemory, "unix:nlink", LinkOption.NOFOLLOW_LINKS);
        if (sizeOf(templateMemory).filter(size -> size == bytes).isEmpty() || !Integer.valueOf(1).equals(links)) {
            throw new IOException("the template's memory file " + templateMemory + " is not a regular file of "
                    + bytes + " bytes with one link");
        }
        Files.move(templateMemory, partialMemory, StandardCopyOption.ATOMIC_MOVE);
        Files.setAttribute(partialMemory, "unix:uid", Files.getAttribute(directory, "unix:uid"),
                LinkOption.NOFOLLOW_LINKS);
        Files.setAttribute(partialMemory, "unix:gid", guestGroup.orElse(
                (Integer) Files.getAttribute(directory, "unix:gid")), LinkOption.NOFOLLOW_LINKS);
        Files.setPosixFilePermissions(partialMemory, PosixFilePermissions.fromString(
                guestGroup.isPresent() ? "rw-r-----" : "rw-------"));
        try (FileChannel channel = FileChannel.open(partialMemory, StandardOpenOption.WRITE,
                LinkOption.NOFOLLOW_LINKS)) {
            channel.force(true);
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
                    partial, MAX_STATE_BYTES), task -> ProcessPump.daemon("snapshot stream", task).start());
            try (QemuMonitor monitor = QemuMonitor.connect(template.monitorSocket(), qemu, until);
                    QemuSockets.Guard monitorDeadline = QemuSockets.closeAt(until, monitor)) {
                monitor.execute("migrate-set-capabilities", IGNORE_SHARED);
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
