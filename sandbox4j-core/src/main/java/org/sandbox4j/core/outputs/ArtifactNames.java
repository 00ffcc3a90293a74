package org.sandbox4j.core.outputs;

import java.nio.charset.StandardCharsets;
import java.text.Normalizer;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.SortedSet;
import java.util.StringJoiner;
import java.util.TreeSet;

import org.sandbox4j.core.spi.GuestPaths;
import org.sandbox4j.core.spi.GuestText;
import org.sandbox4j.core.NameNormalization;
import org.sandbox4j.core.SandboxArtifactNameInvalid;

/**
 * The rules for the names artifacts land under, implemented once. A name is a relative,
 * {@code /}-separated path whose every segment is a real name: no {@code ""}, {@code "."} or
 * {@code ".."}, no backslash, no ASCII control character, valid UTF-8, at most
 * {@value #MAX_ARTIFACT_NAME_BYTES} UTF-8 bytes. Always check the <em>delivered</em> spelling
 * (after the sink's normalisation): NFC can make a name longer.
 *
 * <p>Names are not made portable automatically: {@code CON} and {@code a:b} are valid names on a
 * POSIX sink. A host that lands on Windows opts in with {@link #portableName}.
 */
public final class ArtifactNames {

    /** The longest artifact name, in UTF-8 bytes (the common file-name limit). */
    public static final int MAX_ARTIFACT_NAME_BYTES = 255;

    /** ASCII control characters are 0 to 31 (DEL is not one). */
    private static final char FIRST_PRINTABLE_ASCII = ' ';
    private static final char PORTABLE_REPLACEMENT = '_';
    private static final String WINDOWS_FORBIDDEN_CHARACTERS = "<>:\"|?*";
    private static final String SUPERSCRIPT_DIGITS = "\u00b9\u00b2\u00b3";
    private static final Set<String> WINDOWS_RESERVED_STEMS = windowsReservedStems();

    private ArtifactNames() {
    }

