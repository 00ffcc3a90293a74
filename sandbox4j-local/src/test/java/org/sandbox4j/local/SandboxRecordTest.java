package org.sandbox4j.local;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sandbox4j.core.spi.KeyDigest;
import org.sandbox4j.core.SandboxKey;

/** The ownership record: what it stores, how it reads back, and when its sandbox counts as abandoned. */
class SandboxRecordTest {

    private static final SandboxKey KEY = new SandboxKey("scope-a", "thread-a", "agent-a");
    private static final Duration LEASE = Duration.ofMinutes(10);

    @TempDir
    Path tempDir;

    @Test
    void aRecordReadsBackAsWritten() throws IOException {
        SandboxRecord record = SandboxRecord.fresh("sbx-1", KEY, "code", "fingerprint", LEASE);

        record.write(tempDir);

        assertThat(SandboxRecord.read(tempDir)).contains(record);
        try (var files = Files.list(tempDir)) {
            assertThat(files).as("the temporary file was renamed into place")
                    .containsExactly(tempDir.resolve(SandboxRecord.FILE_NAME));
        }
    }

    @Test
    void aFreshRecordHoldsDigestsOfTheKeyAndThisProcessAsOwner() {
        SandboxRecord record = SandboxRecord.fresh("sbx-1", KEY, "code", "fingerprint", LEASE);

        assertThat(record.scopeHash()).isEqualTo(KeyDigest.sha256Hex("scope-a"));
        assertThat(record.threadHash()).isEqualTo(KeyDigest.sha256Hex("thread-a"));
        assertThat(record.agentHash()).isEqualTo(KeyDigest.sha256Hex("agent-a"));
        assertThat(record.ownerPid()).isEqualTo(ProcessHandle.current().pid());
        assertThat(record.ownerAlive()).isTrue();
        assertThat(record.leaseUntil()).isAfter(Instant.now().plus(LEASE).minusSeconds(60));
    }

    @Test
    void aMissingOrIncompleteRecordReadsAsNone() throws IOException {
        assertThat(SandboxRecord.read(tempDir)).isEmpty();
        Files.writeString(tempDir.resolve(SandboxRecord.FILE_NAME), "id=sbx-1\nkind=code\n");
        assertThat(SandboxRecord.read(tempDir)).isEmpty();
        Files.writeString(tempDir.resolve(SandboxRecord.FILE_NAME), "\u0000\u0001 not properties at all");
        assertThat(SandboxRecord.read(tempDir)).isEmpty();
    }

    @Test
    void belongsToMatchesScopeAndThreadAndTheWholeKey() {
        SandboxRecord record = SandboxRecord.fresh("sbx-1", KEY, "code", "fingerprint", LEASE);

        assertThat(record.belongsTo("scope-a", "thread-a")).isTrue();
        assertThat(record.belongsTo("scope-a", "thread-b")).isFalse();
        assertThat(record.belongsTo("scope-b", "thread-a")).isFalse();
        assertThat(record.belongsTo(KEY)).isTrue();
        assertThat(record.belongsTo(new SandboxKey("scope-a", "thread-a", "agent-b"))).isFalse();
    }

    @Test
    void theIdChangesWithEachPartOfTheIdentity() {
        String id = SandboxRecord.idOf("bubblewrap", KEY, "code", "fp");

        assertThat(id).matches("sbx-[0-9a-f]{32}");
        assertThat(SandboxRecord.idOf("bubblewrap", KEY, "code", "fp")).isEqualTo(id);
        assertThat(new String[] {
            SandboxRecord.idOf("other", KEY, "code", "fp"),
            SandboxRecord.idOf("bubblewrap", new SandboxKey("scope-b", "thread-a", "agent-a"), "code", "fp"),
            SandboxRecord.idOf("bubblewrap", new SandboxKey("scope-a", "thread-b", "agent-a"), "code", "fp"),
            SandboxRecord.idOf("bubblewrap", new SandboxKey("scope-a", "thread-a", "agent-b"), "code", "fp"),
            SandboxRecord.idOf("bubblewrap", KEY, "other", "fp"),
            SandboxRecord.idOf("bubblewrap", KEY, "code", "other")}).doesNotHaveDuplicates().doesNotContain(id);
        assertThat(SandboxRecord.idOf("bubblewrap", new SandboxKey("a:b", "c", "d"), "k", "f"))
                .as("parts are delimited, not concatenated")
                .isNotEqualTo(SandboxRecord.idOf("bubblewrap", new SandboxKey("a", "b:c", "d"), "k", "f"));
    }

