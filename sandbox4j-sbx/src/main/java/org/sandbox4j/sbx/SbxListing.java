package org.sandbox4j.sbx;

import java.util.List;

/**
 * One row of {@code sbx ls --json} ({@code {"sandboxes":[{"name","id","workspaces":[...]}]}}).
 * Only the fields the sources show are read: a row's status and template have no sourced field
 * name, so the backend depends on neither (the template it asked for is kept host-side).
 *
 * @param id         changes with every create, so it tells one instance of a name from the next
 * @param name       the sandbox name
 * @param workspaces the host directories it mounts ({@code sbx create ... PATH [PATH...]})
 */
record SbxListing(String id, String name, List<String> workspaces) {

    SbxListing {
        workspaces = List.copyOf(workspaces);
    }
}
