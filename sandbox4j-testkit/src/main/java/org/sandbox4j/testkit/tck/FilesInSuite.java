package org.sandbox4j.testkit.tck;

import static org.sandbox4j.testkit.tck.FileProbes.CONTROL;
import static org.sandbox4j.testkit.tck.FileProbes.absent;
import static org.sandbox4j.testkit.tck.FileProbes.holds;
import static org.sandbox4j.testkit.tck.FileProbes.stillALink;
import static org.sandbox4j.testkit.tck.FileProbes.utf8;

import org.sandbox4j.core.Capability;
import org.sandbox4j.core.SandboxNotADirectory;
import org.sandbox4j.core.SandboxPathNotConfined;

/**
 * FILES_IN: {@code writeFile} lands exactly what it is given exactly where it is told, and
 * nowhere else. Nothing is pre-planted: each probe plants its own fixtures under names no other
 * probe uses, and every result is checked through the {@link GuestSide}. Refusals must be
 * {@link SandboxPathNotConfined} for an escape and {@link SandboxNotADirectory} for a plain file
 * in the way.
 */
public final class FilesInSuite {

    /** The suite's stable name. */
    public static final String NAME = "FILES_IN";

    private static final byte[] WRITTEN = utf8("written");
    private static final String NAIVE = "naïve";
    private static final byte[] FIRST_AND_LONGER = utf8("first, and longer than the second");
    private static final byte[] SECOND = utf8("second");
    private static final byte[] KNOWN = utf8("known");
    private static final byte[] MARKER = utf8("marker");
    private static final byte[] ATTACK = utf8("planted by the probe");

    private FilesInSuite() {
    }

    public static Suite suite() {
        return Suite.files(NAME, Capability.FILES_IN)
                .probes(
                        Probe.of("a-write-lands-and-reads-back",
                                "a write to an absolute path inside the working directory must land there, byte for "
                                        + "byte",
                                FilesInSuite::aWriteLandsAndReadsBack),
                        Probe.of("bytes-survive-the-round-trip",
                                "binary content (UTF-8 and bytes 1..127) must land verbatim, never re-encoded",
                                FilesInSuite::bytesSurviveTheRoundTrip),
                        Probe.of("string-content-is-utf8",
                                "text is written as UTF-8 whatever the host's locale",
                                FilesInSuite::stringContentIsUtf8),
                        Probe.of("a-second-write-replaces",
                                "a second write replaces the first whole: no append, no stale tail of a longer first "
                                        + "write",
                                FilesInSuite::aSecondWriteReplaces),
                        Probe.of("parents-are-created",
                                "missing parent directories are created",
                                FilesInSuite::parentsAreCreated),
                        Probe.of("dot-dot-landing-inside-is-accepted",
                                "a '..' that lands inside the working directory is not an escape: refusing it "
                                        + "over-confines",
                                FilesInSuite::dotDotLandingInsideIsAccepted),
                        Probe.of("a-path-outside-is-refused",
                                "a relative path climbing into the prefix-sharing sibling must be refused and land "
                                        + "nothing",
                                FilesInSuite::aPathOutsideIsRefused),
                        Probe.of("an-absolute-path-in-the-prefix-sibling-is-refused",
                                "'<wd>-outside/x' starts with the working directory's spelling; a string-prefix check "
                                        + "admits it",
                                FilesInSuite::anAbsolutePathInThePrefixSiblingIsRefused),
                        Probe.of("a-path-through-a-linked-parent-is-refused",
                                "a write through a linked parent (out -> /etc) would land outside the working "
                                        + "directory",
                                FilesInSuite::aPathThroughALinkedParentIsRefused),
                        Probe.of("a-linked-destination-is-refused-not-followed",
                                "a write onto a link would overwrite whatever the link names",
                                FilesInSuite::aLinkedDestinationIsRefusedNotFollowed),
                        Probe.of("the-working-directory-is-refused",
                                "writing over the working directory itself would destroy the workspace",
                                FilesInSuite::theWorkingDirectoryIsRefused),
                        Probe.of("a-backslash-is-refused",
                                "a backslash is never a separator; accepting it makes one path mean two things",
                                FilesInSuite::aBackslashIsRefused),
                        Probe.of("a-plain-parent-is-not-an-escape",
                                "a regular file where a directory is expected is 'not a directory', not an escape and "
                                        + "not replaced",
                                FilesInSuite::aPlainParentIsNotAnEscape),
                        Probe.of("a-linked-working-directory",
                                "a working directory that is itself a link must be refused, or every write lands "
                                        + "outside",
                                FilesInSuite::aLinkedWorkingDirectory),
                        Probe.of("a-linked-ancestor-of-the-working-directory",
                                "the walk starts at '/', not at the working directory: a linked ancestor is an escape",
                                FilesInSuite::aLinkedAncestorOfTheWorkingDirectory),
                        Probe.of("mkdir-makes-the-directory-and-its-parents",
                                "mkdir makes every missing directory of the path, and making it again is success",
                                FilesInSuite::mkdirMakesTheDirectoryAndItsParents),
                        Probe.of("mkdir-onto-a-file-is-not-a-directory",
                                "mkdir where a file is, or below one, is 'not a directory' and leaves the file as it was",
                                FilesInSuite::mkdirOntoAFileIsNotADirectory),
                        Probe.of("mkdir-through-a-linked-parent-is-refused",
                                "mkdir through a linked parent (out -> outside) would make directories outside the "
                                        + "working directory",
                                FilesInSuite::mkdirThroughALinkedParentIsRefused),
                        Probe.of("mkdir-onto-a-link-is-refused",
                                "mkdir of a path that is a link to a directory outside is an escape, not 'already there'",
                                FilesInSuite::mkdirOntoALinkIsRefused),
                        Probe.of("planted-links-lead-outside",
                                "the links these probes plant must really reach outside, or the refusals above prove "
                                        + "nothing",
                                FilesInSuite::plantedLinksLeadOutside))
                .build();
    }

