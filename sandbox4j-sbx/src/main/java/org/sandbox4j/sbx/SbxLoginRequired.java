package org.sandbox4j.sbx;

import org.sandbox4j.core.SandboxException;

/** The sbx login lapsed: every sbx command but version fails until a person signs in again (sbx login). */
public final class SbxLoginRequired extends SandboxException {

    private static final long serialVersionUID = 1L;

    public SbxLoginRequired(String message) {
        super(message);
    }
}
