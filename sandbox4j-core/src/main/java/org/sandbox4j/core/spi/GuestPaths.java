package org.sandbox4j.core.spi;

import org.sandbox4j.core.EntryKind;
import org.sandbox4j.core.SandboxIsADirectory;
import org.sandbox4j.core.SandboxNotADirectory;
import org.sandbox4j.core.SandboxPathNotConfined;
import org.sandbox4j.core.SandboxSpec;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

/**
 * Guest-path arithmetic and confinement: the one implementation every backend calls. The grammar
 * is POSIX (never the host's path API): {@code /} separates, a backslash is refused outright, and
 * normalisation collapses {@code .}, {@code ..}, repeated and trailing slashes. Use it for guest
 * paths only; a host path is never confined with it.
 *
 * <p>Containment is decided on normalised paths against {@code base + "/"}, so a prefix-sharing
 * sibling ({@code /work-outside} next to {@code /work}) is outside. The string check alone is not
 * confinement: backends also walk every ancestor with a no-follow stat
 * ({@link #refuseSymlinkedParents}), because {@code out -> /etc} makes {@code out/hostname} look
 * like an ordinary path.
 */
public final class GuestPaths {

    /** A guest's own system directories, which a workspace is never bound over or under. */
    public static final List<String> SYSTEM_DIRECTORIES = List.of("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64",
            "/libx32", "/etc", "/proc", "/dev", "/tmp", "/var/tmp", "/run", "/sys");

    private static final String ROOT = "/";

    private GuestPaths() {
    }

    /**
     * POSIX normalisation: {@code "a/./b/../c//"} becomes {@code "a/c"}; {@code ".."} above the
     * root stays at the root; a relative path keeps its leading {@code ".."}; the empty path is
     * {@code "."}.
     */
    public static String normalize(String path) {
        if (path.isEmpty()) {
            return ".";
        }
        boolean absolute = path.startsWith(ROOT);
        Deque<String> parts = new ArrayDeque<>();
        for (String part : path.split("/", -1)) {
            if (part.isEmpty() || part.equals(".")) {
                continue;
            }
            if (part.equals("..")) {
                if (!parts.isEmpty() && !parts.peekLast().equals("..")) {
                    parts.removeLast();
                } else if (!absolute) {
                    parts.addLast(part);
                }
                continue;
            }
            parts.addLast(part);
        }
        String joined = String.join("/", parts);
        if (absolute) {
            return ROOT + joined;
        }
        return joined.isEmpty() ? "." : joined;
    }

    /**
     * The part of {@code path} below {@code base}, both normalised: {@code ""} when they are
     * equal, empty when {@code path} is not inside {@code base}.
     */
    public static Optional<String> relativeTo(String path, String base) {
        String normalPath = normalize(path);
        String normalBase = normalize(base);
        if (normalPath.equals(normalBase)) {
            return Optional.of("");
        }
        String prefix = normalBase.endsWith("/") ? normalBase : normalBase + "/";
        if (normalPath.startsWith(prefix)) {
            return Optional.of(normalPath.substring(prefix.length()));
        }
        return Optional.empty();
    }

    /**
     * Confines {@code path} (relative to, or absolute inside, {@code workingDirectory}) and returns
     * it as a normalised absolute path. {@code "."} and {@code ""} are the working directory itself;
     * {@code ".."} is allowed where it lands inside.
     *
     * @throws SandboxPathNotConfined for a backslash, a NUL, a relative working directory, or a
     *                                path that resolves outside the working directory
     */
    public static String confine(String path, String workingDirectory) {
        refuseUnrepresentable(path, "path");
        refuseUnrepresentable(workingDirectory, "working directory");
        if (!workingDirectory.startsWith(ROOT)) {
            throw new SandboxPathNotConfined("the working directory " + GuestText.quote(workingDirectory)
                    + " is not absolute; pass an absolute guest directory");
        }
        String base = normalize(workingDirectory);
        String joined = path.startsWith(ROOT) ? normalize(path) : normalize(base + "/" + path);
        if (relativeTo(joined, base).isEmpty()) {
            throw new SandboxPathNotConfined(GuestText.quote(path) + " resolves outside the working directory "
                    + GuestText.quote(base));
        }
        return joined;
    }

