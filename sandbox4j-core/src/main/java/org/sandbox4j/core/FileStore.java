package org.sandbox4j.core;

import java.util.List;
import java.util.Optional;

/** The host's own store of files a conversation can share with a sandbox (uploads, prior artifacts). */
public interface FileStore {

    /** Every name in the store, as the store spells it. */
    List<String> listNames();

    /** The content under {@code name}, or empty when there is none. */
    Optional<byte[]> read(String name);
}
