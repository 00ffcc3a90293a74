package org.sandbox4j.testkit;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;
import java.util.stream.Collectors;

/** Shared guest layout and a whole-state fingerprint for "nothing was damaged" checks. */
final class Fixtures {

    static final String WORK = "/sandbox4j/work";
    static final String OUTSIDE = "/sandbox4j/outside";

    private Fixtures() {
    }

    /** Everything the sandbox holds, as one comparable string. */
    static String state(InMemorySandbox sandbox) {
        Map<String, byte[]> contents = sandbox.contents();
        String files = contents.entrySet().stream()
                .map(entry -> entry.getKey() + "=" + Base64.getEncoder().encodeToString(entry.getValue()))
                .collect(Collectors.joining(","));
        return "files[" + files + "] links" + sandbox.symlinks() + " dirs" + sandbox.directories()
                + " other" + sandbox.nonRegular();
    }

    static String text(byte[] bytes) {
        return new String(bytes, StandardCharsets.UTF_8);
    }

    static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
