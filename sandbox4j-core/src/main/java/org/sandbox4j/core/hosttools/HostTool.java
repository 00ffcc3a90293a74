package org.sandbox4j.core.hosttools;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * A host function guest code may call by name, with its parameter list spelled out: Java cannot
 * read keyword parameters off a method, so the tool states them and binding checks the guest's
 * arguments against them. Binding is the only host-side schema check; the body validates values.
 *
 * <p>Build one with {@link #builder()}. The name is given at
 * {@link HostToolRegistry#register(String, HostTool) registration}.
 *
 * @param requiredParameters keyword parameters every call must send
 * @param optionalParameters keyword parameters a call may send
 * @param declaration        the tool's policy declaration, or empty for an undeclared tool (which the
 *                           aggregate counts as untrusted and acting with the application's identity)
 * @param body               the host code that runs
 */
public record HostTool(
        List<String> requiredParameters,
        List<String> optionalParameters,
        Optional<HostToolDeclaration> declaration,
        HostToolBody body) {

    public HostTool {
        requiredParameters = List.copyOf(requiredParameters);
        optionalParameters = List.copyOf(optionalParameters);
        Objects.requireNonNull(declaration, "declaration: pass Optional.empty() for an undeclared tool");
        Objects.requireNonNull(body, "a host tool needs a body");
        Set<String> seen = new HashSet<>();
        List<String> all = new ArrayList<>(requiredParameters);
        all.addAll(optionalParameters);
        for (String parameter : all) {
            if (parameter.isEmpty()) {
                throw new IllegalArgumentException("a host tool parameter needs a non-empty name");
            }
            if (!seen.add(parameter)) {
                throw new IllegalArgumentException("host tool parameter '" + parameter
                        + "' is listed twice; list each parameter once, as required or as optional");
            }
        }
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * Binds guest-sent arguments to the parameter list.
     *
     * @param arguments the decoded JSON object, or {@code null} for no arguments
     * @return the unmodifiable bound arguments, or the reason they do not bind (guest-derived text:
     *         quote it before showing it)
     */
    Binding bind(Map<?, ?> arguments) {
        Map<?, ?> given = arguments == null ? Map.of() : arguments;
        Map<String, Object> bound = new LinkedHashMap<>();
        Set<String> unknown = new TreeSet<>();
        for (Map.Entry<?, ?> entry : given.entrySet()) {
            if (!(entry.getKey() instanceof String)) {
                return Binding.refused("keyword names must be strings");
            }
            String keyword = (String) entry.getKey();
            if (requiredParameters.contains(keyword) || optionalParameters.contains(keyword)) {
                bound.put(keyword, entry.getValue());
            } else {
                unknown.add(keyword);
            }
        }
        List<String> missing = new ArrayList<>();
        for (String parameter : requiredParameters) {
            if (!bound.containsKey(parameter)) {
                missing.add(parameter);
            }
        }
        // Missing before unknown, as the reference's binder reports them.
        if (!missing.isEmpty()) {
            return Binding.refused("missing required argument(s): " + String.join(", ", missing));
        }
        if (!unknown.isEmpty()) {
            return Binding.refused("unexpected keyword argument(s): " + String.join(", ", unknown));
        }
        return new Binding(Optional.of(Collections.unmodifiableMap(bound)), Optional.empty());
    }

    /** Exactly one of bound arguments or the reason binding failed. */
    record Binding(Optional<Map<String, Object>> arguments, Optional<String> problem) {

        Binding {
            if (arguments.isPresent() == problem.isPresent()) {
                throw new IllegalArgumentException("a binding has exactly one of arguments or a problem");
            }
        }

        static Binding refused(String problem) {
            return new Binding(Optional.empty(), Optional.of(problem));
        }
    }

    /** Collects a tool's parameters, declaration and body. */
    public static final class Builder {

        private final List<String> required = new ArrayList<>();
        private final List<String> optional = new ArrayList<>();
        private Optional<HostToolDeclaration> declaration = Optional.empty();
        private HostToolBody body;

        private Builder() {
        }

        /** Adds keyword parameters every call must send. */
        public Builder required(String... parameters) {
            required.addAll(List.of(parameters));
            return this;
        }

        /** Adds keyword parameters a call may send. */
        public Builder optional(String... parameters) {
            optional.addAll(List.of(parameters));
            return this;
        }

        /** Declares the tool; without this the tool is undeclared. */
        public Builder declaration(HostToolDeclaration declaration) {
            this.declaration = Optional.of(declaration);
            return this;
        }

        public Builder body(HostToolBody body) {
            this.body = Objects.requireNonNull(body, "body");
            return this;
        }

        public HostTool build() {
            return new HostTool(required, optional, declaration, body);
        }
    }
}
