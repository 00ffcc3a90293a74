package org.sandbox4j.testkit.tck;

import static org.sandbox4j.testkit.tck.FileProbes.secretsIntact;
import static org.sandbox4j.testkit.tck.FileProbes.utf8;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.stream.Collectors;
import org.sandbox4j.core.Capability;
import org.sandbox4j.core.EntryKind;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxEntry;
import org.sandbox4j.core.SandboxFileNotFound;
import org.sandbox4j.core.SandboxNotADirectory;
import org.sandbox4j.core.SandboxPathNotConfined;

/**
 * FILES_LIST: {@code listDir} lists the immediate children of a real directory inside the working
 * directory, sorted, each described as {@code stat} would (links as links, never hidden), and
 * refuses a listed directory or ancestor that is a link. The setup plants the FILES_OUT layout
 * plus a {@code listing} directory whose children are planted out of order; the one probe that
 * compares with {@code stat} also needs FILES_OUT.
 */
public final class FilesListSuite {

    /** The suite's stable name. */
    public static final String NAME = "FILES_LIST";

    private static final String LISTING = "listing";
    private static final byte[] ALPHA = utf8("a\n");
    private static final byte[] CHARLIE = utf8("charlie, longer\n");
    private static final String EMPTY = "empty-dir";
    private static final String STAMPED = "stamped";
    private static final Instant FILE_TIME = Instant.parse("2020-01-02T03:04:05Z");
    private static final Instant DIRECTORY_TIME = Instant.parse("2021-06-07T08:09:10Z");

    private FilesListSuite() {
    }

    public static Suite suite() {
        return Suite.files(NAME, Capability.FILES_LIST)
                .setup(FilesListSuite::plant)
                .probes(
                        Probe.of("a-listing-lists-each-child-once",
                                "a listing names every immediate child exactly once and nothing deeper",
                                FilesListSuite::aListingListsEachChildOnce),
                        Probe.of("a-listing-is-sorted-by-name",
                                "a listing comes back sorted by name, whatever order the guest stored it in",
                                FilesListSuite::aListingIsSortedByName),
                        Probe.of("a-listing-gives-kinds-and-sizes",
                                "each child's kind is told without following it, with a file's real size",
                                FilesListSuite::aListingGivesKindsAndSizes),
                        Probe.of("entry-paths-are-relative-to-the-working-directory",
                                "a listed entry's path is relative to the working directory of the call, as stat's is",
                                FilesListSuite::entryPathsAreRelativeToTheWorkingDirectory),
                        Probe.of("a-listing-agrees-with-stat",
                                "a listed entry is described exactly as stat describes the same path",
                                Set.of(Capability.FILES_OUT), FilesListSuite::aListingAgreesWithStat),
                        Probe.of("an-empty-directory-lists-nothing",
                                "an empty directory is listed as empty, not refused and not missing",
                                FilesListSuite::anEmptyDirectoryListsNothing),
                        Probe.of("listing-a-linked-directory",
                                "listing a link to a directory lists the directory outside the working directory",
                                FilesListSuite::listingALinkedDirectory),
                        Probe.of("listing-through-a-linked-parent",
                                "listing below a linked parent lists a directory outside the working directory",
                                FilesListSuite::listingThroughALinkedParent),
                        Probe.of("listing-under-a-linked-ancestor",
                                "the walk starts at '/', not at the working directory: a linked ancestor is an escape",
                                FilesListSuite::listingUnderALinkedAncestor),
                        Probe.of("a-listing-names-its-links",
                                "links are listed as links, never hidden and never described as their targets",
                                FilesListSuite::aListingNamesItsLinks),
                        Probe.of("listing-a-file-is-not-a-directory",
                                "listing a regular file, or below one, is 'not a directory', not an escape",
                                FilesListSuite::listingAFileIsNotADirectory),
                        Probe.of("listing-a-missing-directory-is-not-found",
                                "listing nothing is 'not found', not an empty listing",
                                FilesListSuite::listingAMissingDirectoryIsNotFound),
                        Probe.of("a-deep-listing-enters-real-directories-only",
                                "a listing with a depth lists the tree to that depth, each directory's entries after "
                                        + "it, and lists a linked directory as a link without entering it",
                                FilesListSuite::aDeepListingEntersRealDirectoriesOnly),
                        Probe.of("entries-carry-the-mode-and-time-the-guest-set",
                                "a listed or stat'ed entry's mode and modification time, where the backend gives "
                                        + "them, are the entry's own (a link's, not its target's)",
                                FilesListSuite::entriesCarryTheModeAndTimeTheGuestSet),
                        Probe.of("listing-outside-is-refused",
                                "listing the prefix-sharing sibling, relative or absolute, must be refused",
                                FilesListSuite::listingOutsideIsRefused),
                        Probe.of("planted-links-lead-outside",
                                "the planted links must really reach outside, or the refusals above prove nothing",
                                FilesListSuite::plantedLinksLeadOutside))
                .build();
    }

