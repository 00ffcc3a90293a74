package org.sandbox4j.codeact;

import java.util.List;
import java.util.stream.Collectors;

import org.sandbox4j.core.spi.Json;

/** What the model reads about {@code execute_code}: its description and its parameters' schema. */
final class ToolDescription {

    private ToolDescription() {
    }

    static String of(CodeActConfig config) {
        StringBuilder text = new StringBuilder();
        text.append("Runs a short program in an isolated sandbox and returns what it printed (stdout and stderr) ")
                .append("and its exit code. Print every value you need: only printed output comes back. ");
        if (config.offersSeveralLanguages()) {
            text.append("Languages: ").append(wires(config.languages())).append(" (default ")
                    .append(config.defaultLanguage().wire()).append("; set `language`). ");
        } else {
            text.append("The program is ").append(config.defaultLanguage().wire()).append(". ");
        }
        if (config.languages().contains(Language.JAVA)) {
            text.append("A java program is one source file whose first class has `main`. ");
        }
        if (config.spec().egressAllow().isEmpty()) {
            text.append("The sandbox has no network access. ");
        } else {
            text.append("The sandbox can reach only these hosts: ").append(String.join(", ", config.spec().egressAllow()))
                    .append(". ");
        }
        text.append("Each call runs in a fresh directory of its own, removed when the call ends; what a program writes ")
                .append("outside it (in its parent directory, for instance) stays for this conversation's later calls ")
                .append("until the conversation's sandbox ends. ")
                .append("A program is stopped after ").append(config.execTimeout().toSeconds()).append(" seconds. ");
        if (config.fileStore().isPresent()) {
            text.append("To use the user's files, list their names in `files`: each is placed next to the program ")
                    .append("under the same relative name. ");
        }
        switch (config.outputs()) {
            case DECLARED -> text.append("To save files for the user, have the program write them (relative names) ")
                    .append("and list those names in `outputs`; they are saved only if the program exits with 0. ");
            case MANIFEST -> text.append("To save files for the user, have the program write them and also write ")
                    .append(CodeAct.MANIFEST_FILE_NAME).append(" in its directory: {\"outputs\": [{\"path\": \"name\"}]}; ")
                    .append("they are saved only if the program exits with 0. ");
            case NONE -> { }
        }
        config.hostTools().ifPresent(registry -> {
            text.append("The program can call these host functions: ").append(String.join(", ", registry.names()))
                    .append(". In python: `import sandbox4j_host_tools as host; host.call(\"name\", arg=value)`");
            if (config.languages().contains(Language.JAVASCRIPT)) {
                text.append("; in javascript: `const host = require(\"sandbox4j_host_tools\"); ")
                        .append("host.call(\"name\", {arg: value})`");
            }
            text.append(". Each returns the function's JSON result. ");
        });
        return text.toString().strip();
    }

    static String schema(CodeActConfig config) {
        StringBuilder properties = new StringBuilder();
        properties.append(Json.quote("code")).append(":{\"type\":\"string\",\"description\":")
                .append(Json.quote("The complete program source.")).append('}');
        if (config.offersSeveralLanguages()) {
            properties.append(',').append(Json.quote("language")).append(":{\"type\":\"string\",\"enum\":[")
                    .append(config.languages().stream().map(l -> Json.quote(l.wire())).collect(Collectors.joining(",")))
                    .append("],\"description\":").append(Json.quote("The program's language; default "
                            + config.defaultLanguage().wire() + ".")).append('}');
        }
        if (config.fileStore().isPresent()) {
            properties.append(',').append(Json.quote("files"))
                    .append(":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"description\":")
                    .append(Json.quote("Names of the user's files to place next to the program.")).append('}');
        }
        if (config.outputs() == OutputMode.DECLARED) {
            properties.append(',').append(Json.quote("outputs"))
                    .append(":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"description\":")
                    .append(Json.quote("Relative names of files the program writes, to save for the user."))
                    .append('}');
        }
        return "{\"type\":\"object\",\"properties\":{" + properties + "},\"required\":[\"code\"],"
                + "\"additionalProperties\":false}";
    }

    private static String wires(List<Language> languages) {
        return languages.stream().map(Language::wire).collect(Collectors.joining(", "));
    }
}
