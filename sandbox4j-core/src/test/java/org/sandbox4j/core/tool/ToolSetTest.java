package org.sandbox4j.core.tool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.sandbox4j.core.tool.KeyTools.whoami;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

import org.junit.jupiter.api.Test;
import org.sandbox4j.core.CallerContext;
import org.sandbox4j.core.FileListing;

class ToolSetTest {

    private final CallerContext context = new CurrentConversation().callerContext("tenant", FileListing.ALL);
    private final ToolSet rules = ToolSet.forFramework("Acme");

    @Test
    void theFactoryIsCalledOnceAndWhatItBuiltIsKeptInItsOrderWithoutTheAbsentOnes() {
        List<CallerContext> calls = new ArrayList<>();
        List<SandboxTool> tools = rules.assemble(given -> {
            calls.add(given);
            return Arrays.asList(whoami("b", given, false), Optional.empty(), null, whoami("a", given, false));
        }, context);

        assertThat(calls).containsExactly(context);
        assertThat(tools).extracting(SandboxTool::name).containsExactly("b", "a");
    }

    @Test
    void noFactoryMeansNoToolsAndAFactoryAnsweringNullIsRefused() {
        assertThat(rules.assemble(null, context)).isEmpty();
        assertThatThrownBy(() -> rules.assemble(given -> null, context)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("return an empty list");
    }

    @Test
    void twoToolsWithOneNameAreRefusedAndAReservedNameSaysWhoseItIs() {
        assertThatThrownBy(() -> rules.assemble(given -> List.of(whoami("t", given, false), whoami("t", given, false)),
                context)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'t'")
                .hasMessageContaining("Acme");

        ToolSet reserving = rules.reserving(List.of("read_file"), "the file tools");
        assertThatThrownBy(() -> reserving.assemble(given -> List.of(whoami("read_file", given, false)), context))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("the file tools are [read_file]");
        assertThat(reserving.assemble(given -> List.of(whoami("t", given, false)), context)).hasSize(1);
    }

    @Test
    void aToolThatRequiresApprovalIsRefusedUnlessAnApprovalWasGivenAndTheRefusalNamesTheFix() {
        ToolSet without = rules.approvalGiven(false, "call approval(...)");

        assertThatThrownBy(() -> without.assemble(given -> List.of(whoami("host", given, true)), context))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'host'")
                .hasMessageContaining("Acme").hasMessageContaining("call approval(...)");
        assertThatThrownBy(() -> rules.assemble(given -> List.of(whoami("host", given, true)), context))
                .as("no approval unless one was said to be given").isInstanceOf(IllegalArgumentException.class);
        assertThat(without.assemble(given -> List.of(whoami("plain", given, false)), context)).hasSize(1);
        assertThat(rules.approvalGiven(true, "unused").assemble(given -> List.of(whoami("host", given, true)),
                context)).extracting(SandboxTool::requiresApproval).containsExactly(true);
    }
}