    /** The FILES_OUT layout, then the listing's children in an order that is not sorted. */
    private static void plant(ProbeContext context) {
        FileProbes.plantLayout(context);
        ConformancePaths paths = context.paths();
        GuestSide guest = context.guest();
        guest.plantFile(paths.in(LISTING + "/charlie.txt"), CHARLIE);
        guest.plantSymlink(paths.in(LISTING + "/delta-link"), paths.secret());
        guest.plantFile(paths.in(LISTING + "/alpha.txt"), ALPHA);
        guest.plantFile(paths.in(LISTING + "/bravo/deeper.txt"), ALPHA);
        guest.plantDirectory(paths.in(EMPTY));
    }

    /** The listing, as the probes expect it (directory sizes are not compared: a guest may report one). */
    private static List<SandboxEntry> expectedListing(String prefix) {
        return List.of(SandboxEntry.file(prefix + "alpha.txt", ALPHA.length), SandboxEntry.directory(prefix + "bravo"),
                SandboxEntry.file(prefix + "charlie.txt", CHARLIE.length), SandboxEntry.symlink(prefix + "delta-link"));
    }

    private static void aListingListsEachChildOnce(ProbeContext context) {
        List<SandboxEntry> listing = list(context, LISTING, context.workingDirectory());
        List<String> paths = paths(listing);
        Check.equal(paths.size(), new HashSet<>(paths).size(), "distinct paths in the listing " + paths);
        Check.equal(Set.copyOf(paths(expectedListing(LISTING + "/"))), Set.copyOf(paths), "the paths listed");
    }

    private static void aListingIsSortedByName(ProbeContext context) {
        List<String> paths = paths(list(context, LISTING, context.workingDirectory()));
        List<String> sorted = new ArrayList<>(paths);
        sorted.sort(null);
        Check.equal(sorted, paths, "the order of the listing");
    }

    private static void aListingGivesKindsAndSizes(ProbeContext context) {
        Check.equal(shapes(expectedListing(LISTING + "/")),
                shapes(list(context, LISTING, context.workingDirectory())), "the kinds and sizes listed");
    }

    private static void entryPathsAreRelativeToTheWorkingDirectory(ProbeContext context) {
        String listingDirectory = context.paths().in(LISTING);
        Check.equal(shapes(expectedListing("")), shapes(list(context, ".", listingDirectory)),
                "listing '.' with the working directory " + listingDirectory);
        Check.equal(List.of(LISTING + "/bravo/deeper.txt"),
                paths(list(context, LISTING + "/bravo", context.workingDirectory())), "listing listing/bravo");
    }

    private static void aListingAgreesWithStat(ProbeContext context) {
        for (SandboxEntry entry : list(context, LISTING, context.workingDirectory())) {
            Check.equal(Optional.of(entry), context.sandbox().stat(entry.path(), context.workingDirectory()),
                    "stat of the listed " + entry.path());
        }
    }