    /**
     * Every directory from the root down to {@code absolutePath} itself, root excluded:
     * {@code /a/b} gives {@code [/a, /a/b]}; {@code /} gives nothing.
     */
    public static List<String> directoryChain(String absolutePath) {
        String normal = normalize(absolutePath);
        if (!normal.startsWith(ROOT)) {
            throw new IllegalArgumentException("the directory chain needs an absolute path, not " + GuestText.quote(absolutePath));
        }
        List<String> chain = new ArrayList<>();
        int next = normal.indexOf('/', 1);
        while (next > 0) {
            chain.add(normal.substring(0, next));
            next = normal.indexOf('/', next + 1);
        }
        if (!normal.equals(ROOT)) {
            chain.add(normal);
        }
        return chain;
    }

    /**
     * The chain a walk covers for {@code guestPath} under {@code workingDirectory}: first the
     * working directory's own ancestors and itself, then each component below it.
     *
     * @throws SandboxPathNotConfined when {@code guestPath} does not confine
     */
    public static List<String> directoryChain(String guestPath, String workingDirectory) {
        return directoryChain(confine(guestPath, workingDirectory));
    }

    /** The parent of a normalised absolute path; the root is its own parent. */
    public static String parent(String absolutePath) {
        String normal = normalize(absolutePath);
        int slash = normal.lastIndexOf('/');
        return slash <= 0 ? ROOT : normal.substring(0, slash);
    }

    /** The last component of a normalised path; empty for the root. */
    public static String fileName(String path) {
        String normal = normalize(path);
        return normal.substring(normal.lastIndexOf('/') + 1);
    }

    /**
     * The shared ancestor walk. Confines {@code guestPath}, then stats every directory from the
     * root down to its parent (or to itself, with {@code includeSelf}) using the backend's
     * unconfined no-follow {@code stat}. A missing component ends the walk without a refusal: the
     * caller decides what "not found" means.
     *
     * @return the confined absolute path
     * @throws SandboxPathNotConfined a component is a link (an escape), or the path does not confine
     * @throws SandboxNotADirectory  a component is a file or other non-directory (not an attack)
     */
    public static String refuseSymlinkedParents(
            NoFollowStat stat, String guestPath, String workingDirectory, boolean includeSelf) {
        String confined = confine(guestPath, workingDirectory);
        String last = includeSelf ? confined : parent(confined);
        for (String directory : directoryChain(last)) {
            Optional<EntryKind> kind = stat.kindOf(directory);
            if (kind.isEmpty()) {
                return confined;
            }
            switch (kind.get()) {
                case DIRECTORY:
                    break;
                case SYMLINK:
                    throw new SandboxPathNotConfined(GuestText.quote(directory) + " is a link rather than a real directory; "
                            + "a path through a link is refused");
                default:
                    throw new SandboxNotADirectory(GuestText.quote(directory) + " is not a directory");
            }
        }
        return confined;
    }

    /**
     * Confinement for a write: confines, refuses the working directory itself, walks the parents,
     * and refuses a leaf that is a link (it would be followed) or a directory.
     *
     * @return the confined absolute path to write
     * @throws SandboxPathNotConfined see above
     * @throws SandboxNotADirectory  a parent is not a directory
     * @throws SandboxIsADirectory   the leaf is a directory
     */
    /**
     * Confinement for a removal, before any walk: confines, and refuses the working directory
     * itself (removing it would take the sandbox's whole work area, and every backend refuses it
     * the same way, in the same order).
     *
     * @return the confined absolute path to remove
     * @throws SandboxPathNotConfined the path does not confine, or names the working directory
     */
    public static String confineRemovalPath(String path, String workingDirectory) {
        String confined = confine(path, workingDirectory);
        refuseWorkingDirectoryItself(confined, path, workingDirectory, "remove",
                "remove the entries inside it instead");
        return confined;
    }

