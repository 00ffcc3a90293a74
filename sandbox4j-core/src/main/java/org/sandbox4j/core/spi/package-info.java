/**
 * The backend-author kit: what only someone writing a {@link org.sandbox4j.core.SandboxBackend}
 * needs. An application never imports from here; the root package is its vocabulary.
 *
 * <p>Each rule a backend must keep is implemented once here, and every backend uses it: guest-path
 * confinement and the working-directory refusals ({@link org.sandbox4j.core.spi.GuestPaths}), the
 * exec refusals' sentences ({@link org.sandbox4j.core.spi.ExecRefusals}), one exec's output under
 * its one cap, read into blocks the result keeps without a copy ({@link org.sandbox4j.core.spi.ExecCapture},
 * {@link org.sandbox4j.core.spi.CapturedBytes}, {@link org.sandbox4j.core.spi.ProcessPump}), per-key locks
 * ({@link org.sandbox4j.core.spi.KeyedLocks}), host-side tree deletion that never follows a
 * guest's link ({@link org.sandbox4j.core.spi.TreeRemoval}), host calls under a deadline
 * ({@link org.sandbox4j.core.spi.HostCalls}), quoting what a guest chose into a message
 * ({@link org.sandbox4j.core.spi.GuestText}), and a host directory as a sandbox's files
 * ({@link org.sandbox4j.core.spi.WorkspaceFiles}). {@code sandbox4j-testkit/TCK.md} § Writing a
 * backend walks through them.
 */
package org.sandbox4j.core.spi;
