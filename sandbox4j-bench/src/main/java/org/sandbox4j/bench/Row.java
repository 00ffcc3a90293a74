package org.sandbox4j.bench;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/** The rows {@link SideBySide} can measure, by the names {@code --rows} takes, in the order they run. */
enum Row {
    EXEC("exec"),
    EXECUTE_CODE("execute-code"),
    STDOUT("stdout"),
    HEAP("heap"),
    READ_LOCAL("read-local"),
    DOCKER_EXEC("docker-exec"),
    DOCKER_WRITE("docker-write"),
    DOCKER_READ("docker-read"),
    RUNSC_WRITE("runsc-write"),
    FLEET("fleet"),
    LAUNCHER("launcher");

    private final String wire;

    Row(String wire) {
        this.wire = wire;
    }

    String wire() {
        return wire;
    }

    /** @throws IllegalArgumentException for a name that is not a row's, listing the names */
    static Row parse(String name) {
        String wanted = name.strip().toLowerCase(Locale.ROOT);
        for (Row row : values()) {
            if (row.wire.equals(wanted)) {
                return row;
            }
        }
        throw new IllegalArgumentException("no row named '" + name + "'; the rows are " + names());
    }

    static String names() {
        return Arrays.stream(values()).map(Row::wire).collect(Collectors.joining(","));
    }
}
