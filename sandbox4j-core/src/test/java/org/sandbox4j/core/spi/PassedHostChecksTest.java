package org.sandbox4j.core.spi;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/** What a remembered host check depends on, and what it never trusts. */
@EnabledOnOs(OS.LINUX)
class PassedHostChecksTest {

    @TempDir
    Path temp;

    private Path program;
    private Path records;
    private List<String> check;

    @BeforeEach
    void setUp() throws Exception {
        program = Files.writeString(temp.resolve("probe-program"), "#!/bin/sh\nexit 0\n");
        records = temp.resolve("state").resolve(".host-checks");
        check = List.of(program.toString(), "--flag", "/nonexistent/mount/point", "true");
    }

    @Test
    void aPassIsRememberedForTheSameLineAndNothingElse() {
        PassedHostChecks checks = PassedHostChecks.in(records);
        assertThat(checks.passed(check)).isFalse();
        checks.remember(check);
        assertThat(checks.passed(check)).isTrue();
        assertThat(PassedHostChecks.in(records).passed(check)).as("another JVM's view of the same records").isTrue();
        assertThat(checks.passed(List.of(program.toString(), "--other-flag", "true"))).isFalse();
        assertThat(PassedHostChecks.none().passed(check)).isFalse();
    }

    @Test
    void theRecordsAreTheOwnersAlone() throws Exception {
        PassedHostChecks.in(records).remember(check);
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(records))).isEqualTo("rwx------");
        try (var entries = Files.list(records)) {
            Path record = entries.findFirst().orElseThrow();
            assertThat(Files.readString(record)).contains("word " + program).contains("boot ");
        }
    }

    @Test
    void aChangedProgramIsAnotherCheck() throws Exception {
        PassedHostChecks checks = PassedHostChecks.in(records);
        checks.remember(check);
        Files.writeString(program, "#!/bin/sh\nexit 10\n");
        assertThat(checks.passed(check)).as("a program rewritten in place").isFalse();

        checks.remember(check);
        Path replacement = Files.writeString(temp.resolve("replacement"), "#!/bin/sh\nexit 1\n");
        Files.move(replacement, program, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        assertThat(checks.passed(check)).as("a program replaced by another file").isFalse();
    }

    @Test
    void aDirectoryNamedInTheLineMayChangeWithoutAnotherCheck() throws Exception {
        Path mountPoint = Files.createDirectory(temp.resolve("tmp"));
        List<String> withDirectory = List.of(program.toString(), "--tmpfs", mountPoint.toString());
        PassedHostChecks checks = PassedHostChecks.in(records);
        checks.remember(withDirectory);
        Files.writeString(mountPoint.resolve("made-meanwhile"), "x");
        Files.setLastModifiedTime(mountPoint, FileTime.from(Instant.now().plusSeconds(5)));
        assertThat(checks.passed(withDirectory)).isTrue();
    }

    @Test
    void anOldPassIsNotBelieved() throws Exception {
        PassedHostChecks checks = PassedHostChecks.in(records);
        checks.remember(check);
        Path record = onlyRecord();
        Files.setLastModifiedTime(record, FileTime.from(Instant.now().minus(PassedHostChecks.MAX_AGE).minusSeconds(60)));
        assertThat(checks.passed(check)).isFalse();
        Files.setLastModifiedTime(record, FileTime.from(Instant.now().plusSeconds(3600)));
        assertThat(checks.passed(check)).as("a pass dated in the future").isFalse();
    }

    @Test
    void aLinkIsNeverARecordNorTheDirectory() throws Exception {
        PassedHostChecks checks = PassedHostChecks.in(records);
        checks.remember(check);
        Path record = onlyRecord();
        Path elsewhere = Files.writeString(temp.resolve("elsewhere"), "planted");
        Files.delete(record);
        Files.createSymbolicLink(record, elsewhere);
        assertThat(checks.passed(check)).as("a link in a record's place").isFalse();

        Path realRecords = temp.resolve("real-records");
        PassedHostChecks.in(realRecords).remember(check);
        Path linked = temp.resolve("linked-records");
        Files.createSymbolicLink(linked, realRecords);
        assertThat(PassedHostChecks.in(linked).passed(check)).as("records reached through a linked directory").isFalse();
    }

    @Test
    void aDirectoryOpenToOthersIsNotTrusted() throws Exception {
        PassedHostChecks checks = PassedHostChecks.in(records);
        checks.remember(check);
        Files.setPosixFilePermissions(records, PosixFilePermissions.fromString("rwxrwxrwx"));
        assertThat(checks.passed(check)).isFalse();
        checks.remember(List.of("another", "line"));
        assertThat(checks.passed(List.of("another", "line"))).as("nothing written where others can write").isFalse();
    }

    @Test
    void theRecordsStayBounded() throws Exception {
        PassedHostChecks checks = PassedHostChecks.in(records);
        for (int i = 0; i < PassedHostChecks.MAX_RECORDS * 2; i++) {
            checks.remember(List.of("line", Integer.toString(i)));
        }
        try (var entries = Files.list(records)) {
            assertThat(entries.count()).isLessThanOrEqualTo(PassedHostChecks.MAX_RECORDS);
        }
        assertThat(checks.passed(List.of("line", Integer.toString(PassedHostChecks.MAX_RECORDS * 2 - 1)))).isTrue();
    }

    @Test
    void anUnwritableStateRootLeavesEveryCheckToRun() throws Exception {
        Path blocked = Files.writeString(temp.resolve("a-file"), "not a directory");
        PassedHostChecks checks = PassedHostChecks.in(blocked.resolve(".host-checks"));
        checks.remember(check);
        assertThat(checks.passed(check)).isFalse();
    }

    private Path onlyRecord() throws Exception {
        try (var entries = Files.list(records)) {
            List<Path> all = entries.toList();
            assertThat(all).hasSize(1);
            return all.get(0);
        }
    }
}
