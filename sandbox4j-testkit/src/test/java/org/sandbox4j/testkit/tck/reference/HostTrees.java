package org.sandbox4j.testkit.tck.reference;

import java.io.IOException;
import java.nio.file.FileVisitOption;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.EnumSet;
import java.util.Set;

/** Recursive deletion of a host directory tree. */
final class HostTrees {

    private HostTrees() {
    }

    /**
     * Deletes {@code root} and everything under it; a missing root is success. Without
     * {@code followLinks} a link inside is deleted as a link (the walk never enters it); with it
     * (only the {@link NamespaceShellBackend.Flaw#FOLLOWS_SYMLINKS} flaw) the walk enters linked
     * directories and deletes what they hold.
     */
    static void deleteRecursively(Path root, boolean followLinks) throws IOException {
        Set<FileVisitOption> options = followLinks ? EnumSet.of(FileVisitOption.FOLLOW_LINKS)
                : EnumSet.noneOf(FileVisitOption.class);
        try {
            Files.walkFileTree(root, options, Integer.MAX_VALUE, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attributes) throws IOException {
                    Files.deleteIfExists(file);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult postVisitDirectory(Path directory, IOException failure) throws IOException {
                    if (failure != null) {
                        throw failure;
                    }
                    Files.deleteIfExists(directory);
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (NoSuchFileException e) {
            if (e.getFile() != null && Path.of(e.getFile()).equals(root)) {
                return;
            }
            throw e;
        }
    }
}
