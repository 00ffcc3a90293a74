package org.sandbox4j.bench;

import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.TransferLimits;

/** The spec {@link SideBySide}'s sandboxes share: the defaults, with room for its 16 MiB files each way. */
final class BenchSpec {

    private static final long MAX_FILE_BYTES = 32L * 1024 * 1024;
    private static final long MAX_TOTAL_BYTES = 64L * 1024 * 1024;
    private static final TransferLimits FILES = new TransferLimits(MAX_FILE_BYTES, MAX_TOTAL_BYTES,
            TransferLimits.DEFAULT_MAX_FILES);

    static final SandboxSpec SPEC = SandboxSpec.builder("bench").filesIn(FILES).filesOut(FILES).build();

    private BenchSpec() {
    }
}
