package org.sandbox4j.core;

/**
 * A guest path names a link, device, socket or FIFO where only a regular file is ever read.
 */
public class SandboxNotARegularFile extends SandboxFileException {

    private static final long serialVersionUID = 1L;

    public SandboxNotARegularFile(String message) {
        super(message);
    }

    public SandboxNotARegularFile(String message, Throwable cause) {
        super(message, cause);
    }
}
