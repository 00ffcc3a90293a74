package org.sandbox4j.core;

/**
 * An artifact's landing name would leave the sink's root, or would land on a link. The message names no host path.
 */
public class SandboxLandingNotConfined extends SandboxOutputException {

    private static final long serialVersionUID = 1L;

    public SandboxLandingNotConfined(String message) {
        super(message);
    }

    public SandboxLandingNotConfined(String message, Throwable cause) {
        super(message, cause);
    }
}
