package org.sandbox4j.core.hosttools;

import java.util.Optional;

import org.sandbox4j.core.Identity;
import org.sandbox4j.core.SourceIntegrity;

/** Small tool fixtures shared by the host-tool tests. */
final class Tools {

    private Tools() {
    }

    static HostToolDeclaration declaration(SourceIntegrity source, String sink, Identity identity) {
        return new HostToolDeclaration(Optional.ofNullable(source), Optional.ofNullable(sink),
                Optional.ofNullable(identity));
    }

    /** An undeclared tool with no parameters answering {@code value}. */
    static HostTool returning(Object value) {
        return HostTool.builder().body(arguments -> value).build();
    }

    /** A declared tool with no parameters answering {@code "ok"}. */
    static HostTool declared(HostToolDeclaration declaration) {
        return HostTool.builder().declaration(declaration).body(arguments -> "ok").build();
    }

    /** A declared, trusted, app-identity tool echoing its {@code text} argument. */
    static HostTool echo() {
        return HostTool.builder()
                .required("text")
                .declaration(declaration(SourceIntegrity.TRUSTED, null, Identity.APP))
                .body(arguments -> arguments.get("text"))
                .build();
    }
}
