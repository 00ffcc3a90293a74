package org.sandbox4j.aca;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.StringJoiner;
import org.sandbox4j.core.spi.KeyDigest;
import org.sandbox4j.core.SandboxKey;

/**
 * The labels a sandbox is created with and queried by: one mapping for both, so a query always
 * finds what a create wrote. A value is kept when it fits the service's 63 characters and holds
 * only characters that survive the comma-joined list filter; otherwise it becomes
 * {@value #HASH_PREFIX} plus the first {@value #HASH_HEX_CHARS} hex digits of its SHA-256 —
 * never a truncation, which would let two conversations share a label.
 */
final class AcaLabels {

    static final String SCOPE = "scope";
    static final String THREAD = "thread";
    static final String AGENT = "agent";
    static final String KIND = "kind";
    /** The keys the backend owns; a spec cannot set them. */
    static final Set<String> RESERVED = Set.of(SCOPE, THREAD, AGENT, KIND);
    /** The service refuses a create with a longer label value. */
    static final int MAX_VALUE_CHARS = 63;
    static final String HASH_PREFIX = "sha256-";
    static final int HASH_HEX_CHARS = 48;
    private static final String KEY_PATTERN = "[A-Za-z0-9][A-Za-z0-9._-]{0,62}";
    private static final String PLAIN_VALUE = "[A-Za-z0-9._-]*";

    private AcaLabels() {
    }

    /** The value as written and as queried. */
    static String value(String raw) {
        if (raw.length() <= MAX_VALUE_CHARS && raw.matches(PLAIN_VALUE)) {
            return raw;
        }
        return HASH_PREFIX + KeyDigest.sha256Hex(raw).substring(0, HASH_HEX_CHARS);
    }

    /** The labels of a new sandbox: the key's three, the kind, then the spec's own. */
    static Map<String, String> forSandbox(SandboxKey key, String kind, Map<String, String> specLabels) {
        Map<String, String> labels = forKey(key);
        labels.put(KIND, value(kind));
        for (Map.Entry<String, String> label : specLabels.entrySet()) {
            String labelKey = label.getKey();
            if (RESERVED.contains(labelKey)) {
                throw new IllegalArgumentException("the spec label '" + labelKey + "' is one the backend sets itself "
                        + "(" + String.join(", ", List.of(SCOPE, THREAD, AGENT, KIND)) + "); rename it");
            }
            if (!labelKey.matches(KEY_PATTERN)) {
                throw new IllegalArgumentException("the spec label key '" + labelKey + "' must match " + KEY_PATTERN);
            }
            labels.put(labelKey, value(label.getValue()));
        }
        return labels;
    }

    /** The three labels that find every sandbox of one key (every kind). */
    static Map<String, String> forKey(SandboxKey key) {
        Map<String, String> labels = conversation(key.scope(), key.threadId());
        labels.put(AGENT, value(key.agentDir()));
        return labels;
    }

    /** The two labels that find every sandbox of one conversation. */
    static Map<String, String> conversation(String scope, String threadId) {
        Map<String, String> labels = new LinkedHashMap<>();
        labels.put(SCOPE, value(scope));
        labels.put(THREAD, value(threadId));
        return labels;
    }

    /** {@code k1=v1,k2=v2}, the list filter (the service ANDs the pairs). */
    static String filter(Map<String, String> labels) {
        StringJoiner joined = new StringJoiner(",");
        labels.forEach((k, v) -> joined.add(k + "=" + v));
        return joined.toString();
    }
}
