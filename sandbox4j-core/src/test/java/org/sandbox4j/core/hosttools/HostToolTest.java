package org.sandbox4j.core.hosttools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.Test;

class HostToolTest {

    private static final HostToolBody NOTHING = arguments -> null;

    private final HostTool search = HostTool.builder().required("query").optional("limit").body(NOTHING).build();

    @Test
    void aDeclarationAnswersEveryRoleExplicitly() {
        assertThatThrownBy(() -> new HostToolDeclaration(null, Optional.empty(), Optional.empty()))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("Optional.empty()");
        assertThatThrownBy(() -> new HostToolDeclaration(Optional.empty(), null, Optional.empty()))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("sink");
        assertThatThrownBy(() -> new HostToolDeclaration(Optional.empty(), Optional.empty(), null))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("identity");
        assertThat(new HostToolDeclaration(Optional.empty(), Optional.empty(), Optional.empty()).sink()).isEmpty();
    }

    @Test
    void aParameterListedTwiceIsRefused() {
        assertThatThrownBy(() -> HostTool.builder().required("a").optional("a").body(NOTHING).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'a' is listed twice");
    }

    @Test
    void anEmptyParameterNameIsRefused() {
        assertThatThrownBy(() -> HostTool.builder().required("").body(NOTHING).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("non-empty");
    }

    @Test
    void aToolNeedsABody() {
        assertThatThrownBy(() -> HostTool.builder().build())
                .isInstanceOf(NullPointerException.class).hasMessageContaining("body");
    }

    @Test
    void parameterListsAreCopied() {
        List<String> required = new java.util.ArrayList<>(List.of("a"));
        HostTool tool = new HostTool(required, List.of(), Optional.empty(), NOTHING);
        required.add("b");

        assertThat(tool.requiredParameters()).containsExactly("a");
    }

    @Test
    void requiredAndOptionalArgumentsBind() {
        HostTool.Binding binding = search.bind(Map.of("query", "q", "limit", 3));

        assertThat(binding.problem()).isEmpty();
        assertThat(binding.arguments()).contains(Map.of("query", "q", "limit", 3));
    }

    @Test
    void anAbsentOptionalArgumentIsAbsent() {
        assertThat(search.bind(Map.of("query", "q")).arguments()).contains(Map.of("query", "q"));
    }

    @Test
    void aNullValueIsAnArgument() {
        Map<String, Object> arguments = new HashMap<>();
        arguments.put("query", null);

        assertThat(search.bind(arguments).arguments().orElseThrow()).containsEntry("query", null);
    }

    @Test
    void noArgumentsBindToAToolWithoutRequiredParameters() {
        HostTool none = HostTool.builder().optional("x").body(NOTHING).build();

        assertThat(none.bind(null).arguments()).contains(Map.of());
    }

    @Test
    void aMissingRequiredArgumentIsNamed() {
        assertThat(search.bind(Map.of("limit", 3)).problem()).contains("missing required argument(s): query");
        assertThat(search.bind(null).problem()).contains("missing required argument(s): query");
    }

    @Test
    void anUnknownKeywordIsNamed() {
        assertThat(search.bind(Map.of("query", "q", "zeta", 1, "alpha", 2)).problem())
                .contains("unexpected keyword argument(s): alpha, zeta");
    }

    @Test
    void missingIsReportedBeforeUnknown() {
        assertThat(search.bind(Map.of("other", 1)).problem()).contains("missing required argument(s): query");
    }

    @Test
    void aNonStringKeywordIsRefused() {
        Map<Object, Object> arguments = new LinkedHashMap<>();
        arguments.put("query", "q");
        arguments.put(7, "x");

        assertThat(search.bind(arguments).problem()).contains("keyword names must be strings");
    }

    @Test
    void boundArgumentsCannotBeChangedByTheBody() {
        Map<String, Object> bound = search.bind(Map.of("query", "q")).arguments().orElseThrow();

        assertThatThrownBy(() -> bound.put("limit", 1)).isInstanceOf(UnsupportedOperationException.class);
    }
}
