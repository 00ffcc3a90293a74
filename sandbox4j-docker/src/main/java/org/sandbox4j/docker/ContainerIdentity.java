package org.sandbox4j.docker;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.sandbox4j.core.spi.KeyDigest;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxListing;

/**
 * What a container is called and how it is labelled, derived from its key, kind and what else
 * fixes it (image, runtime, work area, egress). The name is a digest, so every process derives
 * the same one and a second create of it is a conflict to adopt, never a twin. Label values are
 * kept when they pass intact and hashed otherwise (never truncated), with the same mapping on
 * write and on query, so any process can select a conversation's containers from the engine.
 *
 * @param name   the container's name
 * @param labels its labels (the volume of its work area carries the same)
 */
record ContainerIdentity(String name, Map<String, String> labels) {

    /** Every name starts with this, so {@code docker ps} shows what is ours. */
    static final String NAME_PREFIX = "sandbox4j-";
    /** Hex digits of the name's digest: 96 bits, no collision in any engine's lifetime. */
    static final int NAME_DIGEST_HEX = 24;
    /** The work area's volume is named after its container with this suffix. */
    static final String VOLUME_SUFFIX = "-work";

    static final String LABEL_PREFIX = "org.sandbox4j.";
    static final String LABEL_BACKEND = LABEL_PREFIX + "backend";
    static final String LABEL_SCOPE = LABEL_PREFIX + "scope";
    static final String LABEL_THREAD = LABEL_PREFIX + "thread";
    static final String LABEL_THREAD_DIGEST = LABEL_PREFIX + "thread-digest";
    static final String LABEL_AGENT = LABEL_PREFIX + "agent";
    static final String LABEL_KIND = LABEL_PREFIX + "kind";
    /** Which mount point the work area was created at (the parent of the spec's work dir). */
    static final String LABEL_WORK_AREA = LABEL_PREFIX + "work-area";
    /**
     * On a retirement record (a volume: the engine cannot relabel a container), the id of the
     * container taken out of service; the record also carries that container's identity labels.
     */
    static final String LABEL_RETIRED = LABEL_PREFIX + "retired";

    /** The longest label value kept as is; longer ones are hashed. */
    static final int MAX_PLAIN_VALUE = 63;
    static final String HASHED_PREFIX = "sha256-";
    static final int HASHED_HEX = 48;
    private static final Pattern PLAIN = Pattern.compile("[A-Za-z0-9._-]+");
    private static final Pattern LOOKS_HASHED = Pattern.compile("sha256-[0-9a-f]{" + HASHED_HEX + "}");

    static ContainerIdentity of(String backend, SandboxKey key, String kind, String workArea, String fingerprint) {
        String digest = KeyDigest.ofParts(List.of(backend, key.scope(), key.threadId(), key.agentDir(), kind, workArea,
                fingerprint));
        Map<String, String> labels = new LinkedHashMap<>();
        labels.put(LABEL_BACKEND, labelValue(backend));
        labels.put(LABEL_SCOPE, labelValue(key.scope()));
        labels.put(LABEL_THREAD, labelValue(key.threadId()));
        labels.put(LABEL_THREAD_DIGEST, SandboxListing.threadDigestOf(key.threadId()));
        labels.put(LABEL_AGENT, labelValue(key.agentDir()));
        labels.put(LABEL_KIND, labelValue(kind));
        labels.put(LABEL_WORK_AREA, labelValue(workArea));
        return new ContainerIdentity(NAME_PREFIX + digest.substring(0, NAME_DIGEST_HEX), Map.copyOf(labels));
    }

    String volumeName() {
        return name + VOLUME_SUFFIX;
    }

    /**
     * A label value as written and as queried: the value itself when it is short, made of
     * {@code [A-Za-z0-9._-]} and not already shaped like a hashed value; otherwise
     * {@code sha256-} and 48 hex digits of its SHA-256.
     */
    static String labelValue(String value) {
        if (value.length() <= MAX_PLAIN_VALUE && PLAIN.matcher(value).matches()
                && !LOOKS_HASHED.matcher(value).matches()) {
            return value;
        }
        return HASHED_PREFIX + KeyDigest.sha256Hex(value).substring(0, HASHED_HEX);
    }

    /** The label filters that select a backend's containers of one scope, thread and (optionally) agent. */
    static Map<String, String> selector(String backend, String scope, String threadId, String agentDir) {
        Map<String, String> filters = new LinkedHashMap<>();
        filters.put(LABEL_BACKEND, labelValue(backend));
        filters.put(LABEL_SCOPE, labelValue(scope));
        if (threadId != null) {
            filters.put(LABEL_THREAD, labelValue(threadId));
        }
        if (agentDir != null) {
            filters.put(LABEL_AGENT, labelValue(agentDir));
        }
        return filters;
    }
}
