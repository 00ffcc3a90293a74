package org.sandbox4j.local;

import org.sandbox4j.core.SandboxException;

/**
 * The spec names an image (or image id) this local backend cannot run: a local backend runs the
 * host's own /usr, or the root file system the host gave it under a name, and nothing else.
 */
public final class SandboxImageNotUsable extends SandboxException {

    private static final long serialVersionUID = 1L;

    public SandboxImageNotUsable(String message) {
        super(message);
    }
}
