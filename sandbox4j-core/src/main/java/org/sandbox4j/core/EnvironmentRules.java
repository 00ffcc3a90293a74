package org.sandbox4j.core;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import org.sandbox4j.core.spi.GuestText;

/** The one rule for the variables a caller adds to a guest command's environment ({@link ExecOptions}, {@link ProcessOptions}). */
final class EnvironmentRules {

    private EnvironmentRules() {
    }

    /**
     * An unmodifiable copy of {@code environment}, in its order.
     *
     * @throws IllegalArgumentException null, a name that is not a portable shell name, a null value or a NUL in one
     */
    static Map<String, String> checked(Map<String, String> environment) {
        if (environment == null) {
            throw new IllegalArgumentException("the environment must be a map (empty for none), not null");
        }
        Map<String, String> copy = Collections.unmodifiableMap(new LinkedHashMap<>(environment));
        for (Map.Entry<String, String> variable : copy.entrySet()) {
            String name = variable.getKey();
            if (name == null || !isPortableName(name)) {
                throw new IllegalArgumentException("not a valid environment variable name: " + GuestText.quote(name)
                        + "; use letters, digits and '_', not starting with a digit (a shell drops any other name)");
            }
            String value = variable.getValue();
            if (value == null) {
                throw new IllegalArgumentException("environment variable '" + name + "' has no value (null)");
            }
            if (value.indexOf('\0') >= 0) {
                throw new IllegalArgumentException("the value of environment variable '" + name
                        + "' contains a NUL character, which no process can receive");
            }
        }
        return copy;
    }

    /** A name every shell keeps: letters, digits and '_', not starting with a digit. */
    private static boolean isPortableName(String name) {
        if (name.isEmpty() || Character.isDigit(name.charAt(0))) {
            return false;
        }
        return name.chars().allMatch(c -> (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
                || c == '_');
    }
}
