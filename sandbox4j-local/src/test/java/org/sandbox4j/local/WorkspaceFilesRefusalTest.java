package org.sandbox4j.local;

import org.sandbox4j.core.spi.WorkspaceFiles;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.sandbox4j.local.WorkspaceFixture.WORK;
import static org.sandbox4j.local.WorkspaceFixture.utf8;

import java.nio.file.Path;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.sandbox4j.core.SandboxFileException;
import org.sandbox4j.core.SandboxFileNotFound;
import org.sandbox4j.core.SandboxIsADirectory;
import org.sandbox4j.core.SandboxNotADirectory;
import org.sandbox4j.core.SandboxNotARegularFile;
import org.sandbox4j.core.SandboxPathNotConfined;
import org.sandbox4j.core.SandboxTransferCapExceeded;

/**
 * Every refusal of every method, as a table: the exact exception type, and a snapshot of the
 * whole temporary directory (workspace and outside, links described not followed) proving the
 * refused call wrote, created and deleted nothing anywhere. Links are planted with host targets
 * ({@link WorkspaceFixture}), so a call that followed one would reach the outside secrets.
 */
@EnabledOnOs(OS.LINUX)
class WorkspaceFilesRefusalTest {

    private static final byte[] ATTACK = utf8("planted by the test\n");
    private static final long CAP = 1024 * 1024;
    /** A working directory whose ancestor is a link to outside. */
    private static final String UNDER_LINKED_ROOT = "/sandbox4j/linked-root/sub";
    private static final String LINKED_WORK = WORK + "/link-dir";

    @TempDir
    Path tempDir;

