package org.sandbox4j.local;

import java.nio.charset.Charset;
import java.nio.charset.CharsetEncoder;
import java.util.List;

/**
 * The JVM hands a child process its arguments in its platform encoding ({@code sun.jnu.encoding}).
 * Under a non-UTF-8 locale (a bare {@code C} locale: ASCII) a character it cannot encode silently
 * becomes {@code ?}; refuse that instead of running a different command than the caller wrote.
 */
final class LaunchEncoding {

    private static final Charset PLATFORM = platform();

    private LaunchEncoding() {
    }

    static void requireEncodable(List<String> words, String backendName) {
        CharsetEncoder encoder = PLATFORM.newEncoder();
        for (String word : words) {
            if (!encoder.canEncode(word)) {
                throw new IllegalArgumentException("backend '" + backendName + "' cannot pass a command or variable "
                        + "holding characters the JVM's platform encoding (" + PLATFORM + ") cannot carry; they "
                        + "would reach the guest as '?'. Start the JVM under a UTF-8 locale (LANG=C.UTF-8)");
            }
        }
    }

    private static Charset platform() {
        String name = System.getProperty("sun.jnu.encoding");
        try {
            return name == null ? Charset.defaultCharset() : Charset.forName(name);
        } catch (IllegalArgumentException e) { // an unknown or unsupported charset name
            return Charset.defaultCharset();
        }
    }
}
