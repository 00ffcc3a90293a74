package org.sandbox4j.core.spi;

import org.sandbox4j.core.EntryKind;
import org.sandbox4j.core.SandboxNotADirectory;
import org.sandbox4j.core.SandboxPathNotConfined;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.Example;
import net.jqwik.api.statistics.Statistics;
import net.jqwik.api.statistics.StatisticsReport;

/**
 * Hostile paths built from pieces, checked against an oracle that works on component lists and
 * never calls {@link GuestPaths}.
 */
class GuestPathsPropertiesTest {

    private static final int TRIES = 5000;
    private static final int MAX_PIECES = 14;
    private static final int LONG_SEGMENT_CHARS = 300;

    /** The working directories each property runs against, several spelled unusually. */
    private static final List<String> WORKING_DIRECTORIES = List.of(
            "/sandbox4j/work", "/sandbox4j/work/", "/sandbox4j/work/.", "/", "/work", "//srv//data/", "/a/b/c/../c");

    private static final List<String> PIECES = List.of(
            "..", ".", "", "/", "//", "\\", "..\\..", "...", ". .", ".. ",
            "work", "work-outside", "work2", "sandbox4j", "srv", "data", "a", "b", "c", "sub", "a.txt",
            "\uFF0E\uFF0E", "\uFF0F", "\u2215", "\u2024\u2024", "%2e%2e", "\u00e9", "e\u0301", "\0", "x\0y",
            "/etc", "/sandbox4j/work", "/sandbox4j/work-outside", "/work2", "/srv/data", "/a/b/c",
            "x".repeat(LONG_SEGMENT_CHARS));

    @Provide
    Arbitrary<String> workingDirectories() {
        return Arbitraries.of(WORKING_DIRECTORIES);
    }

    @Provide
    Arbitrary<String> hostilePaths() {
        Arbitrary<List<String>> pieces = Arbitraries.of(PIECES).list().ofMaxSize(MAX_PIECES);
        Arbitrary<String> separators = Arbitraries.of("/", "/", "/", "//", "");
        return Combinators.combine(pieces, separators, Arbitraries.of(true, false))
                .as((parts, separator, absolute) -> (absolute ? "/" : "") + String.join(separator, parts));
    }

    @Property(tries = TRIES)
    @StatisticsReport(StatisticsReport.StatisticsReportMode.OFF)
    void confineEitherRefusesOrReturnsTheOraclePathInside(
            @ForAll("hostilePaths") String path, @ForAll("workingDirectories") String workingDirectory) {
        List<String> base = Oracle.resolve(List.of(), workingDirectory);
        List<String> expected = Oracle.resolve(base, path);
        boolean representable = path.indexOf('\\') < 0 && path.indexOf('\0') < 0;
        boolean inside = representable && Oracle.startsWith(expected, base);
        Statistics.label("outcome").collect(inside ? "accepted" : "refused");
        Statistics.label("outcome").coverage(coverage -> {
            coverage.check("accepted").percentage(share -> share > 10);
            coverage.check("refused").percentage(share -> share > 10);
        });

        if (!inside) {
            assertThatThrownBy(() -> GuestPaths.confine(path, workingDirectory))
                    .isInstanceOf(SandboxPathNotConfined.class);
            return;
        }
        String confined = GuestPaths.confine(path, workingDirectory);
        assertThat(confined).startsWith("/").doesNotContain("//");
        assertThat(Oracle.components(confined)).containsExactlyElementsOf(expected).doesNotContain("..", ".", "");
        assertThat(confined.equals("/") || !confined.endsWith("/")).as("no trailing slash").isTrue();
        assertThat(GuestPaths.confine(confined, workingDirectory)).as("idempotent").isEqualTo(confined);
    }

    @Property(tries = TRIES)
    void relativeToAgreesWithTheOracle(
            @ForAll("hostilePaths") String path, @ForAll("workingDirectories") String base) {
        List<String> baseComponents = Oracle.resolve(List.of(), base);
        Optional<String> expected = path.startsWith("/")
                ? Oracle.below(Oracle.resolve(List.of(), path), baseComponents)
                : Optional.empty(); // a relative path never normalises to an absolute one
        assertThat(GuestPaths.relativeTo(path, base)).isEqualTo(expected);
    }

