package org.sandbox4j.core;

import java.util.List;

/**
 * Optional for a {@link SandboxBackend}: lists and disposes of sandboxes by scope, or by
 * conversation, from the provider's own record (a state directory, labels, names), never from
 * this process's memory, so a command-line tool or a second replica sees what any process made.
 * A backend that implements it says so by implementing it; callers test with {@code instanceof}.
 */
public interface SandboxInventory {

    /**
     * The sandboxes the provider's record holds for {@code query}, oldest first where known.
     *
     * @throws SandboxException when the record cannot be read at all
     */
    List<SandboxListing> list(SandboxQuery query);

    /**
     * Deletes every sandbox {@link #list} would return, however it was made. Best effort: never
     * throws.
     *
     * @return how many were deleted
     */
    int dispose(SandboxQuery query);
}
