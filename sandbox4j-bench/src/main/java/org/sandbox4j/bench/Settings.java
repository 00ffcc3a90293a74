package org.sandbox4j.bench;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * What one run of {@link SideBySide} measures, from its arguments:
 * {@code [ROUNDS] [--rounds N] [--warmup N] [--rows a,b,c] [--held 0,100,1000]}.
 */
record Settings(int rounds, int warmup, Set<Row> rows, List<Integer> held) {

    static final int DEFAULT_ROUNDS = 20;
    static final int DEFAULT_WARMUP = 2;
    static final List<Integer> DEFAULT_HELD = List.of(0, 100, 1000);
    /** More held sandboxes than this is surely a typo (each is a process and a tmpfs). */
    static final int MAX_HELD = 10_000;
    static final String USAGE = "usage: SideBySide [ROUNDS] [--rounds N] [--warmup N] [--rows " + Row.names()
            + "] [--held 0,100,1000]";

    Settings {
        if (rounds < 1) {
            throw new IllegalArgumentException("at least one round, not " + rounds);
        }
        if (warmup < 0) {
            throw new IllegalArgumentException("warm-up rounds cannot be negative: " + warmup);
        }
        rows = rows.isEmpty() ? EnumSet.noneOf(Row.class) : EnumSet.copyOf(rows);
        held = List.copyOf(held);
        for (int count : held) {
            if (count < 0 || count > MAX_HELD) {
                throw new IllegalArgumentException("--held takes counts from 0 to " + MAX_HELD + ", not " + count);
            }
        }
    }

    /** @throws IllegalArgumentException a word it does not know, or a bad value, with the usage */
    static Settings parse(String... arguments) {
        int rounds = DEFAULT_ROUNDS;
        int warmup = DEFAULT_WARMUP;
        Set<Row> rows = EnumSet.allOf(Row.class);
        List<Integer> held = DEFAULT_HELD;
        for (int i = 0; i < arguments.length; i++) {
            String word = arguments[i];
            switch (word) {
                case "--rounds" -> rounds = number(value(arguments, ++i, word));
                case "--warmup" -> warmup = number(value(arguments, ++i, word));
                case "--rows" -> rows = rowSet(value(arguments, ++i, word));
                case "--held" -> held = counts(value(arguments, ++i, word));
                default -> {
                    if (word.startsWith("-")) {
                        throw new IllegalArgumentException("unknown option '" + word + "'\n" + USAGE);
                    }
                    rounds = number(word);
                }
            }
        }
        return new Settings(rounds, warmup, rows, held);
    }

    boolean wants(Row row) {
        return rows.contains(row);
    }

    private static String value(String[] arguments, int index, String option) {
        if (index >= arguments.length) {
            throw new IllegalArgumentException(option + " needs a value\n" + USAGE);
        }
        return arguments[index];
    }

    private static int number(String text) {
        try {
            return Integer.parseInt(text.strip());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("not a whole number: '" + text + "'\n" + USAGE);
        }
    }

    private static Set<Row> rowSet(String text) {
        Set<Row> rows = EnumSet.noneOf(Row.class);
        for (String name : text.split(",")) {
            if (!name.isBlank()) {
                rows.add(Row.parse(name));
            }
        }
        return rows;
    }

    private static List<Integer> counts(String text) {
        List<Integer> counts = new ArrayList<>();
        for (String count : text.split(",")) {
            if (!count.isBlank()) {
                counts.add(number(count));
            }
        }
        return counts.stream().distinct().sorted().toList();
    }
}