    @Property(tries = TRIES)
    void directoryChainIsStrictlyIncreasingPrefixes(
            @ForAll("hostilePaths") String path, @ForAll("workingDirectories") String workingDirectory) {
        List<String> expected = Oracle.resolve(Oracle.resolve(List.of(), workingDirectory), path);
        String absolute = "/" + String.join("/", expected);
        List<String> chain = GuestPaths.directoryChain(absolute);

        assertThat(chain).hasSize(expected.size());
        for (int i = 0; i < chain.size(); i++) {
            assertThat(Oracle.components(chain.get(i))).containsExactlyElementsOf(expected.subList(0, i + 1));
        }
        for (int i = 1; i < chain.size(); i++) {
            assertThat(chain.get(i)).startsWith(chain.get(i - 1) + "/");
        }
    }

    @Property(tries = TRIES)
    void theWalkAsksOnlyAboutTheChainInOrderAndStopsAtTheFirstAnswerThatIsNotADirectory(
            @ForAll("hostilePaths") String path,
            @ForAll("workingDirectories") String workingDirectory,
            @ForAll boolean includeSelf,
            @ForAll("kindsByDepth") List<Optional<EntryKind>> kindsByDepth) {
        List<String> base = Oracle.resolve(List.of(), workingDirectory);
        List<String> target = Oracle.resolve(base, path);
        boolean representable = path.indexOf('\\') < 0 && path.indexOf('\0') < 0;
        List<String> asked = new ArrayList<>();
        NoFollowStat stat = guestPath -> {
            asked.add(guestPath);
            int depth = Oracle.components(guestPath).size() - 1;
            return depth < kindsByDepth.size() ? kindsByDepth.get(depth) : Optional.of(EntryKind.DIRECTORY);
        };

        if (!representable || !Oracle.startsWith(target, base)) {
            assertThatThrownBy(() -> GuestPaths.refuseSymlinkedParents(stat, path, workingDirectory, includeSelf))
                    .isInstanceOf(SandboxPathNotConfined.class);
            assertThat(asked).as("nothing is asked about a path that does not confine").isEmpty();
            return;
        }

        List<String> walked = includeSelf || target.isEmpty() ? target : target.subList(0, target.size() - 1);
        Optional<EntryKind> verdict = Optional.empty();
        int expectedAsks = walked.size();
        for (int depth = 0; depth < walked.size(); depth++) {
            Optional<EntryKind> kind = depth < kindsByDepth.size() ? kindsByDepth.get(depth) : Optional.of(EntryKind.DIRECTORY);
            if (kind.isEmpty() || kind.get() != EntryKind.DIRECTORY) {
                verdict = kind;
                expectedAsks = depth + 1;
                break;
            }
        }
        List<String> expectedAsked = new ArrayList<>();
        for (int depth = 0; depth < expectedAsks; depth++) {
            expectedAsked.add("/" + String.join("/", walked.subList(0, depth + 1)));
        }

        try {
            String confined = GuestPaths.refuseSymlinkedParents(stat, path, workingDirectory, includeSelf);
            assertThat(verdict).as("a walk passes only past directories or a missing component")
                    .matches(kind -> kind.isEmpty());
            assertThat(Oracle.components(confined)).containsExactlyElementsOf(target);
        } catch (SandboxPathNotConfined escape) {
            assertThat(verdict).contains(EntryKind.SYMLINK);
        } catch (SandboxNotADirectory notADirectory) {
            assertThat(verdict).hasValueSatisfying(kind -> assertThat(kind).isIn(EntryKind.FILE, EntryKind.OTHER));
        }
        assertThat(asked).as("the walk asks about the chain from the root, in order, and nothing else")
                .containsExactlyElementsOf(expectedAsked);
        assertThat(asked).as("never the root, never a spelling that is not normalised").allSatisfy(guestPath ->
                assertThat(Oracle.components(guestPath)).isNotEmpty().doesNotContain("..", ".", ""));
    }

