package org.sandbox4j.sbx;

import org.sandbox4j.core.SandboxException;

/** The sbx daemon lost its sandbox engine: sbx ls answers nothing and every other command fails until sbx daemon restart. */
public final class SbxDaemonFault extends SandboxException {

    private static final long serialVersionUID = 1L;

    public SbxDaemonFault(String message) {
        super(message);
    }
}