    private static void aWriteLandsAndReadsBack(ProbeContext context) {
        String path = context.paths().in("real/written.txt");
        context.sandbox().writeFile(path, WRITTEN, context.workingDirectory());
        holds(context, path, WRITTEN, "the written file");
    }

    private static void bytesSurviveTheRoundTrip(ProbeContext context) {
        context.sandbox().writeFile("binary.bin", ConformancePaths.BINARY_PAYLOAD, context.workingDirectory());
        holds(context, context.paths().in("binary.bin"), ConformancePaths.BINARY_PAYLOAD, "the binary file");
    }

    private static void stringContentIsUtf8(ProbeContext context) {
        context.sandbox().writeFile("naive.txt", NAIVE, context.workingDirectory());
        holds(context, context.paths().in("naive.txt"), utf8(NAIVE), "the text file");
    }

    private static void aSecondWriteReplaces(ProbeContext context) {
        String path = context.paths().in("replaced.txt");
        context.sandbox().writeFile("replaced.txt", FIRST_AND_LONGER, context.workingDirectory());
        holds(context, path, FIRST_AND_LONGER, "the first write");
        context.sandbox().writeFile("replaced.txt", SECOND, context.workingDirectory());
        holds(context, path, SECOND, "the second write");
    }

    private static void parentsAreCreated(ProbeContext context) {
        context.sandbox().writeFile("deep/er/est/leaf.txt", CONTROL, context.workingDirectory());
        Check.that(context.guest().isDirectory(context.paths().in("deep/er/est")), "the parent deep/er/est "
                + "is not a directory");
        holds(context, context.paths().in("deep/er/est/leaf.txt"), CONTROL, "the deep file");
    }

    private static void dotDotLandingInsideIsAccepted(ProbeContext context) {
        context.sandbox().writeFile("dot-dot-sub/../dot-dot.txt", CONTROL, context.workingDirectory());
        holds(context, context.paths().in("dot-dot.txt"), CONTROL, "the file written through '..'");
    }

    private static void aPathOutsideIsRefused(ProbeContext context) {
        ConformancePaths paths = context.paths();
        control(context, "control-outside.txt");
        context.guest().plantDirectory(paths.outside());
        Check.refusedWith(SandboxPathNotConfined.class, "writing " + paths.beyond("planted.txt"),
                () -> context.sandbox().writeFile(paths.beyond("planted.txt"), ATTACK, context.workingDirectory()));
        absent(context, paths.outside() + "/planted.txt", "the refused write landed outside");
    }

