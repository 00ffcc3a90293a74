package org.sandbox4j.docker;

/** When the backend may pull an image from a registry. */
public enum PullPolicy {
    /** Never: the image must already be in the engine (built, loaded or imported). The default. */
    NEVER,
    /** Pull when the engine does not have the image. */
    IF_MISSING,
    /** Pull before the first container of each image this backend instance creates. */
    ALWAYS
}
