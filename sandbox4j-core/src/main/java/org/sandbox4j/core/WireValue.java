package org.sandbox4j.core;

import org.sandbox4j.core.spi.GuestText;
import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * An enum constant with a stable serialised spelling. The wire value is the contract; the Java
 * name is not: each one is pinned by {@code VocabularyTest}, so renaming a constant fails there.
 * Parsing refuses anything that is not exactly a wire value: a refusal there is the policy (an old
 * or mistyped declaration must never be promoted to some other member).
 */
public interface WireValue {

    /**
     * The stable serialised spelling, e.g. {@code os_process}: the constant's name in lower case,
     * unless the enum spells it otherwise (as {@link Egress#DENY_ALL}'s {@code deny-all}).
     */
    default String wire() {
        return ((Enum<?>) this).name().toLowerCase(Locale.ROOT);
    }

    /**
     * The one parser every vocabulary enum delegates to.
     *
     * @throws IllegalArgumentException naming the type and listing every valid value
     */
    static <E extends Enum<E> & WireValue> E parse(Class<E> type, String value) {
        if (value != null) {
            for (E constant : type.getEnumConstants()) {
                if (constant.wire().equals(value)) {
                    return constant;
                }
            }
        }
        throw new IllegalArgumentException(
                (value == null ? "null" : GuestText.quote(value)) + " is not a valid " + type.getSimpleName()
                        + "; valid values: " + wireValues(type));
    }

    /** The wire values of {@code type}, in declaration order, comma separated. */
    static <E extends Enum<E> & WireValue> String wireValues(Class<E> type) {
        return Arrays.stream(type.getEnumConstants()).map(WireValue::wire).collect(Collectors.joining(", "));
    }
}
