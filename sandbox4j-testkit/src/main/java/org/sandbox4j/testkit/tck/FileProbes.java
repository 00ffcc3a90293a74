package org.sandbox4j.testkit.tck;

import java.nio.charset.StandardCharsets;
import org.sandbox4j.core.SandboxPathNotConfined;

/**
 * What the file suites share: the FILES_OUT layout, and the guest-side checks that prove a
 * refusal damaged and planted nothing. Every check goes through the {@link GuestSide}, never
 * through the file method under test.
 */
final class FileProbes {

    /** What a positive control writes or plants. */
    static final byte[] CONTROL = utf8("a positive control\n");

    private FileProbes() {
    }

    /**
     * The layout of the reference's FILES_OUT suite: a file inside, a plain file where a directory
     * might be expected, the secret and the nested secret outside, {@code link-dir -> outside} and
     * {@code link-file -> secret}.
     */
    static void plantLayout(ProbeContext context) {
        ConformancePaths paths = context.paths();
        GuestSide guest = context.guest();
        guest.plantFile(paths.inside(), ConformancePaths.INSIDE);
        guest.plantFile(paths.plain(), ConformancePaths.PLAIN);
        guest.plantFile(paths.secret(), ConformancePaths.SECRET);
        guest.plantFile(paths.nestedSecret(), ConformancePaths.SECRET);
        guest.plantSymlink(paths.linkedDirectory(), paths.outside());
        guest.plantSymlink(paths.linkedFile(), paths.secret());
    }

    /** The planted secrets are still there and unchanged. */
    static void secretsIntact(ProbeContext context) {
        ConformancePaths paths = context.paths();
        holds(context, paths.secret(), ConformancePaths.SECRET, "the secret");
        holds(context, paths.nestedSecret(), ConformancePaths.SECRET, "the nested secret");
    }

    /** {@code call} is refused as an escape ({@code SandboxPathNotConfined}), and the planted secrets are intact. */
    static void refusedAsAnEscape(ProbeContext context, String what, Check.Call call) {
        Check.refusedWith(SandboxPathNotConfined.class, what, call);
        secretsIntact(context);
    }

    /** A regular file is at {@code absolutePath} holding exactly {@code expected}. */
    static void holds(ProbeContext context, String absolutePath, byte[] expected, String what) {
        Check.that(context.guest().isRegularFile(absolutePath), what + " at " + absolutePath
                + " is no longer a regular file");
        Check.equal(expected, context.guest().read(absolutePath), what + " at " + absolutePath);
    }

    /** Nothing (not even a dangling link) is at {@code absolutePath}. */
    static void absent(ProbeContext context, String absolutePath, String what) {
        Check.that(!context.guest().exists(absolutePath), what + ": something exists at " + absolutePath);
    }

    /** A link is still at {@code absolutePath}: it was neither followed into nor replaced. */
    static void stillALink(ProbeContext context, String absolutePath) {
        Check.that(context.guest().isSymlink(absolutePath), "the link at " + absolutePath
                + " was replaced or removed");
    }

    /**
     * Proves that reading through {@code link} (a planted link, or a path through one) reaches
     * {@code expected} outside, so the refusal probes attack a real escape. A guest side whose links
     * lead nowhere skips this, with its reason.
     */
    static void leadsOutside(ProbeContext context, String link, byte[] expected) {
        Check.equal(expected, context.guest().readThroughLinks(link), "reading through the planted link " + link);
    }

    /**
     * Plants {@code content} outside as {@code name}, and the links {@code reaching-dir -> <outside>}
     * and {@code reaching-file -> <outside>/name}, then proves that reading through each reaches it.
     */
    static void plantedLinksLeadOutside(ProbeContext context, String name, byte[] content) {
        ConformancePaths paths = context.paths();
        String target = paths.outside() + "/" + name;
        context.guest().plantFile(target, content);
        context.guest().plantSymlink(paths.in("reaching-dir"), paths.outside());
        context.guest().plantSymlink(paths.in("reaching-file"), target);
        leadsOutside(context, paths.in("reaching-dir/" + name), content);
        leadsOutside(context, paths.in("reaching-file"), content);
    }

    static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
