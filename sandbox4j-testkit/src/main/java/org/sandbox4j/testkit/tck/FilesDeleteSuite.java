package org.sandbox4j.testkit.tck;

import static org.sandbox4j.testkit.tck.FileProbes.CONTROL;
import static org.sandbox4j.testkit.tck.FileProbes.absent;
import static org.sandbox4j.testkit.tck.FileProbes.holds;
import static org.sandbox4j.testkit.tck.FileProbes.utf8;

import java.util.List;
import org.sandbox4j.core.Capability;
import org.sandbox4j.core.spi.GuestPaths;
import org.sandbox4j.core.SandboxFileException;
import org.sandbox4j.core.SandboxFileNotFound;
import org.sandbox4j.core.SandboxPathNotConfined;

/**
 * FILES_DELETE: {@code remove} removes exactly what it names inside the working directory: a link
 * is unlinked, never followed (also inside a recursive removal), a directory needs
 * {@code recursive}, a missing path is success, and the working directory, anything outside it and
 * anything through a linked parent are refused. Each probe plants its own fixtures through the
 * {@link GuestSide} under names no other probe uses, and checks the result there. Refusals that
 * accept both flag values are tried with both.
 *
 * <p>For a backend that implements {@code remove} without declaring it, run this suite with
 * {@link Conformance#measure}: no gate, no verdict, every probe's result.
 */
public final class FilesDeleteSuite {

    /** The suite's stable name. */
    public static final String NAME = "FILES_DELETE";

    private static final List<Boolean> BOTH_FLAGS = List.of(false, true);
    private static final byte[] TARGET = utf8("a target outside the working directory\n");

    private FilesDeleteSuite() {
    }

    public static Suite suite() {
        return Suite.files(NAME, Capability.FILES_DELETE)
                .probes(
                        Probe.of("a-removal-removes",
                                "a removal removes the file it names, and only that file",
                                FilesDeleteSuite::aRemovalRemoves),
                        Probe.of("a-missing-path-is-success",
                                "removal is idempotent: removing what is already gone succeeds",
                                FilesDeleteSuite::aMissingPathIsSuccess),
                        Probe.of("a-link-is-removed-never-followed",
                                "removing a link must unlink it; following it deletes whatever it names",
                                FilesDeleteSuite::aLinkIsRemovedNeverFollowed),
                        Probe.of("a-linked-directory-is-unlinked-not-emptied",
                                "a recursive removal of a link to a directory must unlink it, not empty the directory",
                                FilesDeleteSuite::aLinkedDirectoryIsUnlinkedNotEmptied),
                        Probe.of("a-path-through-a-linked-parent-is-refused",
                                "a removal through a linked parent (out -> /etc) deletes outside the working directory",
                                FilesDeleteSuite::aPathThroughALinkedParentIsRefused),
                        Probe.of("a-directory-needs-recursive",
                                "a directory is removed only when recursive is asked for",
                                FilesDeleteSuite::aDirectoryNeedsRecursive),
                        Probe.of("an-empty-directory-needs-recursive",
                                "even an empty directory needs recursive; with it, it is removed",
                                FilesDeleteSuite::anEmptyDirectoryNeedsRecursive),
                        Probe.of("recursive-removes-the-tree",
                                "a recursive removal removes the whole tree and nothing next to it",
                                FilesDeleteSuite::recursiveRemovesTheTree),
                        Probe.of("a-prefix-sharing-sibling-survives",
                                "removing 'pair' must leave 'pair-sibling' alone: a string-prefix match is not a child",
                                FilesDeleteSuite::aPrefixSharingSiblingSurvives),
                        Probe.of("a-link-inside-a-recursive-removal-is-unlinked-not-followed",
                                "a link inside a removed tree is unlinked; following it deletes outside the tree",
                                FilesDeleteSuite::aLinkInsideARecursiveRemovalIsUnlinkedNotFollowed),
                        Probe.of("the-working-directory-is-refused",
                                "removing the working directory itself would destroy the workspace",
                                FilesDeleteSuite::theWorkingDirectoryIsRefused),
                        Probe.of("a-path-outside-is-refused",
                                "a path climbing into the prefix-sharing sibling, relative or absolute, must be "
                                        + "refused",
                                FilesDeleteSuite::aPathOutsideIsRefused),
                        Probe.of("a-linked-working-directory",
                                "a working directory that is itself a link must be refused, or every removal is "
                                        + "outside",
                                FilesDeleteSuite::aLinkedWorkingDirectory),
                        Probe.of("a-linked-ancestor-of-the-working-directory",
                                "the walk starts at '/', not at the working directory: a linked ancestor is an escape",
                                FilesDeleteSuite::aLinkedAncestorOfTheWorkingDirectory),
                        Probe.of("planted-links-lead-outside",
                                "the links these probes plant must really reach outside, or the refusals above prove "
                                        + "nothing",
                                FilesDeleteSuite::plantedLinksLeadOutside))
                .build();
    }

