package org.sandbox4j.sbx;

import static org.sandbox4j.sbx.SbxJson.list;
import static org.sandbox4j.sbx.SbxJson.object;
import static org.sandbox4j.sbx.SbxJson.text;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Pattern;
import org.sandbox4j.core.Egress;
import org.sandbox4j.core.spi.GuestText;
import org.sandbox4j.core.spi.Json;
import org.sandbox4j.sbx.SbxJson.Unreadable;

/**
 * An {@code ALLOWLIST} spec as {@code sbx policy} rules scoped to one sandbox, and the host
 * posture that keeps them exact (SBX-PROTOCOL.md, "Network: the allowlist").
 *
 * <p>sbx applies a global allow to every sandbox and a deny beats an allow. So a sandbox reaches
 * exactly its hosts only when it gets an allow for each of them and a deny for every active
 * global allow that admits nothing it asked for; a global allow that admits a requested host and
 * more can be neither kept nor denied, and is refused. Organization governance (local rules
 * inactive) and stored secrets (injected into requests to domains sbx does not report) refuse too.
 */
final class SbxEgress {

    /** The resource every sandbox is created denying ({@code --deny-network "**"}). */
    static final String EVERY_HOST = "**";
    /** How sbx writes "this domain and every subdomain": our {@code *.d} is {@code **.d} plus a deny of {@code d}. */
    static final String ANY_DEPTH = "**.";
    static final String SUBDOMAINS = "*.";
    private static final int MAX_HOST = 253;
    private static final Pattern LABEL = Pattern.compile("[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?");
    private static final Pattern NUMERIC = Pattern.compile("[0-9.]+");
    /** A resource the plan passes back to sbx: one word that cannot be read as a flag or a list. */
    private static final Pattern PLAIN_RESOURCE = Pattern.compile("[A-Za-z0-9.*?:\\[\\]!/_][A-Za-z0-9.*?:\\[\\]!/_-]*");

    private SbxEgress() {
    }

    /** How one active global allow stands to an allowlist. */
    enum Verdict {
        /** Every host it admits the allowlist admits already: left alone. */
        COVERED,
        /** It admits a requested host and more: neither keeping nor denying it is exact. */
        OVERLAP,
        /** It admits no requested host: denied for the sandbox. */
        DISJOINT
    }

    /** One rule as {@code sbx policy ls --json} lists it; {@code canonical} is the JSON of what it admits, keys sorted. */
    record Rule(String scope, String decision, String status, List<String> resources, String canonical) {

        Rule {
            resources = List.copyOf(resources);
        }

        boolean activeGlobalAllow() {
            return scope.equals("global") && decision.equals("allow") && status.equals("active");
        }

        boolean ownedBy(String sandbox) {
            return scope.equals("sandbox:" + sandbox);
        }
    }

    /**
     * The rules one sandbox gets.
     *
     * @param hosts   the allowlist, normalised and sorted (what a warm acquire compares)
     * @param allows  resources allowed for the sandbox
     * @param denies  resources denied for the sandbox: every disjoint global allow, and each
     *                wildcard's bare domain nothing asked for
     * @param globals the active global allows when the plan was made
     */
    record Plan(List<String> hosts, List<String> allows, List<String> denies, Set<String> globals) {

        Plan {
            hosts = List.copyOf(hosts);
            allows = List.copyOf(allows);
            denies = List.copyOf(denies);
            globals = Set.copyOf(globals);
        }
    }