    private static void aDeepListingEntersRealDirectoriesOnly(ProbeContext context) {
        String wd = context.workingDirectory();
        Check.equal(list(context, LISTING, wd), context.sandbox().listDir(LISTING, wd, 1), "a listing of depth 1");
        List<SandboxEntry> two = context.sandbox().listDir(LISTING, wd, 2);
        List<SandboxEntry> expected = new ArrayList<>(expectedListing(LISTING + "/"));
        expected.add(2, SandboxEntry.file(LISTING + "/bravo/deeper.txt", ALPHA.length));
        Check.equal(shapes(expected), shapes(two), "a listing of depth 2");
        List<String> tree = paths(context.sandbox().listDir(".", wd, Sandbox.MAX_LISTING_DEPTH));
        Check.that(tree.contains(LISTING + "/bravo/deeper.txt") && tree.contains("link-dir"), "the deep listing "
                + "of '.' misses listing/bravo/deeper.txt or link-dir: " + tree);
        Check.that(tree.stream().noneMatch(path -> path.startsWith("link-dir/")), "the deep listing entered the "
                + "linked directory link-dir: " + tree);
        Check.equal(1L, paths(context.sandbox().listDir(".", wd, 2)).stream()
                .filter(path -> path.equals(LISTING + "/bravo")).count(), "entries listing/bravo at depth 2");
        secretsIntact(context);
    }

    private static void entriesCarryTheModeAndTimeTheGuestSet(ProbeContext context) {
        ConformancePaths paths = context.paths();
        GuestSide guest = context.guest();
        guest.plantFile(paths.in(STAMPED + "/file.txt"), ALPHA);
        guest.stamp(paths.in(STAMPED + "/file.txt"), 0640, FILE_TIME);
        guest.stamp(paths.in(STAMPED), 0750, DIRECTORY_TIME);
        String wd = context.workingDirectory();
        SandboxEntry directory = list(context, ".", wd).stream().filter(entry -> entry.path().equals(STAMPED))
                .findFirst().orElseThrow(() -> new AssertionError("listing '.' does not name " + STAMPED));
        SandboxEntry file = list(context, STAMPED, wd).stream().findFirst()
                .orElseThrow(() -> new AssertionError("listing " + STAMPED + " is empty"));
        holdsStamp(directory, 0750, DIRECTORY_TIME);
        holdsStamp(file, 0640, FILE_TIME);
        SandboxEntry link = list(context, LISTING, wd).stream().filter(entry -> entry.kind() == EntryKind.SYMLINK)
                .findFirst().orElseThrow(() -> new AssertionError("listing " + LISTING + " names no link"));
        link.modified().ifPresent(time -> Check.that(!time.equals(FILE_TIME) && !time.equals(DIRECTORY_TIME),
                "the link " + link.path() + " was given a stamped entry's time"));
        FileProbes.stillALink(context, paths.in(LISTING + "/delta-link"));
    }

    private static void holdsStamp(SandboxEntry entry, int mode, Instant modified) {
        entry.mode().ifPresent(bits -> Check.equal(Integer.toOctalString(mode), Integer.toOctalString(bits),
                "the mode of " + entry.path()));
        entry.modified().ifPresent(time -> Check.equal(modified, time.truncatedTo(ChronoUnit.SECONDS),
                "the modification time of " + entry.path()));
    }

    private static void anEmptyDirectoryListsNothing(ProbeContext context) {
        control(context);
        Check.equal(List.of(), list(context, EMPTY, context.workingDirectory()), "listing " + EMPTY);
    }

    private static void listingALinkedDirectory(ProbeContext context) {
        control(context);
        FileProbes.refusedAsAnEscape(context, "listing link-dir",
                () -> context.sandbox().listDir("link-dir", context.workingDirectory()));
    }

    private static void listingThroughALinkedParent(ProbeContext context) {
        control(context);
        FileProbes.refusedAsAnEscape(context, "listing link-dir/sub",
                () -> context.sandbox().listDir("link-dir/sub", context.workingDirectory()));
    }

