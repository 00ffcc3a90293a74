package org.sandbox4j.core;

import java.util.Collection;
import java.util.Collections;
import java.util.EnumSet;
import java.util.Set;
import java.util.stream.Collectors;

/** Immutable enum sets and their text for messages: one implementation for every type here. */
final class Sets {

    private Sets() {
    }

    /** An unmodifiable copy in declaration order; rejects null elements. */
    static <E extends Enum<E>> Set<E> copyOf(Class<E> type, Collection<E> values) {
        EnumSet<E> copy = EnumSet.noneOf(type);
        for (E value : values) {
            if (value == null) {
                throw new NullPointerException("null element in a set of " + type.getSimpleName());
            }
            copy.add(value);
        }
        return Collections.unmodifiableSet(copy);
    }

    /** Wire values sorted alphabetically and comma separated, or {@code whenEmpty}. */
    static String describe(Collection<? extends WireValue> values, String whenEmpty) {
        if (values.isEmpty()) {
            return whenEmpty;
        }
        return values.stream().map(WireValue::wire).sorted().collect(Collectors.joining(", "));
    }
}