    private static void anAbsolutePathInThePrefixSiblingIsRefused(ProbeContext context) {
        ConformancePaths paths = context.paths();
        control(context, paths.in("control-prefix.txt"));
        context.guest().plantDirectory(paths.outside());
        String sibling = paths.outside() + "/planted-absolute.txt";
        Check.refusedWith(SandboxPathNotConfined.class, "writing " + sibling,
                () -> context.sandbox().writeFile(sibling, ATTACK, context.workingDirectory()));
        absent(context, sibling, "the refused write landed in the prefix sibling");
    }

    private static void aPathThroughALinkedParentIsRefused(ProbeContext context) {
        ConformancePaths paths = context.paths();
        String link = paths.in("linked-parent");
        context.guest().plantFile(paths.outside() + "/marker.txt", MARKER);
        context.guest().plantSymlink(link, paths.outside());
        control(context, "real-parent/landed-via-parent.txt");
        Check.refusedWith(SandboxPathNotConfined.class, "writing linked-parent/landed-via-parent.txt",
                () -> context.sandbox().writeFile("linked-parent/landed-via-parent.txt", ATTACK,
                        context.workingDirectory()));
        absent(context, paths.outside() + "/landed-via-parent.txt", "the refused write landed through the link");
        holds(context, paths.outside() + "/marker.txt", MARKER, "the marker outside");
        stillALink(context, link);
    }

    private static void aLinkedDestinationIsRefusedNotFollowed(ProbeContext context) {
        ConformancePaths paths = context.paths();
        String target = paths.outside() + "/target.txt";
        String link = paths.in("linked-destination");
        context.guest().plantFile(target, KNOWN);
        context.guest().plantSymlink(link, target);
        control(context, "real-destination");
        Check.refusedWith(SandboxPathNotConfined.class, "writing onto the link linked-destination",
                () -> context.sandbox().writeFile("linked-destination", ATTACK, context.workingDirectory()));
        holds(context, target, KNOWN, "the link's target");
        stillALink(context, link);
    }

    private static void theWorkingDirectoryIsRefused(ProbeContext context) {
        control(context, "control.txt");
        Check.refusedWith(SandboxPathNotConfined.class, "writing '.'",
                () -> context.sandbox().writeFile(".", ATTACK, context.workingDirectory()));
        Check.that(context.guest().isDirectory(context.workingDirectory()), "the working directory is no longer "
                + "a directory");
        holds(context, context.paths().in("control.txt"), CONTROL, "the file in the working directory");
    }

    private static void aBackslashIsRefused(ProbeContext context) {
        ConformancePaths paths = context.paths();
        control(context, "backslash-sub/control.txt");
        Check.refusedWith(SandboxPathNotConfined.class, "writing backslash-sub\\file.txt",
                () -> context.sandbox().writeFile("backslash-sub\\file.txt", ATTACK, context.workingDirectory()));
        absent(context, paths.in("backslash-sub\\file.txt"), "the refused write landed under the literal name");
        absent(context, paths.in("backslash-sub/file.txt"), "the refused write landed as if '\\' were '/'");
    }

    private static void aPlainParentIsNotAnEscape(ProbeContext context) {
        ConformancePaths paths = context.paths();
        String plain = paths.in("plain-parent.txt");
        context.guest().plantFile(plain, ConformancePaths.PLAIN);
        control(context, "control-plain.txt");
        Check.refusedWith(SandboxNotADirectory.class, "writing plain-parent.txt/deeper.txt",
                () -> context.sandbox().writeFile("plain-parent.txt/deeper.txt", ATTACK, context.workingDirectory()));
        holds(context, plain, ConformancePaths.PLAIN, "the plain file in the way");
    }

    private static void aLinkedWorkingDirectory(ProbeContext context) {
        writeUnderALinkIsRefused(context, "linked-wd", "real-wd", "", "landed-via-wd.txt",
                "the control write in a real working directory",
                "the refused write landed through the linked working directory");
    }

    private static void aLinkedAncestorOfTheWorkingDirectory(ProbeContext context) {
        writeUnderALinkIsRefused(context, "linked-ancestor", "real-ancestor", "/sub", "landed-via-ancestor.txt",
                "the control write under a real ancestor", "the refused write landed under the linked ancestor");
    }

