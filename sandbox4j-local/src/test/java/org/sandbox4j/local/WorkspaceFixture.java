package org.sandbox4j.local;

import org.sandbox4j.core.spi.WorkspaceFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * TEST ONLY: a host layout for {@link WorkspaceFiles}. The workspace is bound at
 * {@value #MOUNT_POINT}; the working directory {@value #WORK} is {@code <workspace>/work}. Outside
 * the workspace, {@code <temp>/outside} holds the secrets. Links are planted with <em>host</em>
 * targets, so following one on the host really reaches outside.
 */
final class WorkspaceFixture {

    static final String MOUNT_POINT = "/sandbox4j";
    static final String WORK = MOUNT_POINT + "/work";
    static final byte[] SECRET = utf8("the host must not reach this\n");
    static final byte[] INSIDE = utf8("a legitimate file\n");

    final Path temp;
    final Path workspace;
    final Path work;
    final Path outside;
    final WorkspaceFiles files;

    private WorkspaceFixture(Path temp) throws IOException {
        this.temp = temp.toRealPath();
        this.workspace = Files.createDirectory(this.temp.resolve("workspace"));
        this.work = Files.createDirectory(workspace.resolve("work"));
        this.outside = Files.createDirectory(this.temp.resolve("outside"));
        this.files = new WorkspaceFiles(workspace, MOUNT_POINT, "test");
    }

    /**
     * <pre>
     * outside/secret.txt, outside/sub/leaf.txt
     * workspace/work-outside/secret.txt          (the prefix-sharing sibling, inside the mount)
     * workspace/linked-root -> outside           (a linked ancestor for working directories)
     * work/real/inside.txt, work/plain.txt, work/dir/keeps.txt, work/empty/
     * work/link-dir -> outside, work/link-file -> outside/secret.txt,
     * work/dangling -> outside/nothing-here, work/relative-up -> ../../outside, work/fifo
     * </pre>
     */
    static WorkspaceFixture create(Path temp) {
        try {
            WorkspaceFixture fixture = new WorkspaceFixture(temp);
            fixture.plant();
            return fixture;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void plant() throws IOException {
        Files.write(outside.resolve("secret.txt"), SECRET);
        Files.createDirectories(outside.resolve("sub"));
        Files.write(outside.resolve("sub/leaf.txt"), SECRET);
        Files.createDirectories(workspace.resolve("work-outside"));
        Files.write(workspace.resolve("work-outside/secret.txt"), SECRET);
        Files.createSymbolicLink(workspace.resolve("linked-root"), outside);
        Files.createDirectories(work.resolve("real"));
        Files.write(work.resolve("real/inside.txt"), INSIDE);
        Files.write(work.resolve("plain.txt"), INSIDE);
        Files.createDirectories(work.resolve("dir"));
        Files.write(work.resolve("dir/keeps.txt"), INSIDE);
        Files.createDirectories(work.resolve("empty"));
        Files.createSymbolicLink(work.resolve("link-dir"), outside);
        Files.createSymbolicLink(work.resolve("link-file"), outside.resolve("secret.txt"));
        Files.createSymbolicLink(work.resolve("dangling"), outside.resolve("nothing-here"));
        Files.createSymbolicLink(work.resolve("relative-up"), Path.of("../../outside"));
        mkfifo(work.resolve("fifo"));
    }

    private static void mkfifo(Path path) throws IOException {
        try {
            Process process = new ProcessBuilder("mkfifo", path.toString()).inheritIO().start();
            if (process.waitFor() != 0) {
                throw new IOException("mkfifo failed");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
    }

    /**
     * Every entry under the temporary directory, described without following links (a FIFO is
     * never opened): equal snapshots mean nothing was written, created or deleted anywhere.
     */
    Map<String, String> snapshot() {
        Map<String, String> entries = new TreeMap<>();
        try (Stream<Path> walk = Files.walk(temp)) {
            walk.forEach(path -> entries.put(temp.relativize(path).toString(), describe(path)));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return entries;
    }

    /** Every entry under {@code outside}, as {@link #snapshot()} describes it. */
    Map<String, String> outsideSnapshot() {
        Map<String, String> all = snapshot();
        all.keySet().removeIf(name -> !name.equals("outside") && !name.startsWith("outside/"));
        return all;
    }

    private static String describe(Path path) {
        try {
            BasicFileAttributes attributes = Files.readAttributes(path, BasicFileAttributes.class,
                    LinkOption.NOFOLLOW_LINKS);
            if (attributes.isSymbolicLink()) {
                return "link -> " + Files.readSymbolicLink(path);
            }
            if (attributes.isDirectory()) {
                return "directory";
            }
            if (attributes.isRegularFile()) {
                return "file " + Arrays.toString(Files.readAllBytes(path));
            }
            return "other";
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
