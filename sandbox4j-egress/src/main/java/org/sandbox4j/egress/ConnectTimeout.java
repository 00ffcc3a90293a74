package org.sandbox4j.egress;

import java.io.IOException;

/** A connect to a destination took longer than the proxy's connect timeout. */
final class ConnectTimeout extends IOException {

    private static final long serialVersionUID = 1L;

    ConnectTimeout(String message) {
        super(message);
    }
}