    /**
     * Refuses a name that cannot land safely, naming the rule it breaks.
     *
     * @throws SandboxArtifactNameInvalid empty; a backslash; a leading {@code /}; an ASCII control
     *                                    character (the message lists their ordinals); a lone
     *                                    surrogate; an empty, {@code .} or {@code ..} segment; more
     *                                    than {@value #MAX_ARTIFACT_NAME_BYTES} UTF-8 bytes
     */
    public static void validate(String name) {
        if (name.isEmpty()) {
            throw new SandboxArtifactNameInvalid("an artifact name cannot be empty; name the file it lands as");
        }
        if (name.indexOf('\\') >= 0) {
            throw new SandboxArtifactNameInvalid("the artifact name " + GuestText.quote(name)
                    + " contains a backslash; separate directories with '/'");
        }
        if (name.startsWith("/")) {
            throw new SandboxArtifactNameInvalid("the artifact name " + GuestText.quote(name)
                    + " starts with '/'; an artifact name is relative to the sink");
        }
        SortedSet<Integer> controls = controlOrdinals(name);
        if (!controls.isEmpty()) {
            // The name itself is not quoted: it holds the very characters (newlines...) being refused.
            throw new SandboxArtifactNameInvalid("an artifact name contains ASCII control characters (ordinals "
                    + joined(controls) + "); remove them");
        }
        if (!StandardCharsets.UTF_8.newEncoder().canEncode(name)) {
            throw new SandboxArtifactNameInvalid("an artifact name contains a lone surrogate and cannot be encoded "
                    + "as UTF-8; use a well-formed Unicode name");
        }
        for (String segment : name.split("/", -1)) {
            if (segment.equals("..")) {
                throw new SandboxArtifactNameInvalid("the artifact name " + GuestText.quote(name)
                        + " has a '..' segment; an artifact lands inside the sink only");
            }
            if (segment.isEmpty() || segment.equals(".")) {
                throw new SandboxArtifactNameInvalid("the artifact name " + GuestText.quote(name)
                        + " has an empty or '.' segment; spell each directory once, without '//', './' or a trailing '/'");
            }
        }
        int bytes = name.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > MAX_ARTIFACT_NAME_BYTES) {
            throw new SandboxArtifactNameInvalid("the artifact name " + GuestText.quote(name) + " is " + bytes
                    + " UTF-8 bytes, over the limit of " + MAX_ARTIFACT_NAME_BYTES + "; choose a shorter name");
        }
    }

    /**
     * The name a sink with {@code normalization} delivers {@code declaredName} under: NFC unless
     * {@link NameNormalization#NONE}.
     */
    public static String deliveredName(String declaredName, NameNormalization normalization) {
        return normalization == NameNormalization.NONE
                ? declaredName
                : Normalizer.normalize(declaredName, Normalizer.Form.NFC);
    }

    /**
     * The key two landing names collide on: NFC, then lower case (not case folding, so
     * {@code Straße} and {@code Strasse} stay apart), then POSIX-normalised.
     */
    public static String collisionKey(String deliveredName) {
        String composed = Normalizer.normalize(deliveredName, Normalizer.Form.NFC);
        return GuestPaths.normalize(composed.toLowerCase(Locale.ROOT));
    }

    /**
     * A spelling of {@code name} that Windows accepts. Opt-in, never applied automatically. Per
     * segment: each of {@code < > : " | ? *} and each ASCII control character becomes {@code _};
     * trailing dots and spaces are stripped; a reserved device stem (the part before the first
     * dot, case-insensitive: {@code CON PRN AUX NUL COM1-9 LPT1-9} and {@code COM}/{@code LPT}
     * with a superscript 1-3) gets a {@code _} appended ({@code CON.txt} becomes
     * {@code CON_.txt}); a segment left empty becomes {@code _}.
     */
    public static String portableName(String name) {
        StringJoiner portable = new StringJoiner("/");
        for (String segment : name.split("/", -1)) {
            portable.add(portableSegment(segment));
        }
        return portable.toString();
    }

    private static String portableSegment(String segment) {
        StringBuilder replaced = new StringBuilder(segment.length());
        for (int i = 0; i < segment.length(); i++) {
            char c = segment.charAt(i);
            boolean forbidden = c < FIRST_PRINTABLE_ASCII || WINDOWS_FORBIDDEN_CHARACTERS.indexOf(c) >= 0;
            replaced.append(forbidden ? PORTABLE_REPLACEMENT : c);
        }
        int end = replaced.length();
        while (end > 0 && (replaced.charAt(end - 1) == '.' || replaced.charAt(end - 1) == ' ')) {
            end--;
        }
        String stripped = replaced.substring(0, end);
        if (stripped.isEmpty()) {
            return String.valueOf(PORTABLE_REPLACEMENT);
        }
        int dot = stripped.indexOf('.');
        String stem = dot < 0 ? stripped : stripped.substring(0, dot);
        if (WINDOWS_RESERVED_STEMS.contains(stem.toUpperCase(Locale.ROOT))) {
            return stem + PORTABLE_REPLACEMENT + stripped.substring(stem.length());
        }
        return stripped;
    }

    private static Set<String> windowsReservedStems() {
        List<String> stems = new ArrayList<>(List.of("CON", "PRN", "AUX", "NUL"));
        for (String device : List.of("COM", "LPT")) {
            for (char digit = '1'; digit <= '9'; digit++) {
                stems.add(device + digit);
            }
            for (char superscript : SUPERSCRIPT_DIGITS.toCharArray()) {
                stems.add(device + superscript);
            }
        }
        return Set.copyOf(stems);
    }

    /** Each distinct ordinal once, ascending: at most 32 entries, whatever the name's length. */
    private static SortedSet<Integer> controlOrdinals(String name) {
        SortedSet<Integer> ordinals = new TreeSet<>();
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c < FIRST_PRINTABLE_ASCII) {
                ordinals.add((int) c);
            }
        }
        return ordinals;
    }

    private static String joined(SortedSet<Integer> ordinals) {
        StringJoiner list = new StringJoiner(", ");
        ordinals.forEach(ordinal -> list.add(String.valueOf(ordinal)));
        return list.toString();
    }
}
