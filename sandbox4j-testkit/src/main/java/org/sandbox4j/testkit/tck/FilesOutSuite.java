package org.sandbox4j.testkit.tck;

import static org.sandbox4j.testkit.tck.FileProbes.refusedAsAnEscape;
import static org.sandbox4j.testkit.tck.FileProbes.secretsIntact;
import static org.sandbox4j.testkit.tck.FileProbes.stillALink;

import java.util.Optional;
import java.util.OptionalLong;
import org.sandbox4j.core.Capability;
import org.sandbox4j.core.EntryKind;
import org.sandbox4j.core.spi.GuestPaths;
import org.sandbox4j.core.SandboxEntry;
import org.sandbox4j.core.SandboxFileException;
import org.sandbox4j.core.SandboxFileNotFound;
import org.sandbox4j.core.SandboxIsADirectory;
import org.sandbox4j.core.SandboxNotADirectory;
import org.sandbox4j.core.SandboxPathNotConfined;
import org.sandbox4j.core.SandboxTransferCapExceeded;

/**
 * FILES_OUT: the pull surface ({@code stat}, {@code readFile}) describes and reads only what is
 * inside the working directory, never follows a link, and refuses a read over its cap instead of
 * truncating it. The setup plants the reference's layout ({@link FileProbes#plantLayout}); every
 * refusal probe also checks, through the {@link GuestSide}, that the secrets are untouched.
 */
public final class FilesOutSuite {

    /** The suite's stable name. */
    public static final String NAME = "FILES_OUT";

    private static final long CAP = ConformancePaths.READ_CAP;

    private FilesOutSuite() {
    }

    public static Suite suite() {
        return Suite.files(NAME, Capability.FILES_OUT)
                .setup(FilesOutSuite::plant)
                .probes(
                        Probe.of("a-legitimate-read-still-works",
                                "the pull surface must describe and read a file inside the working directory exactly",
                                FilesOutSuite::aLegitimateReadStillWorks),
                        Probe.of("a-link-is-named-a-link",
                                "stat describes the link itself (no size), never what it points to",
                                FilesOutSuite::aLinkIsNamedALink),
                        Probe.of("a-link-is-never-read",
                                "reading a link would read whatever it names, inside or out",
                                FilesOutSuite::aLinkIsNeverRead),
                        Probe.of("stat-through-a-linked-parent",
                                "a stat through a linked parent (out -> /etc) describes a file outside the working "
                                        + "directory",
                                FilesOutSuite::statThroughALinkedParent),
                        Probe.of("read-through-a-linked-parent",
                                "a read through a linked parent (out -> /etc) leaks a file outside the working "
                                        + "directory",
                                FilesOutSuite::readThroughALinkedParent),
                        Probe.of("a-linked-working-directory",
                                "a working directory that is itself a link must be refused, or every read is outside",
                                FilesOutSuite::aLinkedWorkingDirectory),
                        Probe.of("a-linked-ancestor-of-the-working-directory",
                                "the walk starts at '/', not at the working directory: a linked ancestor is an escape",
                                FilesOutSuite::aLinkedAncestorOfTheWorkingDirectory),
                        Probe.of("a-plain-parent-is-not-an-escape",
                                "a regular file where a directory is expected is 'not a directory', not an escape",
                                FilesOutSuite::aPlainParentIsNotAnEscape),
                        Probe.of("a-path-outside-is-refused",
                                "stat and read of the prefix-sharing sibling, relative or absolute, must be refused",
                                FilesOutSuite::aPathOutsideIsRefused),
                        Probe.of("a-linked-directory-is-named-a-link",
                                "stat of a link to a directory describes the link, not the directory it names",
                                FilesOutSuite::aLinkedDirectoryIsNamedALink),
                        Probe.of("a-read-over-the-cap-is-refused-not-truncated",
                                "a read larger than its cap is refused whole; half a file delivered as success is "
                                        + "corruption",
                                FilesOutSuite::aReadOverTheCapIsRefusedNotTruncated),
                        Probe.of("nothing-there-is-empty-then-not-found",
                                "stat of a missing path is empty (not an error); reading it is 'not found'",
                                FilesOutSuite::nothingThereIsEmptyThenNotFound),
                        Probe.of("a-directory-is-described-not-read",
                                "stat describes a directory as one; reading it is refused as a directory",
                                FilesOutSuite::aDirectoryIsDescribedNotRead),
                        Probe.of("bytes-are-read-back-exactly",
                                "binary content (UTF-8 and bytes 1..127) must be read back verbatim, never decoded",
                                FilesOutSuite::bytesAreReadBackExactly),
                        Probe.of("planted-links-lead-outside",
                                "the planted links must really reach outside, or the refusals above prove nothing",
                                FilesOutSuite::plantedLinksLeadOutside))
                .build();
    }

