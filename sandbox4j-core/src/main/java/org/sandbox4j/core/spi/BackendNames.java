package org.sandbox4j.core.spi;

/** The one rule for a backend's name, which routers select backends by and every message quotes. */
public final class BackendNames {

    private BackendNames() {
    }

    /**
     * Returns {@code name} when it is usable as a backend's name.
     *
     * @throws IllegalArgumentException when it is null or blank
     */
    public static String require(String name) {
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("a backend needs a non-blank name: routers select backends by it");
        }
        return name;
    }
}
