package org.sandbox4j.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The launcher's start-up cache on a real JDK 25+: made in the background from the first run,
 * used by the next, and a corrupt, truncated or stale one never changes what the command prints.
 * The launcher and a copy of the jar run from a tree of the test's own, so the cache is the test's.
 */
class LauncherCacheIT {

    /** Where JDKs are installed on the hosts the project builds on. */
    private static final Path JDK_DIRECTORY = Path.of("/usr/lib/jvm");
    private static final int CACHE_JAVA = 25;
    private static final Pattern JAVA_VERSION = Pattern.compile("(?m)^JAVA_VERSION=\"(\\d+)");
    /** How long the background job may take to make the cache on a loaded machine. */
    private static final Duration CACHE_WAIT = Duration.ofMinutes(3);
    private static final String PROGRAM = "print(6 * 7)";
    private static final String DEBUG = "SANDBOX4J_LAUNCHER_DEBUG";

    @TempDir
    Path tree;

    @Test
    void theFirstRunMakesTheCacheTheNextUsesItAndABadOneChangesNothing() throws IOException {
        Path jdk = jdkWithCache().orElse(null);
        assumeTrue(jdk != null, "no JDK " + CACHE_JAVA + "+ under " + JDK_DIRECTORY);
        Path launcher = ownTree();
        Path target = tree.resolve("sandbox4j-cli/target");

        CliProcess.Result first = run(launcher, jdk, true);
        assertThat(first.stderr()).contains("start-up cache: recording");
        Path cache = awaitCache(target);
        assertThat(leftovers(target)).as("the recording and the temporary file are gone").isEmpty();

        FileTime made = Files.getLastModifiedTime(cache);
        CliProcess.Result second = run(launcher, jdk, true);
        assertThat(second.stderr()).contains("start-up cache: " + cache).doesNotContain("recording");
        assertThat(Files.getLastModifiedTime(cache)).isEqualTo(made);

        byte[] good = Files.readAllBytes(cache);
        Files.write(cache, "not an AOT cache".repeat(1000).getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        run(launcher, jdk, false);
        Files.write(cache, java.util.Arrays.copyOf(good, good.length / 2));
        run(launcher, jdk, false);

        // A new jar: a new cache name; the old cache under it is stale (the JVM checks the jar) and unused.
        Path jar = target.resolve("sandbox4j.jar");
        Files.setLastModifiedTime(jar, FileTime.from(Instant.now().minusSeconds(60)));
        CliProcess.Result renamed = run(launcher, jdk, true);
        assertThat(renamed.stderr()).contains("start-up cache: recording");
        Path next = awaitCache(target);
        assertThat(next).isNotEqualTo(cache);
        assertThat(cache).as("the cache of the old jar is removed").doesNotExist();
        Files.write(next, good);
        run(launcher, jdk, false);
    }

    /** Runs the program through the launcher and checks it printed exactly its output, exit 0. */
    private CliProcess.Result run(Path launcher, Path jdk, boolean debug) {
        try (CliProcess cli = CliProcess.fresh().env("SANDBOX4J_JAVA_HOME", jdk.toString())) {
            if (debug) {
                cli.env(DEBUG, "1");
            }
            CliProcess.Result result = cli.runProgram(List.of(launcher.toString(), "run", "--backend", "bubblewrap",
                    "--floor", "container", "-e", PROGRAM), new byte[0]);
            assertThat(result.exitCode()).as(result.toString()).isZero();
            assertThat(result.stdout()).as(result.toString()).isEqualTo("42\n");
            if (!debug) {
                assertThat(result.stderr()).as("nothing about the cache without " + DEBUG).isEmpty();
            }
            return result;
        }
    }

    private Path ownTree() throws IOException {
        Path target = Files.createDirectories(tree.resolve("sandbox4j-cli/target"));
        Files.copy(Launcher.jar(), target.resolve("sandbox4j.jar"));
        Path launcher = tree.resolve("sandbox4j");
        Files.copy(Launcher.path(), launcher, StandardCopyOption.COPY_ATTRIBUTES);
        return launcher;
    }

    private static Path awaitCache(Path target) {
        Instant deadline = Instant.now().plus(CACHE_WAIT);
        while (Instant.now().isBefore(deadline)) {
            List<Path> caches = list(target, name -> name.endsWith(".aot"));
            if (!caches.isEmpty() && leftovers(target).isEmpty()) {
                assertThat(caches).hasSize(1);
                assertThat(list(target, name -> name.endsWith(".failed"))).isEmpty();
                return caches.get(0);
            }
            try {
                Thread.sleep(200);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
        throw new AssertionError("no start-up cache after " + CACHE_WAIT + " in " + target + ": "
                + list(target, name -> true));
    }

    private static List<Path> leftovers(Path target) {
        return list(target, name -> name.endsWith(".aotconf") || name.endsWith(".tmp"));
    }

    private static List<Path> list(Path directory, java.util.function.Predicate<String> named) {
        try (Stream<Path> files = Files.list(directory)) {
            return files.filter(file -> named.test(file.getFileName().toString())).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A JDK of at least {@link #CACHE_JAVA}, known by its release file as the launcher knows it. */
    private static Optional<Path> jdkWithCache() {
        if (!Files.isDirectory(JDK_DIRECTORY)) {
            return Optional.empty();
        }
        try (Stream<Path> jdks = Files.list(JDK_DIRECTORY)) {
            return jdks.filter(jdk -> Files.isExecutable(jdk.resolve("bin/java")))
                    .filter(jdk -> feature(jdk) >= CACHE_JAVA).sorted().findFirst();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static int feature(Path jdk) {
        try {
            Matcher version = JAVA_VERSION.matcher(Files.readString(jdk.resolve("release")));
            return version.find() ? Integer.parseInt(version.group(1)) : 0;
        } catch (IOException e) {
            return 0;
        }
    }
}