    /** For each depth below the root, what the stat answers; deeper components are directories. */
    @Provide
    Arbitrary<List<Optional<EntryKind>>> kindsByDepth() {
        Arbitrary<Optional<EntryKind>> kind = Arbitraries.frequencyOf(
                Tuple.of(12, Arbitraries.just(Optional.of(EntryKind.DIRECTORY))),
                Tuple.of(1, Arbitraries.just(Optional.<EntryKind>empty())),
                Tuple.of(1, Arbitraries.just(Optional.of(EntryKind.SYMLINK))),
                Tuple.of(1, Arbitraries.just(Optional.of(EntryKind.FILE))),
                Tuple.of(1, Arbitraries.just(Optional.of(EntryKind.OTHER))));
        return kind.list().ofMaxSize(MAX_PIECES);
    }

    @Property(tries = TRIES)
    void aRefusedPathIsRefusedForEveryWriteAndWalk(
            @ForAll("hostilePaths") String path, @ForAll("workingDirectories") String workingDirectory) {
        List<String> base = Oracle.resolve(List.of(), workingDirectory);
        boolean representable = path.indexOf('\\') < 0 && path.indexOf('\0') < 0;
        if (representable && Oracle.startsWith(Oracle.resolve(base, path), base)) {
            return;
        }
        NoFollowStat everythingIsADirectory = guestPath -> Optional.of(EntryKind.DIRECTORY);
        assertThatThrownBy(() -> GuestPaths.confineWritePath(everythingIsADirectory, path, workingDirectory))
                .isInstanceOf(SandboxPathNotConfined.class);
        assertThatThrownBy(() -> GuestPaths.directoryChain(path, workingDirectory))
                .isInstanceOf(SandboxPathNotConfined.class);
    }

    /**
     * An independent model of POSIX resolution over component lists: split on '/', drop empty and
     * '.', let '..' pop (never above the root). Written without any GuestPaths call.
     */
    static final class Oracle {

        private Oracle() {
        }

        /** Components of {@code path} resolved against the absolute directory {@code from}. */
        static List<String> resolve(List<String> from, String path) {
            List<String> stack = new ArrayList<>(path.startsWith("/") ? List.of() : from);
            for (String component : path.split("/")) {
                switch (component) {
                    case "", "." -> {
                    }
                    case ".." -> {
                        if (!stack.isEmpty()) {
                            stack.remove(stack.size() - 1);
                        }
                    }
                    default -> stack.add(component);
                }
            }
            return stack;
        }

        /** The raw components of an absolute path, as spelled (no resolution). */
        static List<String> components(String absolutePath) {
            assertThat(absolutePath).startsWith("/");
            return absolutePath.equals("/") ? List.of() : Arrays.asList(absolutePath.substring(1).split("/", -1));
        }

        static boolean startsWith(List<String> path, List<String> prefix) {
            return path.size() >= prefix.size() && path.subList(0, prefix.size()).equals(prefix);
        }

        /** The part of {@code path} below {@code base}, joined with '/'; empty when outside. */
        static Optional<String> below(List<String> path, List<String> base) {
            if (!startsWith(path, base)) {
                return Optional.empty();
            }
            return Optional.of(String.join("/", path.subList(base.size(), path.size())));
        }
    }

    @Example
    void theOracleAgreesWithHandWorkedExamples() {
        // Pins the oracle itself, so a wrong oracle cannot make the properties above pass vacuously.
        Map<String, List<String>> examples = Map.of(
                "a/../b", List.of("sandbox4j", "work", "b"),
                "../../..", List.of(),
                "/x//y/./z/..", List.of("x", "y"),
                "./work-outside", List.of("sandbox4j", "work", "work-outside"));
        examples.forEach((path, expected) ->
                assertThat(Oracle.resolve(List.of("sandbox4j", "work"), path)).as(path).isEqualTo(expected));
    }
}
