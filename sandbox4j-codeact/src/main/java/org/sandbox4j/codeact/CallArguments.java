package org.sandbox4j.codeact;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.sandbox4j.core.spi.GuestText;
import org.sandbox4j.core.tool.ToolRefusal;

/**
 * The model's arguments to one call, checked for shape: {@code code} a string, {@code language}
 * one the deployment offers, {@code files} and {@code outputs} arrays of strings and only where
 * the deployment has them. Nothing else is accepted, so a misspelt parameter is an answer, not a
 * silent default.
 */
record CallArguments(String code, Language language, List<String> files, List<String> outputs) {

    static CallArguments parse(Map<String, Object> arguments, CodeActConfig config) {
        Set<String> accepted = new java.util.HashSet<>(Set.of("code"));
        if (config.offersSeveralLanguages()) {
            accepted.add("language");
        }
        if (config.fileStore().isPresent()) {
            accepted.add("files");
        }
        if (config.outputs() == OutputMode.DECLARED) {
            accepted.add("outputs");
        }
        for (String key : arguments.keySet()) {
            if (!accepted.contains(key)) {
                throw new ToolRefusal("Error: " + GuestText.quote(key) + " is not a parameter of this tool; use "
                        + String.join(", ", accepted.stream().sorted().toList()) + ". Nothing was run.");
            }
        }
        if (!(arguments.get("code") instanceof String code)) {
            throw new ToolRefusal("Error: `code` must be the program's source as a string. Nothing was run.");
        }
        if (code.isBlank()) {
            throw new ToolRefusal("Error: `code` is empty; write the program to run. Nothing was run.");
        }
        Language language = config.defaultLanguage();
        Object named = arguments.get("language");
        if (named != null) {
            if (!(named instanceof String wire)) {
                throw new ToolRefusal("Error: `language` must be a string. Nothing was run.");
            }
            language = Language.fromWire(wire).filter(config.languages()::contains).orElseThrow(() -> new ToolRefusal(
                    "Error: " + GuestText.quote(wire) + " is not a language this tool runs; use one of "
                            + String.join(", ", config.languages().stream().map(Language::wire).toList())
                            + ". Nothing was run."));
        }
        return new CallArguments(code, language, strings(arguments, "files"), strings(arguments, "outputs"));
    }

    private static List<String> strings(Map<String, Object> arguments, String parameter) {
        Object value = arguments.get(parameter);
        if (value == null) {
            return List.of();
        }
        if (!(value instanceof List<?> list)) {
            throw new ToolRefusal("Error: `" + parameter + "` must be an array of names. Nothing was run.");
        }
        List<String> names = new ArrayList<>(list.size());
        for (Object element : list) {
            if (!(element instanceof String name)) {
                throw new ToolRefusal("Error: every entry of `" + parameter + "` must be a string. Nothing was run.");
            }
            names.add(name);
        }
        return List.copyOf(names);
    }
}
