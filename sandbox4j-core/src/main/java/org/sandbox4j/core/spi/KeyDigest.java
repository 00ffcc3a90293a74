package org.sandbox4j.core.spi;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;

/**
 * The one way a backend turns labels into names and record fields: SHA-256, lower-case hex. A
 * provider's own record (a label, a directory name, a properties file) then never carries what a
 * label holds, and the same mapping answers both writing and querying.
 */
public final class KeyDigest {

    private static final String ALGORITHM = "SHA-256";

    private KeyDigest() {
    }

    /** SHA-256 of the UTF-8 bytes of {@code value}, as 64 lower-case hex digits. */
    public static String sha256Hex(String value) {
        return HexFormat.of().formatHex(digest().digest(value.getBytes(StandardCharsets.UTF_8)));
    }

    /**
     * SHA-256 over several parts, each prefixed with its length, so no two different part lists
     * ({@code ["a|b"]} and {@code ["a", "b"]}) can digest alike.
     */
    public static String ofParts(List<String> parts) {
        MessageDigest digest = digest();
        for (String part : parts) {
            byte[] bytes = part.getBytes(StandardCharsets.UTF_8);
            digest.update((bytes.length + ":").getBytes(StandardCharsets.US_ASCII));
            digest.update(bytes);
        }
        return HexFormat.of().formatHex(digest.digest());
    }

    private static MessageDigest digest() {
        try {
            return MessageDigest.getInstance(ALGORITHM);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform must provide " + ALGORITHM, e);
        }
    }
}
