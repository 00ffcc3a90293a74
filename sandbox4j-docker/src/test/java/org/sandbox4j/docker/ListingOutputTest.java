package org.sandbox4j.docker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
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
    void eachKindAFilesSizeAModeAndATimeAreRead() {
        Map<String, Stat> children = ListingOutput.parse(entries("f 12 1700000000.5000000000 640", "a.txt",
                "d 4096 1700000000.0 4755", "dir", "l 7 1700000000 777", "link", "p 0 1700000000 600", "fifo"), "d",
                "docker");
        Instant second = Instant.ofEpochSecond(1_700_000_000L);
        assertThat(children).containsEntry("a.txt", Stat.file(12).with(0640, second.plusMillis(500)))
                .containsEntry("dir", Stat.of(EntryKind.DIRECTORY).with(04755, second))
                .containsEntry("link", Stat.of(EntryKind.SYMLINK).with(0777, second))
                .containsEntry("fifo", Stat.of(EntryKind.OTHER).with(0600, second)).hasSize(4);
        assertThat(children.get("link").size()).isEqualTo(OptionalLong.empty());
    }

    @Test
    void aNameMayHoldANewlineOrASpaceAndAnEmptyDirectoryListsNothing() {
        assertThat(ListingOutput.parse(entries("f 3 1 644", "two\nlines and spaces"), "d", "docker"))
                .containsOnlyKeys("two\nlines and spaces");
        assertThat(ListingOutput.parse(new byte[0], "d", "docker")).isEmpty();
    }

    @Test
    void whatAHostileGuestCouldPrintInsteadIsRefusedWhole() {
        for (byte[] bad : new byte[][] {
                "f 3 1 644\nname".getBytes(StandardCharsets.UTF_8),
                entries("f 3 1", "short"),
                entries("ff 3 1 644", "type"),
                entries("f x 1 644", "size"),
                entries("f 3 1 9", "mode not octal"),
                entries("f 3 1 17777", "mode beyond 07777"),
                entries("f 3 1e999999999 644", "time"),
                entries("f 3 1 644", "a/b"),
                entries("f 3 1 644", ".."),
                entries("f 3 1 644", ""),
                entries("f 3 1 644", "twice", "f 3 1 644", "twice")}) {
            assertThatThrownBy(() -> ListingOutput.parse(bad, "d", "docker")).isInstanceOf(SandboxFileException.class)
                    .hasMessageContaining("malformed");
        }
        byte[] latin1 = {'f', ' ', '1', ' ', '1', ' ', '6', '4', '4', '\n', (byte) 0xe9, 0};
        assertThatThrownBy(() -> ListingOutput.parse(latin1, "d", "docker")).isInstanceOf(SandboxFileException.class)
                .hasMessageContaining("not UTF-8");
    }
}