    private static void listingUnderALinkedAncestor(ProbeContext context) {
        control(context);
        String linked = context.paths().underLinkedDirectory();
        FileProbes.refusedAsAnEscape(context, "listing '.' with the working directory " + linked,
                () -> context.sandbox().listDir(".", linked));
    }

    private static void aListingNamesItsLinks(ProbeContext context) {
        List<SandboxEntry> listing = list(context, ".", context.workingDirectory()).stream()
                .map(SandboxEntry::withoutAttributes).toList();
        for (String link : List.of("link-file", "link-dir")) {
            Check.that(listing.contains(SandboxEntry.symlink(link)), "listing '.' does not name " + link
                    + " as a link: " + listing);
        }
        Check.that(listing.contains(SandboxEntry.file("plain.txt", ConformancePaths.PLAIN.length)),
                "listing '.' does not name plain.txt as a file of its size: " + listing);
        FileProbes.stillALink(context, context.paths().linkedFile());
    }

    private static void listingAFileIsNotADirectory(ProbeContext context) {
        control(context);
        for (String notADirectory : List.of("plain.txt", "plain.txt/sub")) {
            Check.refusedWith(SandboxNotADirectory.class, "listing " + notADirectory,
                    () -> context.sandbox().listDir(notADirectory, context.workingDirectory()));
        }
        FileProbes.holds(context, context.paths().plain(), ConformancePaths.PLAIN, "the plain file");
    }

    private static void listingAMissingDirectoryIsNotFound(ProbeContext context) {
        control(context);
        Check.refusedWith(SandboxFileNotFound.class, "listing missing-dir",
                () -> context.sandbox().listDir("missing-dir", context.workingDirectory()));
        FileProbes.absent(context, context.paths().in("missing-dir"), "a listing created the missing directory");
    }

    private static void listingOutsideIsRefused(ProbeContext context) {
        control(context);
        ConformancePaths paths = context.paths();
        for (String outside : List.of(paths.beyond("sub"), paths.outside())) {
            Check.refusedWith(SandboxPathNotConfined.class, "listing " + outside,
                    () -> context.sandbox().listDir(outside, context.workingDirectory()));
        }
        secretsIntact(context);
    }

    private static void plantedLinksLeadOutside(ProbeContext context) {
        ConformancePaths paths = context.paths();
        FileProbes.leadsOutside(context, paths.linkedDirectory() + "/secret.txt", ConformancePaths.SECRET);
        FileProbes.leadsOutside(context, paths.underLinkedDirectory() + "/leaf.txt", ConformancePaths.SECRET);
        FileProbes.leadsOutside(context, paths.in(LISTING + "/delta-link"), ConformancePaths.SECRET);
    }

    /** The positive control: the planted listing is listed in full. */
    private static void control(ProbeContext context) {
        Check.equal(shapes(expectedListing(LISTING + "/")), shapes(list(context, LISTING, context.workingDirectory())),
                "the positive control: listing " + LISTING);
    }

    private static List<SandboxEntry> list(ProbeContext context, String path, String workingDirectory) {
        return context.sandbox().listDir(path, workingDirectory);
    }

    private static List<String> paths(List<SandboxEntry> entries) {
        return entries.stream().map(SandboxEntry::path).collect(Collectors.toList());
    }

    /** Path, kind, and a file's size: what the probes compare (a directory's size is the guest's business). */
    private static List<String> shapes(List<SandboxEntry> entries) {
        return entries.stream().map(entry -> entry.path() + " " + entry.kind().wire()
                + (entry.kind() == EntryKind.FILE ? " " + sizeOf(entry.sizeBytes()) : ""))
                .collect(Collectors.toList());
    }

    private static String sizeOf(OptionalLong size) {
        return size.isPresent() ? size.getAsLong() + " bytes" : "of unknown size";
    }
}
