package org.sandbox4j.codeact;

import java.text.Normalizer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

import org.sandbox4j.core.spi.GuestText;
import org.sandbox4j.core.SandboxArtifactNameInvalid;
import org.sandbox4j.core.outputs.ArtifactNames;
import org.sandbox4j.core.tool.ToolRefusal;

/**
 * The naming rules for the files a call shares and the outputs it names, checked before anything
 * is read or run: core's artifact-name rules on the raw and the composed (NFC) spelling, no name
 * the call itself writes (the program, the manifest), and no two names that differ only by case
 * or Unicode form (they would meet on a case-insensitive file system or after normalisation).
 */
final class CallNames {

    /** How many listed names a refusal shows as a hint. */
    static final int MAX_HINT_NAMES = 20;

    private CallNames() {
    }

    /** Refuses any name in {@code names} that breaks a rule, naming the parameter and the rule. */
    static void check(String parameter, List<String> names, Set<String> reserved) {
        Set<String> seen = new HashSet<>();
        for (String name : names) {
            try {
                ArtifactNames.validate(name);
                ArtifactNames.validate(Normalizer.normalize(name, Normalizer.Form.NFC));
            } catch (SandboxArtifactNameInvalid invalid) {
                throw new ToolRefusal("Error: " + GuestText.quote(name) + " in `" + parameter + "` is not a usable "
                        + "file name (" + invalid.getMessage() + "). Nothing was run.");
            }
            if (reserved.contains(name)) {
                throw new ToolRefusal("Error: " + GuestText.quote(name) + " in `" + parameter + "` is a name this "
                        + "tool writes itself; choose another. Nothing was run.");
            }
            if (!seen.add(foldKey(name))) {
                throw new ToolRefusal("Error: " + GuestText.quote(name) + " appears twice in `" + parameter
                        + "` (perhaps in another case or Unicode form); name each file once. Nothing was run.");
            }
        }
    }

    /** The refusal for a name the file store's listing does not hold, with a hint of what it does. */
    static ToolRefusal notListed(String name, List<String> listing) {
        List<String> hint = new ArrayList<>(listing.subList(0, Math.min(MAX_HINT_NAMES, listing.size())));
        String more = listing.size() > MAX_HINT_NAMES ? " (and " + (listing.size() - MAX_HINT_NAMES) + " more)" : "";
        String available = listing.isEmpty() ? "the store holds no files"
                : "files you can share: " + String.join(", ", hint.stream().map(GuestText::quote).toList()) + more;
        return new ToolRefusal("Error: " + GuestText.quote(name) + " is not in the user's file store; " + available
                + ". Nothing was run.");
    }

    private static String foldKey(String name) {
        return Normalizer.normalize(name, Normalizer.Form.NFKC).toLowerCase(Locale.ROOT);
    }
}
