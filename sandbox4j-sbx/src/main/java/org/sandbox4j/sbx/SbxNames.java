package org.sandbox4j.sbx;

import java.util.List;
import org.sandbox4j.core.spi.KeyDigest;
import org.sandbox4j.core.SandboxKey;

/**
 * Ownership lives in the name, since {@code sbx} has no labels:
 * {@code <prefix><conversation>-<key>-<kind>}, each part a prefix of {@link KeyDigest#ofParts}:
 * {@value #CONVERSATION_HEX} hex of (scope, thread), {@value #KEY_HEX} hex of (scope, thread,
 * agent dir), {@value #KIND_HEX} hex of the kind. A conversation's sandboxes then share the name
 * prefix {@link #conversationPrefix}, a key's share {@link #keyPrefix}, and the same mapping
 * answers both creating and disposing, in any process.
 */
final class SbxNames {

    /** 48 bits of the conversation digest. */
    static final int CONVERSATION_HEX = 12;
    /** 48 bits of the whole key's digest: within one conversation, agents collide at about 2^24 agent dirs. */
    static final int KEY_HEX = 12;
    /** 32 bits of the kind's digest; a conversation holds a handful of kinds. */
    static final int KIND_HEX = 8;
    private static final String SEPARATOR = "-";

    private final String prefix;

    SbxNames(String prefix) {
        this.prefix = prefix;
    }

    String prefix() {
        return prefix;
    }

    String conversationPrefix(String scope, String threadId) {
        return prefix + KeyDigest.ofParts(List.of(scope, threadId)).substring(0, CONVERSATION_HEX) + SEPARATOR;
    }

    String keyPrefix(SandboxKey key) {
        return conversationPrefix(key.scope(), key.threadId())
                + KeyDigest.ofParts(List.of(key.scope(), key.threadId(), key.agentDir())).substring(0, KEY_HEX)
                + SEPARATOR;
    }

    String name(SandboxKey key, String kind) {
        return keyPrefix(key) + KeyDigest.ofParts(List.of(kind)).substring(0, KIND_HEX);
    }
}
