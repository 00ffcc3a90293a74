package org.sandbox4j.docker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.sandbox4j.core.EntryKind;
import org.sandbox4j.core.SandboxFileException;
import org.sandbox4j.core.spi.ConfinedFiles.Stat;

/** The guest prints the listing, so its parser takes nothing on trust. */
class ListingOutputTest {

    private static byte[] entries(String... lineAndName) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int i = 0; i < lineAndName.length; i += 2) {
            out.writeBytes((lineAndName[i] + "\n").getBytes(StandardCharsets.UTF_8));
            out.writeBytes(lineAndName[i + 1].getBytes(StandardCharsets.UTF_8));
            out.write(0);
        }
        return out.toByteArray();
    }

    @Test
    void eachKindAndAFilesSizeAreRead() {
        Map<String, Stat> children = ListingOutput.parse(entries("f 12 1700000000.5", "a.txt",
                "d 4096 1700000000.0", "dir", "l 7 1700000000", "link", "p 0 1700000000", "fifo"), "d", "docker");
        assertThat(children).containsEntry("a.txt", Stat.file(12)).containsEntry("dir", Stat.of(EntryKind.DIRECTORY))
                .containsEntry("link", Stat.of(EntryKind.SYMLINK)).containsEntry("fifo", Stat.of(EntryKind.OTHER))
                .hasSize(4);
        assertThat(children.get("link").size()).isEqualTo(OptionalLong.empty());
    }

    @Test
    void aNameMayHoldANewlineOrASpaceAndAnEmptyDirectoryListsNothing() {
        assertThat(ListingOutput.parse(entries("f 3 1", "two\nlines and spaces"), "d", "docker"))
                .containsOnlyKeys("two\nlines and spaces");
        assertThat(ListingOutput.parse(new byte[0], "d", "docker")).isEmpty();
    }

    @Test
    void whatAHostileGuestCouldPrintInsteadIsRefusedWhole() {
        for (byte[] bad : new byte[][] {
                "f 3 1\nname".getBytes(StandardCharsets.UTF_8),
                entries("f 3", "short"),
                entries("ff 3 1", "type"),
                entries("f x 1", "size"),
                entries("f 3 1", "a/b"),
                entries("f 3 1", ".."),
                entries("f 3 1", ""),
                entries("f 3 1", "twice", "f 3 1", "twice")}) {
            assertThatThrownBy(() -> ListingOutput.parse(bad, "d", "docker")).isInstanceOf(SandboxFileException.class)
                    .hasMessageContaining("malformed");
        }
        byte[] latin1 = {'f', ' ', '1', ' ', '1', '\n', (byte) 0xe9, 0};
        assertThatThrownBy(() -> ListingOutput.parse(latin1, "d", "docker")).isInstanceOf(SandboxFileException.class)
                .hasMessageContaining("not UTF-8");
    }
}
