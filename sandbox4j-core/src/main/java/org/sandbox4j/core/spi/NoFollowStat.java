package org.sandbox4j.core.spi;

import org.sandbox4j.core.EntryKind;
import java.util.Optional;

/**
 * A backend's own stat for the ancestor walk: <em>unconfined</em> (it can look above the working
 * directory, up to {@code /}) and <em>no-follow</em> (an {@code lstat}: a link is reported as
 * {@link EntryKind#SYMLINK}, never as what it points to).
 */
@FunctionalInterface
public interface NoFollowStat {

    /**
     * @param absoluteGuestPath a normalised absolute guest path
     * @return what is there, or empty when nothing is
     */
    Optional<EntryKind> kindOf(String absoluteGuestPath);
}
