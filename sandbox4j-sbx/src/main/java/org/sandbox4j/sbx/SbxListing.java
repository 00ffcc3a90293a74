package org.sandbox4j.sbx;

/**
 * One row of {@code sbx ls --format json}.
 *
 * @param id        changes with every create, so it tells one instance of a name from the next
 * @param name      the sandbox name
 * @param status    {@code running} or {@code stopped}
 * @param template  what {@code sbx create --template} was given
 * @param workspace the host directory it mounts
 */
record SbxListing(String id, String name, String status, String template, String workspace) {
}