    private static void aRemovalRemoves(ProbeContext context) {
        ConformancePaths paths = context.paths();
        plant(context, paths.in("doomed.txt"));
        plant(context, paths.in("bystander.txt"));
        remove(context, "doomed.txt", false);
        absent(context, paths.in("doomed.txt"), "the removed file");
        holds(context, paths.in("bystander.txt"), CONTROL, "the file next to it");
    }

    private static void aMissingPathIsSuccess(ProbeContext context) {
        String path = context.paths().in("was-here.txt");
        plant(context, path);
        remove(context, "was-here.txt", false);
        absent(context, path, "the removed file");
        remove(context, "was-here.txt", false);
        remove(context, "was-here.txt", true);
        remove(context, "never-here/at-all.txt", true);
    }

    private static void aLinkIsRemovedNeverFollowed(ProbeContext context) {
        String target = context.paths().outside() + "/link-target.txt";
        linksAreUnlinked(context, target, target, "link-control.txt", "link-out", "the link's target");
    }

    private static void aLinkedDirectoryIsUnlinkedNotEmptied(ProbeContext context) {
        String outside = context.paths().outside();
        linksAreUnlinked(context, outside + "/linked-dir-target/kept.txt", outside + "/linked-dir-target",
                "linked-dir-control.txt", "dir-link", "a file in the directory the link names");
    }

    /**
     * Plants {@code kept} outside, runs the positive control {@code controlName}, then, with each
     * flag, plants {@code linkName} (with {@code -recursive} for the recursive removal) naming
     * {@code linkTarget} and removes it: the link must go and {@code kept} stay.
     */
    private static void linksAreUnlinked(ProbeContext context, String kept, String linkTarget, String controlName,
            String linkName, String keptWhat) {
        ConformancePaths paths = context.paths();
        context.guest().plantFile(kept, TARGET);
        control(context, controlName);
        for (boolean recursive : BOTH_FLAGS) {
            String link = recursive ? linkName + "-recursive" : linkName;
            context.guest().plantSymlink(paths.in(link), linkTarget);
            remove(context, link, recursive);
            absent(context, paths.in(link), "the removed link (recursive = " + recursive + ")");
            holds(context, kept, TARGET, keptWhat + " (recursive = " + recursive + ")");
        }
    }

    private static void aPathThroughALinkedParentIsRefused(ProbeContext context) {
        ConformancePaths paths = context.paths();
        String target = paths.outside() + "/parent-target.txt";
        String link = paths.in("linked-parent");
        context.guest().plantFile(target, TARGET);
        context.guest().plantSymlink(link, paths.outside());
        plant(context, paths.in("real-parent/parent-target.txt"));
        remove(context, "real-parent/parent-target.txt", false);
        absent(context, paths.in("real-parent/parent-target.txt"), "the positive control's removed file");
        for (boolean recursive : BOTH_FLAGS) {
            Check.refusedWith(SandboxPathNotConfined.class, "removing linked-parent/parent-target.txt (recursive = "
                    + recursive + ")", () -> context.sandbox().remove("linked-parent/parent-target.txt",
                            context.workingDirectory(), recursive));
            holds(context, target, TARGET, "the file outside (recursive = " + recursive + ")");
        }
        FileProbes.stillALink(context, link);
    }

    private static void aDirectoryNeedsRecursive(ProbeContext context) {
        ConformancePaths paths = context.paths();
        control(context, "dir-control.txt");
        plant(context, paths.in("dir/keeps.txt"));
        SandboxFileException refusal = Check.refusedWith(SandboxFileException.class, "removing dir without recursive",
                () -> context.sandbox().remove("dir", context.workingDirectory(), false));
        Check.that(!(refusal instanceof SandboxFileNotFound), "removing dir claimed nothing "
                + "was there: " + refusal.getMessage());
        holds(context, paths.in("dir/keeps.txt"), CONTROL, "the file in the directory");
    }

    private static void anEmptyDirectoryNeedsRecursive(ProbeContext context) {
        String empty = context.paths().in("empty");
        control(context, "empty-control.txt");
        context.guest().plantDirectory(empty);
        Check.refusedWith(SandboxFileException.class, "removing the empty directory without recursive",
                () -> context.sandbox().remove("empty", context.workingDirectory(), false));
        Check.that(context.guest().isDirectory(empty), "the empty directory was removed without recursive");
        remove(context, "empty", true);
        absent(context, empty, "the empty directory removed with recursive");
    }

    private static void recursiveRemovesTheTree(ProbeContext context) {
        ConformancePaths paths = context.paths();
        plant(context, paths.in("tree/leaf.txt"));
        plant(context, paths.in("tree/branch/deeper.txt"));
        plant(context, paths.in("next-to-tree.txt"));
        remove(context, "tree", true);
        absent(context, paths.in("tree/leaf.txt"), "the removed tree's leaf");
        absent(context, paths.in("tree"), "the removed tree");
        holds(context, paths.in("next-to-tree.txt"), CONTROL, "the file next to the tree");
    }

