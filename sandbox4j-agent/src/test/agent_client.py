#!/usr/bin/env python3
"""A throwaway host client for s4j-agent (protocol version 1, see PROTOCOL.md).

Used by demo.py to drive the agent inside a QEMU microVM (over a unix socket QEMU connects to) or as a
local --stdio process. Single-threaded, synchronous: enough to demonstrate and measure, not the Java client.
"""
import collections
import os
import struct

MAGIC = 0x5334
VERSION = 1
HEADER = struct.Struct(">IHBBI")  # frame_length, magic, version, type, id
MAX_PAYLOAD = 1024 * 1024

T = dict(HELLO=0x01, PING=0x02, RESEED=0x03, SHUTDOWN=0x04, EXEC=0x10, STDIN=0x11, STDIN_CLOSE=0x12,
         SIGNAL=0x13, KILL=0x14, OUTPUT_ACK=0x15, LSTAT=0x20, READ=0x21, WRITE_OPEN=0x22, WRITE_DATA=0x23,
         WRITE_COMMIT=0x24, WRITE_ABORT=0x25, LIST=0x26, MKDIR=0x27, UNLINK=0x28, RMDIR=0x29, REMOVE_TREE=0x2A,
         HELLO_OK=0x81, PONG=0x82, STARTED=0x90, OUT=0x91, EXIT=0x92, STDIN_ACK=0x93, STAT=0xA0, DATA=0xA1,
         ENTRIES=0xA2, DONE=0xA3, ERROR=0xFF)
NAMES = {v: k for k, v in T.items()}


def u32(v): return struct.pack(">I", v)
def u64(v): return struct.pack(">Q", v)
def bstr(b): b = b if isinstance(b, bytes) else b.encode(); return u32(len(b)) + b
def blist(items): return u32(len(items)) + b"".join(bstr(i) for i in items)


class Reader:
    def __init__(self, data): self.data, self.pos = data, 0

    def take(self, n):
        if self.pos + n > len(self.data):
            raise ValueError("short payload")
        v = self.data[self.pos:self.pos + n]
        self.pos += n
        return v

    def u8(self): return self.take(1)[0]
    def u16(self): return struct.unpack(">H", self.take(2))[0]
    def u32(self): return struct.unpack(">I", self.take(4))[0]
    def i32(self): return struct.unpack(">i", self.take(4))[0]
    def u64(self): return struct.unpack(">Q", self.take(8))[0]
    def i64(self): return struct.unpack(">q", self.take(8))[0]
    def bytes(self): return self.take(self.u32())


class AgentError(Exception):
    def __init__(self, code, err, message):
        super().__init__(f"agent error {code} (errno {err}): {message}")
        self.code, self.errno, self.message = code, err, message


