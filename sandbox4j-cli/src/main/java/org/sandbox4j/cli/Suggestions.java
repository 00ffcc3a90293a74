package org.sandbox4j.cli;

import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * The names a mistyped option or command was likely meant to be: those a typo or two away
 * (a swapped pair counts once, as in "rnu"), or those it begins. picocli's own suggestions
 * compare letter pairs, which a swap or a short word defeats ("--ot" finds nothing).
 */
final class Suggestions {

    /** Offered at most: more is a list to read, not a suggestion. */
    static final int MAX = 3;
    /** Edits a name of this length or longer may be away; a shorter one, one. */
    private static final int LONG_NAME = 5;
    /** A typed prefix this long names what it begins ("--tim" for --timeout). */
    private static final int MIN_PREFIX = 3;
    /** Longer than any name: compared with none (the distance table grows with the word). */
    private static final int MAX_WORD = 64;

    private Suggestions() {
    }

    /** For {@code typed}, unknown to {@code spec}: its options when it looks like one, else its subcommands. */
    static List<String> of(String typed, CommandSpec spec) {
        String word = typed.contains("=") ? typed.substring(0, typed.indexOf('=')) : typed;
        Collection<String> names = word.startsWith("-")
                ? spec.options().stream().filter(option -> !option.hidden()).map(OptionSpec::names)
                        .flatMap(java.util.Arrays::stream).toList()
                : spec.subcommands().keySet();
        return among(word, names);
    }

    /** The {@code names} {@code word} was likely meant to be, nearest first; none for a word no name is that long. */
    static List<String> among(String word, Collection<String> names) {
        if (word.length() > MAX_WORD) {
            return List.of();
        }
        Map<String, Integer> near = names.stream().distinct()
                .collect(Collectors.toMap(name -> name, name -> distance(word, name)));
        int allowed = bare(word).length() >= LONG_NAME ? 2 : 1;
        return near.entrySet().stream()
                .filter(entry -> entry.getValue() <= allowed
                        || bare(word).length() >= MIN_PREFIX && entry.getKey().startsWith(word))
                .sorted(Comparator.comparingInt(Map.Entry<String, Integer>::getValue)
                        .thenComparing(Map.Entry::getKey))
                .limit(MAX).map(Map.Entry::getKey).toList();
    }

    private static String bare(String word) {
        return word.replaceFirst("^-+", "");
    }

    /** Edits from {@code a} to {@code b}: insertions, deletions, substitutions, and swaps of neighbours. */
    static int distance(String a, String b) {
        int[][] d = new int[a.length() + 1][b.length() + 1];
        for (int i = 0; i <= a.length(); i++) {
            d[i][0] = i;
        }
        for (int j = 0; j <= b.length(); j++) {
            d[0][j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                d[i][j] = Math.min(Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + cost);
                if (i > 1 && j > 1 && a.charAt(i - 1) == b.charAt(j - 2) && a.charAt(i - 2) == b.charAt(j - 1)) {
                    d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
                }
            }
        }
        return d[a.length()][b.length()];
    }
}
