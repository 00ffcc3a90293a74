package org.sandbox4j.core;

import java.util.List;

/**
 * Which names of a {@link FileStore} a tool may put into a command. This is the
 * injection-pinning boundary: only a name in this listing may be substituted into a command.
 */
@FunctionalInterface
public interface FileListing {

    /** Every name in the store. */
    FileListing ALL = FileStore::listNames;

    /** Nothing: the tool shares no files. */
    FileListing NONE = store -> List.of();

    List<String> list(FileStore store);
}