    private static void plant(ProbeContext context) {
        FileProbes.plantLayout(context);
        context.guest().plantFile(context.paths().in("binary.bin"), ConformancePaths.BINARY_PAYLOAD);
    }

    private static void aLegitimateReadStillWorks(ProbeContext context) {
        control(context);
    }

    private static void aLinkIsNamedALink(ProbeContext context) {
        control(context);
        Optional<SandboxEntry> entry = context.sandbox().stat("link-file", context.workingDirectory());
        Check.equal(Optional.of(SandboxEntry.symlink("link-file")), entry.map(SandboxEntry::withoutAttributes),
                "stat of link-file");
        stillALink(context, context.paths().linkedFile());
        secretsIntact(context);
    }

    private static void aLinkIsNeverRead(ProbeContext context) {
        control(context);
        SandboxFileException refusal = Check.refusedWith(SandboxFileException.class, "reading link-file",
                () -> context.sandbox().readFile("link-file", context.workingDirectory(), CAP));
        Check.that(!(refusal instanceof SandboxFileNotFound), "reading link-file claimed nothing was there: "
                + refusal.getMessage());
        secretsIntact(context);
    }

    private static void statThroughALinkedParent(ProbeContext context) {
        control(context);
        refusedAsAnEscape(context, "stat of link-dir/secret.txt",
                () -> context.sandbox().stat("link-dir/secret.txt", context.workingDirectory()));
    }

    private static void readThroughALinkedParent(ProbeContext context) {
        control(context);
        refusedAsAnEscape(context, "reading link-dir/secret.txt",
                () -> context.sandbox().readFile("link-dir/secret.txt", context.workingDirectory(), CAP));
    }

    private static void aLinkedWorkingDirectory(ProbeContext context) {
        ConformancePaths paths = context.paths();
        String real = GuestPaths.parent(paths.inside());
        Check.equal(Optional.of(SandboxEntry.file("inside.txt", ConformancePaths.INSIDE.length)),
                context.sandbox().stat("inside.txt", real).map(SandboxEntry::withoutAttributes), "stat of inside.txt with the working directory " + real);
        String linked = paths.linkedDirectory();
        statAndReadAreRefused(context, "secret.txt", linked, "secret.txt with the working directory " + linked);
        secretsIntact(context);
    }

    private static void aLinkedAncestorOfTheWorkingDirectory(ProbeContext context) {
        control(context);
        String linked = context.paths().underLinkedDirectory();
        statAndReadAreRefused(context, "leaf.txt", linked, "leaf.txt with the working directory " + linked);
        secretsIntact(context);
    }

    private static void aPlainParentIsNotAnEscape(ProbeContext context) {
        control(context);
        Check.refusedWith(SandboxNotADirectory.class, "stat of plain.txt/deeper.txt",
                () -> context.sandbox().stat("plain.txt/deeper.txt", context.workingDirectory()));
        FileProbes.holds(context, context.paths().plain(), ConformancePaths.PLAIN, "the plain file");
    }

    private static void aPathOutsideIsRefused(ProbeContext context) {
        control(context);
        ConformancePaths paths = context.paths();
        for (String outside : new String[] {paths.beyond("secret.txt"), paths.secret()}) {
            statAndReadAreRefused(context, outside, context.workingDirectory(), outside);
        }
        secretsIntact(context);
    }