    /** The host posture refused an exact allowlist; the message names the fix. */
    static final class Refused extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Refused(String message) {
            super(message);
        }
    }

    // ---------------------------------------------------------------- the spec's hosts

    /**
     * The spec's hosts, lowercased, checked and sorted without repeats: each an exact host name
     * or {@code *.suffix} (every subdomain of {@code suffix} at any depth, not {@code suffix}
     * itself). Anything sbx could not hold exactly is refused: ports, paths, IP literals (a CIDR
     * global allow could overlap them unseen), other glob characters, a trailing dot.
     */
    static List<String> hosts(List<String> entries) {
        TreeSet<String> hosts = new TreeSet<>();
        for (String entry : entries) {
            String host = entry.strip().toLowerCase(Locale.ROOT);
            String name = host.startsWith(SUBDOMAINS) ? host.substring(SUBDOMAINS.length()) : host;
            if (!validName(name)) {
                throw new IllegalArgumentException("the egress allowlist entry " + GuestText.quote(entry) + " is not "
                        + "a host name or '*.' and a host name; sbx rules here hold exact names only (no port, path, "
                        + "IP literal, other wildcard, or name of the host itself such as localhost or "
                        + "host.docker.internal): name the host, such as api.example.com or *.example.com");
            }
            hosts.add(host);
        }
        return List.copyOf(hosts);
    }

    /**
     * Names that lead to the host itself whatever DNS says: {@code localhost} (RFC 6761) and
     * Docker's {@code docker.internal} names for the host and its gateway. The proxy runs on the
     * host, so allowing one would open the host's own services.
     */
    static final List<String> HOST_NAMES = List.of("localhost", "docker.internal");

    private static boolean validName(String name) {
        if (name.isEmpty() || name.length() > MAX_HOST || NUMERIC.matcher(name).matches()) {
            return false;
        }
        if (HOST_NAMES.stream().anyMatch(host -> name.equals(host) || name.endsWith("." + host))) {
            return false;
        }
        for (String label : name.split("\\.", -1)) {
            if (!LABEL.matcher(label).matches()) {
                return false;
            }
        }
        return true;
    }

    private static boolean wildcard(String host) {
        return host.startsWith(SUBDOMAINS);
    }

    private static String domain(String host) {
        return wildcard(host) ? host.substring(SUBDOMAINS.length()) : host;
    }

    /** Whether allowlist entry {@code host} admits {@code name}. */
    static boolean admits(String host, String name) {
        return wildcard(host) ? name.endsWith("." + domain(host)) : name.equals(host);
    }

    private static boolean admitted(List<String> hosts, String name) {
        return hosts.stream().anyMatch(host -> admits(host, name));
    }

    // ---------------------------------------------------------------- classification and the plan

    /** The host pattern of a rule resource ({@code host[:port]}); IPv6 and CIDR stay whole. */
    private static String hostPattern(String resource) {
        if (resource.startsWith("[") || resource.contains("/") || resource.chars().filter(c -> c == ':').count() > 1) {
            return resource;
        }
        int colon = resource.indexOf(':');
        return (colon < 0 ? resource : resource.substring(0, colon)).toLowerCase(Locale.ROOT);
    }

    /**
     * A glob as a regex that matches at least what sbx's does: {@code **.} any labels, {@code **}
     * anything, {@code *} one label, {@code ?} and a bracket class one character (a class is read
     * as any character: more matches, so more refusals, never fewer).
     */
    static Pattern glob(String pattern) {
        StringBuilder regex = new StringBuilder();
        int i = 0;
        while (i < pattern.length()) {
            char c = pattern.charAt(i);
            if (pattern.startsWith("**.", i)) {
                regex.append("(?:[^.]+\\.)*");
                i += 3;
            } else if (pattern.startsWith("**", i)) {
                regex.append(".*");
                i += 2;
            } else if (c == '*') {
                regex.append("[^.]+");
                i++;
            } else if (c == '?') {
                regex.append("[^.]");
                i++;
            } else if (c == '[') {
                int end = pattern.indexOf(']', i);
                regex.append("[^.]");
                i = end < 0 ? pattern.length() : end + 1;
            } else {
                regex.append(Pattern.quote(String.valueOf(c)));
                i++;
            }
        }
        return Pattern.compile(regex.toString());
    }

    private static boolean globbed(String pattern) {
        return pattern.chars().anyMatch(c -> c == '*' || c == '?' || c == '[');
    }

    /** What the text after a glob's last glob character leaves: every host it matches ends with this. */
    private static String literalSuffix(String pattern) {
        int cut = Math.max(Math.max(pattern.lastIndexOf('*'), pattern.lastIndexOf('?')), pattern.lastIndexOf(']'));
        String suffix = pattern.substring(cut + 1);
        return suffix.startsWith(".") ? suffix.substring(1) : suffix;
    }

    static Verdict classify(String resource, List<String> hosts) {
        String pattern = hostPattern(resource);
        if (pattern.startsWith("[") || pattern.contains("/") || pattern.indexOf(':') >= 0) {
            // IPv6 or a CIDR range: the allowlist holds names only, so it admits nothing of it.
            return Verdict.DISJOINT;
        }
        if (pattern.equals(EVERY_HOST)) {
            return hosts.isEmpty() ? Verdict.DISJOINT : Verdict.OVERLAP;
        }
        if (!globbed(pattern)) {
            // An exact name, an IP or a CIDR range: the allowlist holds no IP, so only a name can meet it.
            return admitted(hosts, pattern) ? Verdict.COVERED : Verdict.DISJOINT;
        }
        String suffix = literalSuffix(pattern);
        if ((pattern.equals(SUBDOMAINS + suffix) || pattern.equals(ANY_DEPTH + suffix)) && hosts.stream()
                .anyMatch(host -> wildcard(host) && (suffix.equals(domain(host)) || suffix.endsWith("." + domain(host))))) {
            // **.d also admits d, which the plan denies for the sandbox unless something asks for it.
            return Verdict.COVERED;
        }
        Pattern matcher = glob(pattern);
        for (String host : hosts) {
            String d = domain(host);
            boolean meets = wildcard(host)
                    ? suffix.isEmpty() || suffix.equals(d) || suffix.endsWith("." + d) || d.endsWith("." + suffix)
                    : matcher.matcher(host).matches();
            if (meets) {
                return Verdict.OVERLAP;
            }
        }
        return Verdict.DISJOINT;
    }

    /** The plan for {@code hosts} under {@code globals}, or {@link Refused} naming the global allow in the way. */
    static Plan plan(List<String> hosts, Set<String> globals) {
        LinkedHashSet<String> denies = new LinkedHashSet<>();
        for (String resource : new TreeSet<>(globals)) {
            switch (classify(resource, hosts)) {
                case OVERLAP -> throw new Refused("the global allow " + GuestText.quote(resource) + " admits a "
                        + "requested host and more, and denying it for this sandbox would deny that host too; narrow "
                        + "or remove the global rule (sbx policy rm network --resource " + GuestText.quote(resource)
                        + ")");
                case DISJOINT -> {
                    if (!PLAIN_RESOURCE.matcher(resource).matches()) {
                        throw new Refused("the global allow " + GuestText.quote(resource) + " cannot be passed back "
                                + "to sbx as one resource to deny; remove it (sbx policy rm network --resource …)");
                    }
                    denies.add(resource);
                }
                case COVERED -> {
                    // Left: it adds nothing the allowlist does not.
                }
            }
        }
        List<String> allows = new ArrayList<>();
        for (String host : hosts) {
            if (wildcard(host)) {
                allows.add(ANY_DEPTH + domain(host));
                if (!admitted(hosts, domain(host))) {
                    denies.add(domain(host));
                }
            } else {
                allows.add(host);
            }
        }
        return new Plan(hosts, allows, List.copyOf(denies), globals);
    }

    // ---------------------------------------------------------------- sbx's JSON

    /**
     * The rules of {@code sbx policy ls [NAME] --json}: {@code {"rules":[{"scope","decision",
     * "status","resource_type","resources","http_targets"}]}}. An HTTP rule's resources are its
     * targets' hosts. A payload without a {@code rules} list is refused.
     */
    static List<Rule> rules(String json) {
        List<Rule> rules = new ArrayList<>();
        for (Object item : list(Json.parseObject(json), "rules", false)) {
            Map<String, Object> rule = object(item, "a rule");
            List<String> resources = new ArrayList<>();
            for (Object resource : list(rule, "resources", true)) {
                resources.add(text(resource, "a resource"));
            }
            for (Object target : list(rule, "http_targets", true)) {
                Object host = object(target, "an http target").get("host");
                if (host instanceof String name) {
                    resources.add(name);
                }
            }
            rules.add(new Rule(Json.string(rule, "scope"), Json.string(rule, "decision"), Json.string(rule, "status"),
                    resources, canonical(meaningOf(rule))));
        }
        return rules;
    }

    /** The fields that say what a rule admits; others (an id, counters, times) may change and mean no drift. */
    private static final List<String> RULE_MEANING = List.of("scope", "decision", "status", "resource_type",
            "resources", "http_targets");

    private static Map<String, Object> meaningOf(Map<String, Object> rule) {
        Map<String, Object> meaning = new TreeMap<>();
        RULE_MEANING.stream().filter(rule::containsKey).forEach(field -> meaning.put(field, rule.get(field)));
        return meaning;
    }

    static Set<String> globalAllows(List<Rule> rules) {
        TreeSet<String> found = new TreeSet<>();
        rules.stream().filter(Rule::activeGlobalAllow).forEach(rule -> found.addAll(rule.resources()));
        return found;
    }

    /** The sandbox's own rules, each as its canonical JSON, sorted: what the drift check compares. */
    static List<String> ownRules(List<Rule> rules, String sandbox) {
        return rules.stream().filter(rule -> rule.ownedBy(sandbox)).map(Rule::canonical).sorted().toList();
    }

    /**
     * Why stored secrets or governance make the allowlist inexact, or empty. {@code secretsJson}
     * is {@code sbx secret ls --json}: {@code {"secrets":[{"name","scope"}], "env_only_count",
     * "custom_secrets":[{"env","scope","targets"}]}}.
     */
    static Optional<String> postureRefusal(List<String> hosts, String secretsJson, String sandbox, boolean governed) {
        if (governed) {
            return Optional.of("organization governance is active, so this host's local rules are inactive and no "
                    + "allowlist can be set per sandbox; ask for '" + Egress.DENY_ALL.wire()
                    + "', or use a host the organization does not govern");
        }
        Map<String, Object> payload = Json.parseObject(secretsJson);
        TreeSet<String> services = new TreeSet<>();
        for (Object item : list(payload, "secrets", true)) {
            Map<String, Object> secret = object(item, "a secret");
            if (reaches(secret, sandbox)) {
                services.add(GuestText.quote(String.valueOf(secret.get("name"))));
            }
        }
        if (!services.isEmpty()) {
            return Optional.of("service secrets are stored (" + String.join(", ", services) + "), and sbx injects "
                    + "them into requests to domains it does not report, so the allowlist could carry them; remove "
                    + "them (sbx secret rm)");
        }
        Object envOnly = payload.get("env_only_count");
        if (envOnly instanceof Number count && count.longValue() != 0) {
            return Optional.of("sbx reports secrets taken from the host environment (env_only_count " + count
                    + "), whose domains it does not report; unset them before sbx starts");
        }
        for (Object item : list(payload, "custom_secrets", true)) {
            Map<String, Object> custom = object(item, "a custom secret");
            if (!reaches(custom, sandbox)) {
                continue;
            }
            for (Object target : list(custom, "targets", true)) {
                String resource = text(target, "a custom secret's target");
                if (classify(resource, hosts) != Verdict.DISJOINT) {
                    return Optional.of("the custom secret " + GuestText.quote(String.valueOf(custom.get("env")))
                            + " is injected into requests to " + GuestText.quote(resource) + ", which the allowlist "
                            + "reaches; remove it (sbx secret rm)");
                }
            }
        }
        return Optional.empty();
    }

    private static boolean reaches(Map<String, Object> secret, String sandbox) {
        Object scope = secret.get("scope");
        // A scope that is not a string is read as global: more refusals, never fewer.
        return !(scope instanceof String text) || text.equals("global") || text.equals("sandbox:" + sandbox);
    }

    /** Why the sandbox's rules no longer give exactly its plan, or empty. */
    static Optional<String> drift(Plan plan, List<String> recordedRules, List<Rule> now, String sandbox) {
        for (String resource : globalAllows(now)) {
            if (!plan.globals().contains(resource) && classify(resource, plan.hosts()) != Verdict.COVERED) {
                return Optional.of("the global allow " + GuestText.quote(resource) + " was added after this sandbox "
                        + "opened");
            }
        }
        if (!ownRules(now, sandbox).equals(recordedRules)) {
            return Optional.of("the sandbox's own rules were changed after it opened");
        }
        return Optional.empty();
    }

    /**
     * {@code resource} when it is one word sbx cannot read as a flag or a list; a listed resource
     * that is not is refused rather than passed back.
     */
    static String plain(String resource) {
        if (!PLAIN_RESOURCE.matcher(resource).matches()) {
            throw new Refused("sbx lists the rule resource " + GuestText.quote(resource) + ", which cannot be passed "
                    + "back to sbx as one resource; remove it by hand (sbx policy rm network)");
        }
        return resource;
    }


    /** {@code value} as JSON with every object's keys sorted, so two listings of one rule compare equal. */
    static String canonical(Object value) {
        if (value instanceof Map<?, ?> map) {
            TreeMap<String, Object> sorted = new TreeMap<>();
            map.forEach((key, item) -> sorted.put(String.valueOf(key), item));
            StringBuilder out = new StringBuilder("{");
            sorted.forEach((key, item) -> out.append(out.length() > 1 ? "," : "").append(Json.quote(key)).append(':')
                    .append(canonical(item)));
            return out.append('}').toString();
        }
        if (value instanceof List<?> items) {
            StringBuilder out = new StringBuilder("[");
            for (Object item : items) {
                out.append(out.length() > 1 ? "," : "").append(canonical(item));
            }
            return out.append(']').toString();
        }
        if (value instanceof String text) {
            return Json.quote(text);
        }
        return String.valueOf(value);
    }
}
