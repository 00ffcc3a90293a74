package org.sandbox4j.aca;

import org.sandbox4j.core.SandboxException;

/**
 * The ACA service refused or failed a request after the backend's retries. The message is fixed
 * and safe to show a model (it names the operation and where to look); the status code and the
 * service's own words go to the log only.
 */
public final class AcaServiceException extends SandboxException {

    private static final long serialVersionUID = 1L;

    private final int status;

    AcaServiceException(String message, int status) {
        super(message);
        this.status = status;
    }

    AcaServiceException(String message, Throwable cause) {
        super(message, cause);
        this.status = 0;
    }

    /** The HTTP status the service answered with; 0 when no answer came (a transport failure). */
    public int status() {
        return status;
    }
}