    static Stream<Arguments> refusals() {
        return Stream.of(
                // writeFile
                refusal("write climbing into the prefix sibling", f -> f.writeFile("../work-outside/x.txt", ATTACK, WORK),
                        SandboxPathNotConfined.class),
                refusal("write to an absolute path in the prefix sibling",
                        f -> f.writeFile("/sandbox4j/work-outside/x.txt", ATTACK, WORK), SandboxPathNotConfined.class),
                refusal("write through a linked parent", f -> f.writeFile("link-dir/x.txt", ATTACK, WORK),
                        SandboxPathNotConfined.class),
                refusal("write through a linked parent, into a missing directory",
                        f -> f.writeFile("link-dir/new/x.txt", ATTACK, WORK), SandboxPathNotConfined.class),
                refusal("write through a relative link climbing out", f -> f.writeFile("relative-up/x.txt", ATTACK, WORK),
                        SandboxPathNotConfined.class),
                refusal("write onto a link to a file outside", f -> f.writeFile("link-file", ATTACK, WORK),
                        SandboxPathNotConfined.class),
                refusal("write onto a dangling link", f -> f.writeFile("dangling", ATTACK, WORK),
                        SandboxPathNotConfined.class),
                refusal("write through a dangling link, which would create its target",
                        f -> f.writeFile("dangling/x.txt", ATTACK, WORK), SandboxPathNotConfined.class),
                refusal("write over the working directory", f -> f.writeFile(".", ATTACK, WORK),
                        SandboxPathNotConfined.class),
                refusal("write with a backslash", f -> f.writeFile("real\\x.txt", ATTACK, WORK),
                        SandboxPathNotConfined.class),
                refusal("write below a plain file", f -> f.writeFile("plain.txt/x.txt", ATTACK, WORK),
                        SandboxNotADirectory.class),
                refusal("write over a directory", f -> f.writeFile("dir", ATTACK, WORK), SandboxIsADirectory.class),
                refusal("write with a linked working directory", f -> f.writeFile("x.txt", ATTACK, LINKED_WORK),
                        SandboxPathNotConfined.class),
                refusal("write under a linked ancestor of the working directory",
                        f -> f.writeFile("x.txt", ATTACK, UNDER_LINKED_ROOT), SandboxPathNotConfined.class),
                refusal("write over the mount point", f -> f.writeFile("sandbox4j", ATTACK, "/"),
                        SandboxIsADirectory.class),
                refusal("write outside the mount point", f -> f.writeFile("x.txt", ATTACK, "/tmp"),
                        SandboxFileException.class),
                // stat
                refusal("stat through a linked parent", f -> f.stat("link-dir/secret.txt", WORK),
                        SandboxPathNotConfined.class),
                refusal("stat below a plain file", f -> f.stat("plain.txt/x.txt", WORK), SandboxNotADirectory.class),
                refusal("stat in the prefix sibling", f -> f.stat("../work-outside/secret.txt", WORK),
                        SandboxPathNotConfined.class),
                refusal("stat with a linked working directory", f -> f.stat("secret.txt", LINKED_WORK),
                        SandboxPathNotConfined.class),
                refusal("stat under a linked ancestor", f -> f.stat("leaf.txt", UNDER_LINKED_ROOT),
                        SandboxPathNotConfined.class),
                refusal("stat outside the mount point", f -> f.stat("passwd", "/etc"), SandboxFileException.class),
                // readFile
                refusal("read a link to a file outside", f -> f.readFile("link-file", WORK, CAP),
                        SandboxNotARegularFile.class),
                refusal("read a dangling link", f -> f.readFile("dangling", WORK, CAP), SandboxNotARegularFile.class),
                refusal("read a FIFO (without blocking on it)", f -> f.readFile("fifo", WORK, CAP),
                        SandboxNotARegularFile.class),
                refusal("read through a linked parent", f -> f.readFile("link-dir/secret.txt", WORK, CAP),
                        SandboxPathNotConfined.class),
                refusal("read through a relative link climbing out", f -> f.readFile("relative-up/secret.txt", WORK, CAP),
                        SandboxPathNotConfined.class),
                refusal("read a directory", f -> f.readFile("dir", WORK, CAP), SandboxIsADirectory.class),
                refusal("read the working directory", f -> f.readFile(".", WORK, CAP), SandboxIsADirectory.class),
                refusal("read a missing file", f -> f.readFile("missing.txt", WORK, CAP), SandboxFileNotFound.class),
                refusal("read below a missing directory", f -> f.readFile("missing/x.txt", WORK, CAP),
                        SandboxFileNotFound.class),
                refusal("read below a plain file", f -> f.readFile("plain.txt/x.txt", WORK, CAP),
                        SandboxNotADirectory.class),
                refusal("read in the prefix sibling", f -> f.readFile("/sandbox4j/work-outside/secret.txt", WORK, CAP),
                        SandboxPathNotConfined.class),
                refusal("read with a linked working directory", f -> f.readFile("secret.txt", LINKED_WORK, CAP),
                        SandboxPathNotConfined.class),
                refusal("read under a linked ancestor", f -> f.readFile("leaf.txt", UNDER_LINKED_ROOT, CAP),
                        SandboxPathNotConfined.class),
                refusal("read over the cap", f -> f.readFile("real/inside.txt", WORK, WorkspaceFixture.INSIDE.length - 1),
                        SandboxTransferCapExceeded.class),
                refusal("read outside the mount point", f -> f.readFile("hostname", "/etc", CAP),
                        SandboxFileException.class),
                // listDir
                refusal("list a linked directory", f -> f.listDir("link-dir", WORK), SandboxPathNotConfined.class),
                refusal("list through a linked parent", f -> f.listDir("link-dir/sub", WORK),
                        SandboxPathNotConfined.class),
                refusal("list under a linked ancestor", f -> f.listDir(".", UNDER_LINKED_ROOT),
                        SandboxPathNotConfined.class),
                refusal("list a plain file", f -> f.listDir("plain.txt", WORK), SandboxNotADirectory.class),
                refusal("list below a plain file", f -> f.listDir("plain.txt/sub", WORK), SandboxNotADirectory.class),
                refusal("list a missing directory", f -> f.listDir("missing", WORK), SandboxFileNotFound.class),
                refusal("list the prefix sibling", f -> f.listDir("../work-outside", WORK), SandboxPathNotConfined.class),
                refusal("list outside the mount point", f -> f.listDir(".", "/etc"), SandboxFileException.class),
                // remove
                refusal("remove the working directory", f -> f.remove(".", WORK, true), SandboxPathNotConfined.class),
                refusal("remove the working directory by its absolute path", f -> f.remove(WORK, WORK, true),
                        SandboxPathNotConfined.class),
                refusal("remove the mount point", f -> f.remove("sandbox4j", "/", true), SandboxPathNotConfined.class),
                refusal("remove a directory without recursive", f -> f.remove("dir", WORK, false),
                        SandboxFileException.class),
                refusal("remove an empty directory without recursive", f -> f.remove("empty", WORK, false),
                        SandboxFileException.class),
                refusal("remove through a linked parent", f -> f.remove("link-dir/secret.txt", WORK, false),
                        SandboxPathNotConfined.class),
                refusal("remove a tree through a linked parent", f -> f.remove("link-dir/sub", WORK, true),
                        SandboxPathNotConfined.class),
                refusal("remove through a relative link climbing out", f -> f.remove("relative-up/secret.txt", WORK, true),
                        SandboxPathNotConfined.class),
                refusal("remove in the prefix sibling", f -> f.remove("../work-outside/secret.txt", WORK, true),
                        SandboxPathNotConfined.class),
                refusal("remove with a linked working directory", f -> f.remove("secret.txt", LINKED_WORK, false),
                        SandboxPathNotConfined.class),
                refusal("remove under a linked ancestor", f -> f.remove("leaf.txt", UNDER_LINKED_ROOT, true),
                        SandboxPathNotConfined.class),
                refusal("remove outside the mount point", f -> f.remove("x", "/tmp", true), SandboxFileException.class));
    }

    private static Arguments refusal(String name, Consumer<WorkspaceFiles> call,
            Class<? extends RuntimeException> expected) {
        return Arguments.of(name, call, expected);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("refusals")
    void isRefusedAndTouchesNothing(String name, Consumer<WorkspaceFiles> call,
            Class<? extends RuntimeException> expected) {
        WorkspaceFixture fixture = WorkspaceFixture.create(tempDir);
        Map<String, String> before = fixture.snapshot();

        assertThatThrownBy(() -> call.accept(fixture.files)).isExactlyInstanceOf(expected)
                .hasMessageNotContaining(fixture.temp.toString());

        assertThat(fixture.snapshot()).isEqualTo(before);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("refusals")
    void namesTheGuestPathNotTheHostPath(String name, Consumer<WorkspaceFiles> call,
            Class<? extends RuntimeException> expected) {
        WorkspaceFixture fixture = WorkspaceFixture.create(tempDir);

        assertThatThrownBy(() -> call.accept(fixture.files)).satisfies(refusal -> {
            assertThat(refusal.getMessage()).contains("'");
            assertThat(refusal.getMessage()).doesNotContain(fixture.workspace.toString());
        });
    }
}
