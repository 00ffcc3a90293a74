package org.sandbox4j.core;

import org.sandbox4j.core.spi.ErrorDetail;

/**
 * The root of every exception sandbox4j throws. Unchecked: a refusal is a configuration or policy
 * fact, not a recoverable I/O condition. Each refusal has its own subtype and a message that names
 * the fix. Messages never carry provider detail (status codes, response bodies): that goes to the
 * log through {@link ErrorDetail}.
 *
 * <h2>The hierarchy</h2>
 * Six families, each a thing a caller can act on:
 * <ul>
 *   <li><b>Refused before anything ran</b> (configuration or policy; change the spec, the host's
 *       policy or the backend): {@link SandboxPolicyRefusal} (floor, backend, capability, identity,
 *       egress, transfer limits not permitted) and {@link SandboxUnsupportedRefusal} (capability or
 *       OS family no backend serves), {@link SandboxNoBackendCanServe},
 *       {@link SandboxOperationNotSupported}, {@link SandboxImageNotUsable},
 *       {@link SandboxThreadContextMissing}.</li>
 *   <li><b>A path</b>: {@link SandboxPathNotConfined} (an escape, a link on the way) and
 *       {@link SandboxFileException} with what was found instead ({@link SandboxFileNotFound},
 *       {@link SandboxIsADirectory}, {@link SandboxNotADirectory}, {@link SandboxNotARegularFile});
 *       an exec whose working directory is missing or a file throws these too, never an exit
 *       code.</li>
 *   <li><b>A bound</b>: {@link SandboxTimeoutException}, {@link SandboxExecOutputLimitExceeded},
 *       and for transfers and outputs {@link SandboxTransferCapExceeded}.</li>
 *   <li><b>Declared outputs</b>: {@link SandboxOutputException} and its subtypes (missing, not
 *       confined, not regular, name invalid or colliding, landing failed).</li>
 *   <li><b>The call's own end</b>: {@link SandboxInterrupted} (the caller's thread) and
 *       {@link SandboxDisposed} (the sandbox went away under the call).</li>
 *   <li><b>Anything else</b> is a plain {@code SandboxException} naming the backend: the provider
 *       or the host failed (a launcher, an engine, a service), with the detail in the log.</li>
 * </ul>
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
