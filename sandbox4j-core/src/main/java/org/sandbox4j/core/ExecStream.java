package org.sandbox4j.core;

/** Which output stream a chunk came from. */
public enum ExecStream {
    STDOUT,
    STDERR
}
