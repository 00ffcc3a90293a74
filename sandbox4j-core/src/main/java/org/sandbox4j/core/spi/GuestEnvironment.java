package org.sandbox4j.core.spi;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The environment every guest command starts from, the same on every backend; the host's own
 * never reaches a guest. The caller's {@code ExecOptions.environment()} is laid over it.
 */
public final class GuestEnvironment {

    /** The system directories, for a guest whose programs are the host's or whose image sets no PATH. */
    public static final String SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin";

    /** The variables every guest gets, beside the PATH its image sets. */
    public static final Map<String, String> BASE = ordered(
            "HOME", "/tmp",
            "TMPDIR", "/tmp",
            "USER", "sandbox",
            "LOGNAME", "sandbox",
            "LANG", "C.UTF-8",
            "SHELL", "/bin/sh");

    /** {@link #BASE} with {@code PATH} first, set to {@link #SYSTEM_PATH}: for a guest that sees the host's {@code /usr}. */
    public static final Map<String, String> WITH_SYSTEM_PATH = withPathFirst();

    private GuestEnvironment() {
    }

    private static Map<String, String> withPathFirst() {
        Map<String, String> map = new LinkedHashMap<>();
        map.put("PATH", SYSTEM_PATH);
        map.putAll(BASE);
        return Collections.unmodifiableMap(map);
    }

    private static Map<String, String> ordered(String... pairs) {
        Map<String, String> map = new LinkedHashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            map.put(pairs[i], pairs[i + 1]);
        }
        return Collections.unmodifiableMap(map);
    }
}
