package org.sandbox4j.core;

/**
 * What a guest path names, as a no-follow stat sees it. Only {@link #FILE} is ever read.
 * {@link #SYMLINK} and {@link #OTHER} are kept apart so an escape attempt (a link) can be told
 * from an ordinary "not a directory".
 */
public enum EntryKind implements WireValue {
    /** A regular file. */
    FILE,
    /** A directory. */
    DIRECTORY,
    /** A symbolic link, or a Windows junction or reparse point. Never followed. */
    SYMLINK,
    /** A device, socket or FIFO, or a link the backend cannot recognise. */
    OTHER;

    public static EntryKind parse(String value) {
        return WireValue.parse(EntryKind.class, value);
    }
}