class Agent:
    """send(bytes) / recv(n) over any byte stream."""

    def __init__(self, send, recv):
        self._send, self._recv, self._next = send, recv, 1
        self.buf = b""
        self.pending = {}

    def _read_exact(self, n):
        while len(self.buf) < n:
            chunk = self._recv(1 << 16)
            if not chunk:
                raise EOFError("agent stream closed")
            self.buf += chunk
        v, self.buf = self.buf[:n], self.buf[n:]
        return v

    def frame(self, typ, rid, payload=b""):
        self._send(HEADER.pack(8 + len(payload), MAGIC, VERSION, typ, rid) + payload)

    def read_frame(self):
        length, magic, version, typ, rid = HEADER.unpack(self._read_exact(HEADER.size))
        if magic != MAGIC or version != VERSION or length < 8 or length > 8 + MAX_PAYLOAD:
            raise ValueError(f"bad frame from agent: {length} {magic:x} {version}")
        return typ, rid, self._read_exact(length - 8)

    def new_id(self):
        self._next += 1
        return self._next

    def expect(self, rid, *types):
        """The next frame for rid; frames for other ids (a concurrent exec) are queued for their reader."""
        while True:
            queue = self.pending.get(rid)
            if queue:
                typ, got, payload = queue.popleft()
            else:
                typ, got, payload = self.read_frame()
                if got not in (rid, 0):
                    self.pending.setdefault(got, collections.deque()).append((typ, got, payload))
                    continue
            if typ == T["ERROR"]:
                r = Reader(payload)
                raise AgentError(r.u16(), r.i32(), r.bytes().decode(errors="replace"))
            if typ in types:
                return typ, payload
            raise ValueError(f"unexpected {NAMES.get(typ, typ)} for id {got} (waiting for {rid})")

    def hello(self):
        nonce = os.urandom(16)
        rid = self.new_id()
        self.frame(T["HELLO"], rid, struct.pack(">HH", 1, 1) + bstr(nonce))
        while True:  # discard anything of an older session
            typ, got, payload = self.read_frame()
            if typ == T["HELLO_OK"] and got == rid:
                r = Reader(payload)
                version, echoed = r.u16(), r.bytes()
                if echoed != nonce:
                    continue
                max_payload, flags, agent, kernel = r.u32(), r.u32(), r.bytes(), r.bytes()
                return dict(version=version, max_payload=max_payload, pid1=bool(flags & 1),
                            cgroup_kill=bool(flags & 2), agent=agent.decode(), kernel=kernel.decode())

    def ping(self, data=b"p"):
        rid = self.new_id()
        self.frame(T["PING"], rid, bstr(data))
        return Reader(self.expect(rid, T["PONG"])[1]).bytes()

    def reseed(self, data):
        rid = self.new_id()
        self.frame(T["RESEED"], rid, bstr(data))
        return Reader(self.expect(rid, T["DONE"])[1]).u64()

    def shutdown(self):
        rid = self.new_id()
        self.frame(T["SHUTDOWN"], rid, b"\0")
        self.expect(rid, T["DONE"])

    def start(self, argv, cwd="/", env=None, stdin=False, window=256 * 1024):
        env = env if env is not None else ["PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "HOME=/root"]
        rid = self.new_id()
        self.frame(T["EXEC"], rid, u32(1 if stdin else 0) + bstr(cwd) + blist(argv) + blist(env) + u32(window))
        return rid

    def stdin(self, rid, data): self.frame(T["STDIN"], rid, bstr(data))
    def close_stdin(self, rid): self.frame(T["STDIN_CLOSE"], rid)
    def kill(self, rid): self.frame(T["KILL"], rid)

    def wait(self, rid, cap=8 * 1024 * 1024, on_started=None):
        """Collects output (acknowledging it) until EXIT. Returns dict(out, err, how, code, launch, pid)."""
        out, err, pid, over_cap = bytearray(), bytearray(), None, False
        while True:
            typ, payload = self.expect(rid, T["STARTED"], T["OUT"], T["EXIT"], T["STDIN_ACK"])
            r = Reader(payload)
            if typ == T["STARTED"]:
                pid = r.u32()
                if on_started:
                    on_started(pid)
            elif typ == T["OUT"]:
                stream, data = r.u8(), r.bytes()
                (out if stream == 1 else err).extend(data)
                if len(out) + len(err) <= cap:
                    self.frame(T["OUTPUT_ACK"], rid, bytes([stream]) + u32(len(data)))
                elif not over_cap:
                    over_cap = True
                    self.kill(rid)
            elif typ == T["EXIT"]:
                how, code, launch = r.u8(), r.i32(), r.u8()
                return dict(out=bytes(out), err=bytes(err), how=how, code=code, launch=launch, pid=pid,
                            over_cap=over_cap)

    def run(self, argv, **kw):
        return self.wait(self.start(argv, **kw))

    # files
    def lstat(self, path):
        rid = self.new_id()
        self.frame(T["LSTAT"], rid, bstr(path))
        r = Reader(self.expect(rid, T["STAT"])[1])
        return dict(kind=r.u8(), mode=r.u32(), size=r.u64(), mtime_ns=r.i64(), uid=r.u32(), gid=r.u32(),
                    target=r.bytes())

    def write(self, path, data, mode=0o644, replace=True):
        rid = self.new_id()
        self.frame(T["WRITE_OPEN"], rid, bstr(path) + u32(mode) + u32(1 if replace else 0))
        self.expect(rid, T["DONE"])
        for i in range(0, len(data), 512 * 1024):
            self.frame(T["WRITE_DATA"], rid, bstr(data[i:i + 512 * 1024]))
        self.frame(T["WRITE_COMMIT"], rid)
        return Reader(self.expect(rid, T["DONE"])[1]).u64()

    def read(self, path, max_bytes=8 * 1024 * 1024):
        rid = self.new_id()
        self.frame(T["READ"], rid, bstr(path) + u64(max_bytes))
        data = bytearray()
        while True:
            typ, payload = self.expect(rid, T["DATA"], T["DONE"])
            if typ == T["DONE"]:
                return bytes(data)
            data.extend(Reader(payload).bytes())

    def list(self, path, max_entries=10000):
        rid = self.new_id()
        self.frame(T["LIST"], rid, bstr(path) + u32(max_entries))
        entries = []
        while True:
            typ, payload = self.expect(rid, T["ENTRIES"], T["DONE"])
            r = Reader(payload)
            if typ == T["DONE"]:
                return entries, bool(Reader(payload[8:]).u8())
            for _ in range(r.u32()):
                entries.append(dict(name=r.bytes().decode(), kind=r.u8(), mode=r.u32(), size=r.u64(),
                                    mtime_ns=r.i64()))

    def _simple(self, typ, payload):
        rid = self.new_id()
        self.frame(T[typ], rid, payload)
        return Reader(self.expect(rid, T["DONE"])[1]).u64()

    def mkdir(self, path, mode=0o755): return self._simple("MKDIR", bstr(path) + u32(mode))
    def unlink(self, path): return self._simple("UNLINK", bstr(path))
    def rmdir(self, path): return self._simple("RMDIR", bstr(path))
    def remove_tree(self, path): return self._simple("REMOVE_TREE", bstr(path))
