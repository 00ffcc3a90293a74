package org.sandbox4j.core;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Several backends are registered and none passes every check for a spec. Each backend's own
 * refusal is kept, in registration order: in {@link #refusals()}, as a suppressed exception, and
 * as one line of the message. Nothing was substituted and nothing ran.
 */
public class SandboxNoBackendCanServe extends SandboxException {

    private static final long serialVersionUID = 1L;

    private final transient Map<String, SandboxException> refusals;

    /** @param refusals each backend's name and its refusal, in registration order */
    public SandboxNoBackendCanServe(String message, Map<String, SandboxException> refusals) {
        super(message);
        this.refusals = Collections.unmodifiableMap(new LinkedHashMap<>(refusals));
        this.refusals.values().forEach(this::addSuppressed);
    }

    /** Each backend's name and its own refusal, in registration order. */
    public Map<String, SandboxException> refusals() {
        return refusals;
    }
}