    private static void aLinkedDirectoryIsNamedALink(ProbeContext context) {
        control(context);
        Check.equal(Optional.of(SandboxEntry.symlink("link-dir")),
                context.sandbox().stat("link-dir", context.workingDirectory()).map(SandboxEntry::withoutAttributes), "stat of link-dir");
        stillALink(context, context.paths().linkedDirectory());
    }

    private static void aReadOverTheCapIsRefusedNotTruncated(ProbeContext context) {
        int size = ConformancePaths.INSIDE.length;
        Check.equal(ConformancePaths.INSIDE, context.sandbox().readFile("real/inside.txt", context.workingDirectory(),
                size), "reading real/inside.txt with a cap of exactly its size");
        Check.refusedWith(SandboxTransferCapExceeded.class, "reading real/inside.txt with a cap one byte short",
                () -> context.sandbox().readFile("real/inside.txt", context.workingDirectory(), size - 1));
        FileProbes.holds(context, context.paths().inside(), ConformancePaths.INSIDE, "the file read");
    }

    private static void nothingThereIsEmptyThenNotFound(ProbeContext context) {
        control(context);
        Check.equal(Optional.empty(), context.sandbox().stat("real/missing.txt", context.workingDirectory()),
                "stat of real/missing.txt");
        Check.refusedWith(SandboxFileNotFound.class, "reading real/missing.txt",
                () -> context.sandbox().readFile("real/missing.txt", context.workingDirectory(), CAP));
        FileProbes.absent(context, context.paths().in("real/missing.txt"), "a read created the missing file");
    }

    private static void aDirectoryIsDescribedNotRead(ProbeContext context) {
        control(context);
        Optional<SandboxEntry> entry = context.sandbox().stat("real", context.workingDirectory());
        Check.equal(Optional.of(EntryKind.DIRECTORY), entry.map(SandboxEntry::kind), "the kind stat gives real");
        Check.equal(Optional.of("real"), entry.map(SandboxEntry::path), "the path stat gives real");
        Check.refusedWith(SandboxIsADirectory.class, "reading the directory real",
                () -> context.sandbox().readFile("real", context.workingDirectory(), CAP));
    }

    private static void bytesAreReadBackExactly(ProbeContext context) {
        byte[] payload = ConformancePaths.BINARY_PAYLOAD;
        Check.equal(Optional.of(SandboxEntry.file("binary.bin", payload.length)),
                context.sandbox().stat("binary.bin", context.workingDirectory()).map(SandboxEntry::withoutAttributes), "stat of binary.bin");
        Check.equal(payload, context.sandbox().readFile("binary.bin", context.workingDirectory(), CAP),
                "reading binary.bin");
    }

    private static void plantedLinksLeadOutside(ProbeContext context) {
        ConformancePaths paths = context.paths();
        FileProbes.leadsOutside(context, paths.linkedFile(), ConformancePaths.SECRET);
        FileProbes.leadsOutside(context, paths.linkedDirectory() + "/secret.txt", ConformancePaths.SECRET);
        FileProbes.leadsOutside(context, paths.underLinkedDirectory() + "/leaf.txt", ConformancePaths.SECRET);
    }

    /** Both a stat and a read of {@code path} with {@code workingDirectory} are refused as escapes. */
    private static void statAndReadAreRefused(ProbeContext context, String path, String workingDirectory,
            String described) {
        Check.refusedWith(SandboxPathNotConfined.class, "stat of " + described,
                () -> context.sandbox().stat(path, workingDirectory));
        Check.refusedWith(SandboxPathNotConfined.class, "reading " + described,
                () -> context.sandbox().readFile(path, workingDirectory, CAP));
    }

    /** The positive control: stat and read of {@code real/inside.txt} describe and return it exactly. */
    private static void control(ProbeContext context) {
        Check.equal(Optional.of(new SandboxEntry("real/inside.txt", EntryKind.FILE,
                OptionalLong.of(ConformancePaths.INSIDE.length))),
                context.sandbox().stat("real/inside.txt", context.workingDirectory()).map(SandboxEntry::withoutAttributes),
                "stat of real/inside.txt");
        Check.equal(ConformancePaths.INSIDE, context.sandbox().readFile("real/inside.txt", context.workingDirectory(),
                CAP), "reading real/inside.txt");
    }
}
