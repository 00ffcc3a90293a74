package org.sandbox4j.testkit.tck;

import org.junit.jupiter.api.Assumptions;

/**
 * Plants fixtures in a guest and checks what is there, independently of the file methods under
 * test. Every path is an absolute guest path; nothing here follows a link unless it says so.
 */
public interface GuestSide {

    /** Writes a regular file, creating parent directories. */
    void plantFile(String absolutePath, byte[] content);

    /** Creates a symbolic link at {@code absolutePath} pointing to {@code target}, creating parents. */
    void plantSymlink(String absolutePath, String target);

    /** Creates a directory and its parents. */
    void plantDirectory(String absolutePath);

    /** Whether anything is there, a dangling link included. */
    boolean exists(String absolutePath);

    /** Whether a regular file is there (a link to one is not). */
    boolean isRegularFile(String absolutePath);

    /** Whether a directory is there (a link to one is not). */
    boolean isDirectory(String absolutePath);

    /** Whether a symbolic link is there. */
    boolean isSymlink(String absolutePath);

    /** The bytes of the regular file there; fails for anything else. */
    byte[] read(String absolutePath);

    /**
     * The bytes a guest program would read at {@code absolutePath} <em>following</em> links: it
     * proves a planted link really leads where a probe says, so the refusal probes attack a real
     * escape. A guest side whose links lead nowhere aborts (the probe is then skipped, with the
     * reason), which is what this default does.
     */
    default byte[] readThroughLinks(String absolutePath) {
        return Assumptions.abort("this guest side cannot read through a link (" + getClass().getSimpleName()
                + " does not implement readThroughLinks)");
    }

    /**
     * Gives the entry at {@code absolutePath} (never a link's target) the permission bits {@code mode}
     * and the modification time {@code modified} (whole seconds), as a guest's {@code chmod} and
     * {@code touch} would: the probes of what a listing says of an entry compare with it. A guest side
     * that cannot aborts (the probe is then skipped, with the reason), which is what this default does.
     */
    default void stamp(String absolutePath, int mode, java.time.Instant modified) {
        Assumptions.abort("this guest side cannot set a mode and a time (" + getClass().getSimpleName()
                + " does not implement stamp)");
    }
}
