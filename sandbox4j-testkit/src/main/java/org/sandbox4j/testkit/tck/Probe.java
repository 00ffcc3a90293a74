package org.sandbox4j.testkit.tck;

import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;
import org.sandbox4j.core.Capability;

/**
 * One attack or check, with a stable name (a backend's report refers to it for good) and the
 * reason it exists.
 *
 * @param name     stable, kebab-case, unique within its suite
 * @param why      what a failure means, in one sentence
 * @param requires capabilities beyond the suite's gate this probe needs; without them it is skipped, and listed
 * @param body     the probe itself
 */
public record Probe(String name, String why, Set<Capability> requires, ProbeBody body) {

    public Probe {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(why, "why");
        requires = requires.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(requires));
        Objects.requireNonNull(body, "body");
    }

    public static Probe of(String name, String why, ProbeBody body) {
        return new Probe(name, why, Set.of(), body);
    }

    public static Probe of(String name, String why, Set<Capability> requires, ProbeBody body) {
        return new Probe(name, why, requires, body);
    }
}
