package org.sandbox4j.testkit.tck;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import org.sandbox4j.core.spi.GuestPaths;

/**
 * The layout every file probe shares, under one suite run's working directory. {@link #outside()}
 * is a prefix-sharing sibling ({@code <work>-outside}), so a string-prefix containment check
 * would wrongly admit it.
 *
 * @param work the normalised working directory
 */
public record ConformancePaths(String work) {

    /** The read cap probes pass to {@code readFile}. */
    public static final long READ_CAP = 1024 * 1024;

    /** What the guest must never reach. */
    public static final byte[] SECRET = "the guest must not reach this\n".getBytes(StandardCharsets.UTF_8);

    /** A legitimate output inside the working directory. */
    public static final byte[] INSIDE = "a legitimate output\n".getBytes(StandardCharsets.UTF_8);

    /** A file that sits where a directory is expected. */
    public static final byte[] PLAIN = "not a directory\n".getBytes(StandardCharsets.UTF_8);

    /** UTF-8 text followed by bytes 1..127: survives only a byte-exact transport. */
    public static final byte[] BINARY_PAYLOAD = binaryPayload();

    public ConformancePaths {
        work = GuestPaths.normalize(work);
    }

    public static ConformancePaths under(String workingDirectory) {
        return new ConformancePaths(workingDirectory);
    }

    /** {@code <work>-outside}: a sibling sharing the working directory's name as a prefix. */
    public String outside() {
        return work + "-outside";
    }

    /** The path from the working directory to {@code outside/name}, e.g. {@code ../work-outside/name}. */
    public String beyond(String name) {
        return "../" + GuestPaths.fileName(outside()) + "/" + name;
    }

    public String secret() {
        return outside() + "/secret.txt";
    }

    public String nestedSecret() {
        return outside() + "/sub/leaf.txt";
    }

    public String inside() {
        return work + "/real/inside.txt";
    }

    public String plain() {
        return work + "/plain.txt";
    }

    /** {@code link-dir -> outside}. */
    public String linkedDirectory() {
        return work + "/link-dir";
    }

    public String underLinkedDirectory() {
        return work + "/link-dir/sub";
    }

    /** {@code link-file -> secret}. */
    public String linkedFile() {
        return work + "/link-file";
    }

    /** {@code work/name}. */
    public String in(String name) {
        return work + "/" + name;
    }

    private static byte[] binaryPayload() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        bytes.writeBytes("ünïcödé→payload".getBytes(StandardCharsets.UTF_8));
        for (int b = 1; b <= 127; b++) {
            bytes.write(b);
        }
        return bytes.toByteArray();
    }
}