    private static void aPrefixSharingSiblingSurvives(ProbeContext context) {
        ConformancePaths paths = context.paths();
        plant(context, paths.in("pair/leaf.txt"));
        plant(context, paths.in("pair-sibling/leaf.txt"));
        plant(context, paths.in("pair.txt"));
        remove(context, "pair", true);
        absent(context, paths.in("pair"), "the removed tree");
        holds(context, paths.in("pair-sibling/leaf.txt"), CONTROL, "the prefix-sharing sibling's file");
        holds(context, paths.in("pair.txt"), CONTROL, "the prefix-sharing file");
    }

    private static void aLinkInsideARecursiveRemovalIsUnlinkedNotFollowed(ProbeContext context) {
        ConformancePaths paths = context.paths();
        String fileTarget = paths.outside() + "/interior-target.txt";
        String directoryTarget = paths.outside() + "/interior-dir/kept.txt";
        context.guest().plantFile(fileTarget, TARGET);
        context.guest().plantFile(directoryTarget, TARGET);
        plant(context, paths.in("linked-tree/leaf.txt"));
        context.guest().plantSymlink(paths.in("linked-tree/inside-link"), fileTarget);
        context.guest().plantSymlink(paths.in("linked-tree/inside-dir-link"), GuestPaths.parent(directoryTarget));
        remove(context, "linked-tree", true);
        absent(context, paths.in("linked-tree"), "the removed tree");
        holds(context, fileTarget, TARGET, "the file a link inside the tree named");
        holds(context, directoryTarget, TARGET, "a file in the directory a link inside the tree named");
    }

    private static void theWorkingDirectoryIsRefused(ProbeContext context) {
        ConformancePaths paths = context.paths();
        plant(context, paths.in("ground.txt"));
        control(context, "ground-control.txt");
        for (boolean recursive : BOTH_FLAGS) {
            for (String itself : List.of(".", context.workingDirectory())) {
                Check.refusedWith(SandboxPathNotConfined.class, "removing " + itself + " (recursive = " + recursive
                        + ")", () -> context.sandbox().remove(itself, context.workingDirectory(), recursive));
            }
            holds(context, paths.in("ground.txt"), CONTROL, "a file in the working directory (recursive = "
                    + recursive + ")");
        }
    }

    private static void aPathOutsideIsRefused(ProbeContext context) {
        ConformancePaths paths = context.paths();
        String target = paths.outside() + "/outside-target.txt";
        context.guest().plantFile(target, TARGET);
        control(context, "outside-control.txt");
        for (boolean recursive : BOTH_FLAGS) {
            for (String outside : List.of(paths.beyond("outside-target.txt"), target)) {
                Check.refusedWith(SandboxPathNotConfined.class, "removing " + outside + " (recursive = " + recursive
                        + ")", () -> context.sandbox().remove(outside, context.workingDirectory(), recursive));
            }
            holds(context, target, TARGET, "the file outside (recursive = " + recursive + ")");
        }
    }

    private static void aLinkedWorkingDirectory(ProbeContext context) {
        removalUnderALinkIsRefused(context, "linked-wd", "real-wd", "", "wd-target.txt");
    }

    private static void aLinkedAncestorOfTheWorkingDirectory(ProbeContext context) {
        removalUnderALinkIsRefused(context, "linked-ancestor", "real-ancestor", "/sub", "ancestor-target.txt");
    }

    /**
     * Plants {@code name} outside, at {@code <outside><below>/name}, and {@code linkName -> <outside>};
     * the positive control removes {@code name} from the real {@code realName<below>}. Removing it
     * with the working directory {@code linkName<below>} must then be refused with either flag,
     * leaving the file outside and the link.
     */
    private static void removalUnderALinkIsRefused(ProbeContext context, String linkName, String realName,
            String below, String name) {
        ConformancePaths paths = context.paths();
        String target = paths.outside() + below + "/" + name;
        String link = paths.in(linkName);
        String real = paths.in(realName + below);
        context.guest().plantFile(target, TARGET);
        context.guest().plantSymlink(link, paths.outside());
        plant(context, real + "/" + name);
        context.sandbox().remove(name, real, false);
        absent(context, real + "/" + name, "the positive control's removed file");
        String linked = link + below;
        for (boolean recursive : BOTH_FLAGS) {
            Check.refusedWith(SandboxPathNotConfined.class, "removing " + name + " with the working directory "
                    + linked + " (recursive = " + recursive + ")",
                    () -> context.sandbox().remove(name, linked, recursive));
            holds(context, target, TARGET, "the file outside (recursive = " + recursive + ")");
        }
        FileProbes.stillALink(context, link);
    }

    private static void plantedLinksLeadOutside(ProbeContext context) {
        FileProbes.plantedLinksLeadOutside(context, "reached-by-delete.txt", TARGET);
    }

    /** The positive control: a planted file in the working directory is removed. */
    private static void control(ProbeContext context, String name) {
        String path = context.paths().in(name);
        plant(context, path);
        remove(context, name, false);
        absent(context, path, "the positive control's removed file " + name);
    }

    private static void plant(ProbeContext context, String absolutePath) {
        context.guest().plantFile(absolutePath, CONTROL);
    }

    private static void remove(ProbeContext context, String path, boolean recursive) {
        context.sandbox().remove(path, context.workingDirectory(), recursive);
    }
}