    @Test
    void aDetachedSandboxIsAbandonedOnlyWhenTheLeaseExpiredAndTheOwnerIsGone() throws Exception {
        SandboxRecord mine = SandboxRecord.fresh("sbx-1", KEY, "code", "fingerprint", LEASE).detached();
        Instant past = Instant.now().minusSeconds(1);
        long deadPid = deadPid();
        Instant someStart = Instant.parse("2020-01-01T00:00:00Z");

        assertThat(withOwner(mine, ProcessHandle.current().pid(), mine.ownerStart(), past).abandoned(Instant.now()))
                .as("expired lease, live owner").isFalse();
        assertThat(withOwner(mine, deadPid, someStart, Instant.now().plusSeconds(60)).abandoned(Instant.now()))
                .as("dead owner that let it go, lease still running").isFalse();
        assertThat(withOwner(mine, deadPid, someStart, past).abandoned(Instant.now()))
                .as("dead owner, expired lease").isTrue();
        assertThat(withOwner(mine, ProcessHandle.current().pid(), someStart, past).abandoned(Instant.now()))
                .as("the pid is alive but it is another process (another start time): a reused pid").isTrue();
    }

    @Test
    void anAttachedSandboxWhoseOwnerIsGoneWasLeftByACrashAndIsAbandonedAtOnce() throws Exception {
        SandboxRecord held = SandboxRecord.fresh("sbx-1", KEY, "code", "fingerprint", LEASE);
        Instant future = Instant.now().plusSeconds(600);

        assertThat(held.attached()).isTrue();
        assertThat(withOwner(held, deadPid(), Instant.parse("2020-01-01T00:00:00Z"), future).abandoned(Instant.now()))
                .as("dead owner still holding it, lease running").isTrue();
        assertThat(withOwner(held, ProcessHandle.current().pid(), held.ownerStart(), future).abandoned(Instant.now()))
                .as("live owner holding it").isFalse();
        assertThat(held.detached().attached()).isFalse();
        assertThat(held.detached().renewed(LEASE).attached()).as("acquired again: held again").isTrue();
    }

    @Test
    void aFormatOneRecordReadsAsDetached() throws IOException {
        SandboxRecord record = SandboxRecord.fresh("sbx-1", KEY, "code", "fingerprint", LEASE);
        record.write(tempDir);
        Path file = tempDir.resolve(SandboxRecord.FILE_NAME);
        Files.writeString(file, Files.readString(file).replace("attached=true", "").replace("format=2", "format=1"));

        assertThat(SandboxRecord.read(tempDir)).map(SandboxRecord::attached).contains(false);
    }

    @Test
    void renewingMakesThisProcessTheOwnerWithAFreshLeaseAndKeepsTheRest() {
        SandboxRecord old = withOwner(SandboxRecord.fresh("sbx-1", KEY, "code", "fp", LEASE), 1, Instant.EPOCH,
                Instant.now().minusSeconds(5));

        SandboxRecord renewed = old.renewed(LEASE);

        assertThat(renewed.ownerPid()).isEqualTo(ProcessHandle.current().pid());
        assertThat(renewed.leaseUntil()).isAfter(Instant.now());
        assertThat(renewed.createdAt()).isEqualTo(old.createdAt());
        assertThat(renewed.scopeHash()).isEqualTo(old.scopeHash());
        assertThat(renewed.fingerprint()).isEqualTo(old.fingerprint());
        assertThat(renewed.leaseWaning(LEASE, Instant.now())).isFalse();
        assertThat(renewed.leaseWaning(LEASE, Instant.now().plus(LEASE.dividedBy(2)).plusSeconds(1))).isTrue();
    }

    private static SandboxRecord withOwner(SandboxRecord record, long pid, Instant start, Instant leaseUntil) {
        return new SandboxRecord(record.id(), record.scopeHash(), record.threadHash(), record.agentHash(),
                record.kind(), record.fingerprint(), record.createdAt(), pid, start, leaseUntil, record.attached());
    }

    /** The pid of a process that ran and was reaped. */
    private static long deadPid() throws Exception {
        Process process = new ProcessBuilder("true").start();
        assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
        return process.pid();
    }
}
