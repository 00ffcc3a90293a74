package org.sandbox4j.core;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.List;
import org.sandbox4j.core.spi.FileRefusals;

/**
 * {@link Sandbox#listDir(String, String, int)} for every backend: breadth first over
 * {@link Sandbox#listDir(String, String)}, which confines and walks each directory it lists, so a
 * directory entered is never a link. Bounded by {@link HostCeilings#MAX_LISTED_ENTRIES} in all.
 */
final class TreeListing {

    private TreeListing() {
    }

    static List<SandboxEntry> list(Sandbox sandbox, String path, String workingDirectory, int depth) {
        List<SandboxEntry> listed = new ArrayList<>();
        Deque<Level> pending = new ArrayDeque<>();
        pending.add(new Level(path, 1));
        while (!pending.isEmpty()) {
            Level level = pending.removeFirst();
            for (SandboxEntry entry : sandbox.listDir(level.path(), workingDirectory)) {
                if (listed.size() >= HostCeilings.MAX_LISTED_ENTRIES) {
                    throw FileRefusals.listingTooLarge(path);
                }
                listed.add(entry);
                if (entry.kind() == EntryKind.DIRECTORY && level.depth() < depth) {
                    pending.addLast(new Level(entry.path(), level.depth() + 1));
                }
            }
        }
        // Entry paths are relative to the working directory, so they name what was listed whatever path was given.
        listed.sort(Comparator.comparing(SandboxEntry::path, TreeListing::byComponents));
        return List.copyOf(listed);
    }

    /** A directory's children right after it: "a/b" before "a-c", as a walk would give them. */
    private static int byComponents(String left, String right) {
        String[] a = left.split("/", -1);
        String[] b = right.split("/", -1);
        for (int i = 0; i < Math.min(a.length, b.length); i++) {
            int order = a[i].compareTo(b[i]);
            if (order != 0) {
                return order;
            }
        }
        return Integer.compare(a.length, b.length);
    }

    private record Level(String path, int depth) {
    }
}