    /**
     * Plants {@code linkName -> <outside>} and the directories {@code <outside><below>} and
     * {@code realName<below>}; the positive control writes {@code name} in the real one. A write of
     * {@code name} with the working directory {@code linkName<below>} must then be refused and land
     * nothing outside, and the link stay.
     */
    private static void writeUnderALinkIsRefused(ProbeContext context, String linkName, String realName,
            String below, String name, String controlWhat, String landedWhat) {
        ConformancePaths paths = context.paths();
        String link = paths.in(linkName);
        String realDirectory = paths.in(realName + below);
        context.guest().plantDirectory(paths.outside() + below);
        context.guest().plantSymlink(link, paths.outside());
        context.guest().plantDirectory(realDirectory);
        context.sandbox().writeFile(name, CONTROL, realDirectory);
        holds(context, realDirectory + "/" + name, CONTROL, controlWhat);
        String linkedWorkingDirectory = link + below;
        Check.refusedWith(SandboxPathNotConfined.class, "writing " + name + " with the working directory "
                + linkedWorkingDirectory, () -> context.sandbox().writeFile(name, ATTACK, linkedWorkingDirectory));
        absent(context, paths.outside() + below + "/" + name, landedWhat);
        stillALink(context, link);
    }

    private static void mkdirMakesTheDirectoryAndItsParents(ProbeContext context) {
        context.sandbox().mkdir("made/deeper/deepest", context.workingDirectory());
        Check.that(context.guest().isDirectory(context.paths().in("made/deeper/deepest")), "mkdir did not make "
                + "made/deeper/deepest");
        context.sandbox().mkdir("made/deeper", context.workingDirectory());
        context.sandbox().writeFile("made/deeper/deepest/inside.txt", CONTROL, context.workingDirectory());
        holds(context, context.paths().in("made/deeper/deepest/inside.txt"), CONTROL, "a file in the made directory");
    }

    private static void mkdirOntoAFileIsNotADirectory(ProbeContext context) {
        String plain = context.paths().in("mkdir-plain.txt");
        context.guest().plantFile(plain, ConformancePaths.PLAIN);
        Check.refusedWith(SandboxNotADirectory.class, "mkdir mkdir-plain.txt",
                () -> context.sandbox().mkdir("mkdir-plain.txt", context.workingDirectory()));
        Check.refusedWith(SandboxNotADirectory.class, "mkdir mkdir-plain.txt/below",
                () -> context.sandbox().mkdir("mkdir-plain.txt/below", context.workingDirectory()));
        holds(context, plain, ConformancePaths.PLAIN, "the plain file in the way");
    }

    private static void mkdirThroughALinkedParentIsRefused(ProbeContext context) {
        ConformancePaths paths = context.paths();
        String link = paths.in("mkdir-linked-parent");
        context.guest().plantDirectory(paths.outside());
        context.guest().plantSymlink(link, paths.outside());
        context.sandbox().mkdir("mkdir-real-parent/made", context.workingDirectory());
        Check.that(context.guest().isDirectory(paths.in("mkdir-real-parent/made")), "the positive control mkdir did "
                + "not make its directory");
        Check.refusedWith(SandboxPathNotConfined.class, "mkdir mkdir-linked-parent/made",
                () -> context.sandbox().mkdir("mkdir-linked-parent/made", context.workingDirectory()));
        absent(context, paths.outside() + "/made", "the refused mkdir made a directory through the link");
        stillALink(context, link);
    }

    private static void mkdirOntoALinkIsRefused(ProbeContext context) {
        ConformancePaths paths = context.paths();
        String link = paths.in("mkdir-linked-leaf");
        context.guest().plantDirectory(paths.outside());
        context.guest().plantSymlink(link, paths.outside());
        Check.refusedWith(SandboxPathNotConfined.class, "mkdir mkdir-linked-leaf",
                () -> context.sandbox().mkdir("mkdir-linked-leaf", context.workingDirectory()));
        stillALink(context, link);
    }

    private static void plantedLinksLeadOutside(ProbeContext context) {
        FileProbes.plantedLinksLeadOutside(context, "reached.txt", KNOWN);
    }

    /** The positive control: a plain write in the working directory lands (relative or absolute path). */
    private static void control(ProbeContext context, String path) {
        context.sandbox().writeFile(path, CONTROL, context.workingDirectory());
        String absolute = path.startsWith("/") ? path : context.paths().in(path);
        holds(context, absolute, CONTROL, "the positive control " + path);
    }
}
