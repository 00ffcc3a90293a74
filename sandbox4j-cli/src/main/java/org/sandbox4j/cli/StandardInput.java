package org.sandbox4j.cli;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;

import org.sandbox4j.core.HostCeilings;

/** Standard input read whole, bounded: what a program is fed, or the program itself. */
final class StandardInput {

    /** The most read: what one call may hold in this JVM, as every buffered guest byte. */
    static final long MAX_BYTES = HostCeilings.MAX_BUFFERED_BYTES;

    private static final int CHUNK_BYTES = 64 * 1024;

    private StandardInput() {
    }

    /** What standard input holds, or nothing when it is a terminal (a person would have to type it). */
    static byte[] unlessTerminal() {
        return Terminal.isTerminal(Terminal.STDIN) ? new byte[0] : read(System.in);
    }

    /**
     * @throws CliFailure a usage failure past {@link #MAX_BYTES} (naming the fix) or when it cannot be read
     */
    static byte[] read(InputStream in) {
        ByteArrayOutputStream held = new ByteArrayOutputStream();
        byte[] chunk = new byte[CHUNK_BYTES];
        try {
            for (int n = in.read(chunk); n >= 0; n = in.read(chunk)) {
                if (held.size() + (long) n > MAX_BYTES) {
                    throw CliFailure.usage("standard input holds more than " + Sizes.describe(MAX_BYTES) + ", the most "
                            + "sandbox4j passes on; share a large input as a file instead (--file NAME=PATH)");
                }
                held.write(chunk, 0, n);
            }
        } catch (IOException e) {
            throw CliFailure.usage("cannot read standard input: " + e.getMessage());
        }
        return held.toByteArray();
    }
}
