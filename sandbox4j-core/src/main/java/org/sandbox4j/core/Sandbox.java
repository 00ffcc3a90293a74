package org.sandbox4j.core;

import org.sandbox4j.core.spi.GuestPaths;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * A running sandbox, handed out by {@link SandboxBackend#acquire}. Thread-safe: concurrent tool
 * calls of one conversation share it.
 *
 * <h2>Paths</h2>
 * Every path-taking method takes the working directory explicitly (no sandbox knows its spec's
 * work dir, and {@code acquire} does not create it). Paths are POSIX, relative to the working
 * directory; an absolute path inside it is accepted; a backslash is refused. Confinement is a
 * duty of all five file methods and is not a string check: the implementation confines the path
 * with {@link GuestPaths#confine}, then walks every directory from {@code /} down to the parent of
 * the path with an <em>unconfined, no-follow</em> stat through
 * {@link GuestPaths#refuseSymlinkedParents} (or {@link GuestPaths#confineWritePath} for writes).
 * A link anywhere on that chain is an escape: {@link SandboxPathNotConfined}. A plain file on it
 * is not: {@link SandboxNotADirectory}.
 *
 * <h2>Limits and bad input</h2>
 * Every {@link #writeFile} and {@link #readFile} is one file held, before a byte moves, to the
 * per-file cap of the spec the sandbox was acquired with ({@link SandboxSpec#filesIn()},
 * {@link SandboxSpec#filesOut()}); a batch of files (execute_code's {@code files}, declared
 * outputs) is held to all three legs by whoever sends it. No read and no listing holds more than
 * {@link HostCeilings} allows, whatever the caller asks; past a cap the call is refused whole with
 * {@link SandboxTransferCapExceeded}, never truncated. A path or working directory that is null,
 * holds a NUL, a backslash or a lone surrogate is refused as {@link SandboxPathNotConfined}; other
 * bad arguments (null content, a negative {@code maxBytes}) as {@link IllegalArgumentException}.
 * A sandbox disposed of before or during a call — by this process or another — ends it with
 * {@link SandboxDisposed}, never with an exit code a kill left.
 *
 * <h2>Capabilities</h2>
 * {@link #writeFile} ({@link Capability#FILES_IN}) and {@link #exec} ({@link Capability#EXEC}) are
 * obligatory. {@link #stat} and {@link #readFile} are the pull surface
 * ({@link Capability#FILES_OUT}), {@link #listDir} is {@link Capability#FILES_LIST},
 * {@link #remove} is {@link Capability#FILES_DELETE}. Code runs through {@link #exec} (an
 * interpreter, as the {@code execute_code} kind does). A sandbox whose backend does not declare one of these may throw
 * {@link SandboxOperationNotSupported} from it, which is what the default methods do.
 */
public interface Sandbox {

    /**
     * Writes {@code content} verbatim, creating parent directories; a second write replaces the
     * first (no append). A missing component ends the ancestor walk, so nothing created can be a
     * link. The write lands in a temporary file renamed into place where the guest allows it.
     *
     * @throws SandboxPathNotConfined   outside the working directory, through a linked parent, onto
     *                                  a link, a backslash, or the working directory itself
     * @throws SandboxNotADirectory     a parent is a file or other non-directory
     * @throws SandboxIsADirectory      the path names a directory
     */
    void writeFile(String path, byte[] content, String workingDirectory);

    /**
     * Makes the directory {@code path} and its missing parents ({@code mkdir -p}); an existing
     * directory is success. Confined and walked as {@link #writeFile} is; nothing made can be a link.
     * Part of {@link Capability#FILES_IN}.
     *
     * @throws SandboxPathNotConfined outside the working directory, through a linked parent, or onto a link
     * @throws SandboxNotADirectory   the path or a parent is a file or other non-directory
     */
    default void mkdir(String path, String workingDirectory) {
        throw notDeclared(Capability.FILES_IN, "mkdir");
    }

    /** Writes {@code content} as UTF-8, whatever the host's locale. */
    default void writeFile(String path, String content, String workingDirectory) {
        writeFile(path, content == null ? null : content.getBytes(StandardCharsets.UTF_8), workingDirectory);
    }

    /**
     * Runs {@code command} in {@code options.workingDirectory()} and returns separate stdout and
     * stderr and the real exit code. An {@link Command.Argv} is never interpreted by a shell.
     *
     * @throws SandboxTimeoutException          only when the caller's {@code options.timeout()}
     *                                          expired; the whole process tree has been killed
     * @throws SandboxExecOutputLimitExceeded   output beyond {@code options.outputCapBytes()}; the
     *                                          command has been killed
     * @throws SandboxInterrupted               the calling thread was interrupted; the command was killed
     */
    ExecResult exec(Command command, ExecOptions options);

    /** Runs an argv command in {@code workingDirectory}, bounded by {@code timeout}. */
    default ExecResult exec(List<String> argv, String workingDirectory, Duration timeout) {
        return exec(Command.argv(argv), ExecOptions.in(workingDirectory, timeout));
    }

    /**
     * Where this sandbox really keeps the spec's work dir, when that is not the spec's own path.
     * Every backend whose guest has a file system of its own presents the spec's work dir as is
     * and returns empty (this default). A backend whose guest shares the host's file system (an
     * {@code os_process} backend) cannot: two sandboxes cannot both own one host path, so it gives
     * each sandbox a directory of its own and returns that absolute path here. Hosts and kinds pass
     * {@link SandboxSpec#workDirIn(Sandbox)}, never the spec's work dir alone, to file methods and exec.
     */
    default Optional<String> relocatedWorkDir() {
        return Optional.empty();
    }

    /**
     * Describes the final component without following it (a link comes back as
     * {@link EntryKind#SYMLINK} with no size); parents are walked.
     *
     * @return empty when nothing is there
     * @throws SandboxPathNotConfined an escape
     * @throws SandboxNotADirectory  a parent is not a directory
     */
    default Optional<SandboxEntry> stat(String path, String workingDirectory) {
        throw notDeclared(Capability.FILES_OUT, "stat");
    }

    /**
     * Reads a regular file. {@code maxBytes} is a refusal, never a truncation.
     *
     * @throws SandboxTransferCapExceeded the file is larger than {@code maxBytes}
     * @throws SandboxNotARegularFile     a link, device, socket or FIFO
     * @throws SandboxIsADirectory        a directory
     * @throws SandboxFileNotFound        nothing there
     * @throws SandboxPathNotConfined     an escape
     * @throws SandboxNotADirectory       a parent is not a directory
     */
    default byte[] readFile(String path, String workingDirectory, long maxBytes) {
        throw notDeclared(Capability.FILES_OUT, "readFile");
    }

    /**
     * Lists the immediate children of a directory, sorted by name, each as {@link #stat} would
     * describe it (links listed as links, never hidden). The walk includes the listed directory
     * itself: a linked directory is refused.
     *
     * @throws SandboxPathNotConfined the directory or an ancestor is a link, or outside
     * @throws SandboxNotADirectory  it or a parent is not a directory
     * @throws SandboxFileNotFound   nothing there
     */
    default List<SandboxEntry> listDir(String path, String workingDirectory) {
        throw notDeclared(Capability.FILES_LIST, "listDir");
    }

    /**
     * Lists the tree under a directory down to {@code depth} levels ({@code 1}: what {@link
     * #listDir(String, String)} lists), sorted by path, each entry as {@link #stat} describes it.
     * Only real directories are entered: a link is listed as a link and never followed. The whole
     * listing holds at most {@link HostCeilings#MAX_LISTED_ENTRIES} entries; past it, it is refused
     * whole. A directory the guest swaps for a link while it is listed refuses the listing.
     *
     * @throws IllegalArgumentException  {@code depth} below 1 or above {@link #MAX_LISTING_DEPTH}
     * @throws SandboxTransferCapExceeded more entries than one listing holds
     * @throws SandboxPathNotConfined    the directory or an ancestor is a link, or outside
     * @throws SandboxNotADirectory     it or a parent is not a directory
     * @throws SandboxFileNotFound      nothing there
     */
    default List<SandboxEntry> listDir(String path, String workingDirectory, int depth) {
        if (depth < 1 || depth > MAX_LISTING_DEPTH) {
            throw new IllegalArgumentException("a listing's depth is from 1 to " + MAX_LISTING_DEPTH + ", not " + depth);
        }
        return TreeListing.list(this, path, workingDirectory, depth);
    }

    /** The deepest listing {@link #listDir(String, String, int)} walks. */
    int MAX_LISTING_DEPTH = 64;

    /**
     * Removes a path. A missing path is success. A link is unlinked, never followed, including
     * links inside a recursive removal. A directory, even an empty one, needs {@code recursive}.
     *
     * @throws SandboxPathNotConfined outside, through a linked parent, or the working directory itself
     * @throws SandboxFileException   a directory without {@code recursive}, or the guest refused
     */
    default void remove(String path, String workingDirectory, boolean recursive) {
        throw notDeclared(Capability.FILES_DELETE, "remove");
    }

    /**
     * Starts {@code command} and returns a handle on it as soon as the backend knows the command
     * itself started (a launcher that failed, e.g. on a missing working directory, is refused here,
     * never reported as an exit code). The handle owns the process: write its stdin, read its output
     * (at most one window per stream is ever held in this JVM; a guest that writes more waits), wait
     * for it, signal it, kill it. It ends with everything it started when its leader exits, when its
     * lifetime passes, when it is killed or closed, or when the sandbox is disposed of. Part of
     * {@link Capability#INTERACTIVE_EXEC}.
     *
     * @throws SandboxOperationNotSupported the backend does not declare {@code interactive_exec} (this default)
     * @throws SandboxFileNotFound          the working directory is missing; nothing ran
     * @throws SandboxNotADirectory         the working directory is not a directory; nothing ran
     * @throws SandboxProcessLimitExceeded  this sandbox already runs {@link HostCeilings#MAX_PROCESSES_PER_SANDBOX}
     *                                      started processes (or their windows would pass the host's bound)
     * @throws SandboxDisposed              the sandbox was disposed of
     * @throws SandboxException             the launcher, engine or service failed; nothing runs
     */
    default SandboxProcess start(Command command, ProcessOptions options) {
        throw notDeclared(Capability.INTERACTIVE_EXEC, "start");
    }

    private static SandboxOperationNotSupported notDeclared(Capability capability, String method) {
        return new SandboxOperationNotSupported("this sandbox does not implement " + method + " (its backend does not "
                + "declare '" + capability.wire() + "'); use a backend that declares it");
    }
}
