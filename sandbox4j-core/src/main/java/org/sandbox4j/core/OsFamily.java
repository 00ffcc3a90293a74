package org.sandbox4j.core;

/** The guest's path grammar and argument quoting. Never a statement of what is installed. */
public enum OsFamily implements WireValue {
    POSIX,
    WINDOWS;

    public static OsFamily parse(String value) {
        return WireValue.parse(OsFamily.class, value);
    }
}