    private static void refuseWorkingDirectoryItself(String confined, String path, String workingDirectory,
            String action, String fix) {
        if (confined.equals(normalize(workingDirectory))) {
            throw new SandboxPathNotConfined(GuestText.quote(path) + " names the working directory itself; refusing to "
                    + action + " the working directory: " + fix);
        }
    }

    public static String confineWritePath(NoFollowStat stat, String path, String workingDirectory) {
        String confined = confine(path, workingDirectory);
        refuseWorkingDirectoryItself(confined, path, workingDirectory, "write over", "write to a path inside it");
        refuseSymlinkedParents(stat, confined, workingDirectory, false);
        Optional<EntryKind> leaf = stat.kindOf(confined);
        if (leaf.isPresent() && leaf.get() == EntryKind.SYMLINK) {
            throw new SandboxPathNotConfined(GuestText.quote(path) + " is a link; a write never follows a link");
        }
        if (leaf.isPresent() && leaf.get() == EntryKind.DIRECTORY) {
            throw new SandboxIsADirectory(GuestText.quote(path) + " is a directory; a write needs a file path");
        }
        return confined;
    }

    /**
     * The spec's work dir, normalised, once it is an absolute POSIX path: the one check every
     * backend makes of it first.
     *
     * @throws IllegalArgumentException naming the backend and a work dir that would do
     */
    public static String absoluteWorkDir(String backendName, String workDir) {
        if (workDir == null || !workDir.startsWith("/") || workDir.indexOf('\\') >= 0) {
            throw new IllegalArgumentException("backend '" + backendName + "' needs an absolute POSIX work dir, not "
                    + (workDir == null ? "null" : GuestText.quote(workDir)) + "; use one such as "
                    + SandboxSpec.DEFAULT_WORK_DIR);
        }
        return normalize(workDir);
    }

    /**
     * The spec's work dir, normalised, for a backend that binds its workspace at the work dir's
     * parent: that parent must not be the root, nor overlap any of the guest's own directories.
     *
     * @param reserved guest directories the workspace may never be bound over or under
     * @throws IllegalArgumentException naming the backend and a work dir that would do
     */
    public static String workDirWithItsOwnParent(String backendName, String workDir, Collection<String> reserved) {
        String normalized = absoluteWorkDir(backendName, workDir);
        String parent = parent(normalized);
        if (parent.equals("/")) {
            throw new IllegalArgumentException("backend '" + backendName + "' binds the workspace at the work dir's "
                    + "parent, and " + GuestText.quote(normalized) + " has the root as its parent; use a work dir two "
                    + "levels deep, such as " + SandboxSpec.DEFAULT_WORK_DIR);
        }
        for (String own : reserved) {
            if (parent.equals(own) || parent.startsWith(own + "/") || own.startsWith(parent + "/")) {
                throw new IllegalArgumentException("backend '" + backendName + "' cannot bind the workspace at "
                        + GuestText.quote(parent) + " (the parent of work dir " + GuestText.quote(normalized) + "): it "
                        + "overlaps the guest's own " + own + "; choose a work dir such as "
                        + SandboxSpec.DEFAULT_WORK_DIR);
            }
        }
        return normalized;
    }

    private static void refuseUnrepresentable(String text, String what) {
        if (text == null) {
            throw new SandboxPathNotConfined("no " + what + " was given (null); pass a guest path");
        }
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            boolean paired = Character.isHighSurrogate(c) && i + 1 < text.length()
                    && Character.isLowSurrogate(text.charAt(i + 1));
            if (paired) {
                i++;
            } else if (Character.isSurrogate(c)) {
                throw new SandboxPathNotConfined("the " + what + " " + GuestText.quote(text) + " is not valid Unicode "
                        + "(a lone surrogate), so no file system can name it");
            }
        }
        if (text.indexOf('\\') >= 0) {
            throw new SandboxPathNotConfined("the " + what + " " + GuestText.quote(text) + " contains a backslash; guest "
                    + "paths use '/' only");
        }
        if (text.indexOf('\0') >= 0) {
            throw new SandboxPathNotConfined("the " + what + " contains a NUL character");
        }
    }
}
