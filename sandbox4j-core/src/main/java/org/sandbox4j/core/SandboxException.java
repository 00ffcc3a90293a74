package org.sandbox4j.core;

import org.sandbox4j.core.spi.ErrorDetail;

/**
 * The root of every exception sandbox4j throws. Unchecked: a refusal is a configuration or policy
 * fact, not a recoverable I/O condition. Each refusal has its own subtype and a message that names
 * the fix. Messages never carry provider detail (status codes, response bodies): that goes to the
 * log through {@link ErrorDetail}.
 */
public class SandboxException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public SandboxException(String message) {
        super(message);
    }

    public SandboxException(String message, Throwable cause) {
        super(message, cause);
    }
}
