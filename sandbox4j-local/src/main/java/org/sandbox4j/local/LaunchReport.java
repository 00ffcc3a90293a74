package org.sandbox4j.local;

import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.Channels;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.UUID;
import org.sandbox4j.core.spi.ErrorDetail;

/**
 * The file one launch reports to (bwrap's {@code --json-status-fd}, or the process backend's
 * trampoline), in the sandbox's host directory, which no guest of a namespaced backend sees. It
 * tells whether the command itself started, out of band of anything the command prints or the
 * code it exits with. Read once the launch has exited, then removed.
 */
final class LaunchReport implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(LaunchReport.class.getName());
    static final String DIRECTORY = "launch-reports";
    /** bwrap writes two short JSON lines; more is not a report. */
    private static final int MAX_BYTES = 4096;

    private final Path file;

    private LaunchReport(Path file) {
        this.file = file;
    }

    /**
     * A fresh, not yet written report under {@code sandboxDirectory}.
     *
     * @throws NoSuchFileException when the sandbox's directory is gone (it was disposed of)
     */
    static LaunchReport in(Path sandboxDirectory) throws IOException {
        Path directory = sandboxDirectory.resolve(DIRECTORY);
        try {
            // Never createDirectories: that would make a retired sandbox's directory again.
            Files.createDirectory(directory);
        } catch (FileAlreadyExistsException made) {
            // Made by an earlier launch.
        }
        return new LaunchReport(directory.resolve(UUID.randomUUID().toString()));
    }

    Path file() {
        return file;
    }

    /**
     * What the launch wrote (at most {@value #MAX_BYTES} bytes); empty when it wrote nothing or
     * something else is there. A process-backend guest shares the host's file system and may swap
     * a FIFO in for its report: opened for reading and writing, a FIFO opens at once, and the seek
     * it cannot do refuses it before any read could wait for a writer.
     */
    String read() {
        try (SeekableByteChannel channel = Files.newByteChannel(file, StandardOpenOption.READ,
                StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS);
                InputStream in = Channels.newInputStream(channel)) {
            channel.position();
            return new String(in.readNBytes(MAX_BYTES), StandardCharsets.UTF_8);
        } catch (NoSuchFileException none) {
            return "";
        } catch (IOException e) {
            LOG.log(System.Logger.Level.WARNING, () -> "could not read the launch report " + file + ": "
                    + ErrorDetail.of(e));
            return "";
        }
    }

    /** Removes the report, as a launch's record is removed: quietly when the sandbox was retired meanwhile. */
    @Override
    public void close() {
        new Launches.Registration(file).close();
    }
}
