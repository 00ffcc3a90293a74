#!/usr/bin/env python3
"""Throwaway demonstration: boot the guest under QEMU (-M microvm, TCG), drive s4j-agent, print timings.

    demo.py GUEST_DIR [--no-root]

GUEST_DIR is what build-guest.sh printed. With --no-root the agent runs from the initramfs (no python3).
"""
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../../../sandbox4j-agent/src/test'))
from agent_client import Agent, AgentError  # noqa: E402

BOOT_TIMEOUT_S = 30
HELLO_RETRY_S = 0.5


def host_khz():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("cpu MHz"):
                return int(float(line.split(":")[1]) * 1000)
    raise SystemExit("no cpu MHz in /proc/cpuinfo")


def qemu_command(guest, sock, console, with_root):
    append = f"console=ttyS0 panic=-1 quiet tsc_early_khz={host_khz()}"
    cmd = ["qemu-system-x86_64", "-M", "microvm,isa-serial=on,rtc=on", "-accel", "tcg,tb-size=32",
           "-m", "256", "-smp", "1", "-nodefaults", "-no-user-config", "-nic", "none", "-display", "none",
           "-no-reboot", "-serial", f"file:{console}",
           "-sandbox", "on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny",
           "-kernel", f"{guest}/vmlinux", "-initrd", f"{guest}/initrd.cpio.gz",
           "-chardev", f"socket,id=ag,path={sock}",
           "-device", "virtio-serial-device", "-device", "virtserialport,chardev=ag,name=agent",
           "-object", "rng-random,id=rng0,filename=/dev/urandom", "-device", "virtio-rng-device,rng=rng0"]
    if with_root:
        append += " s4j.root=/dev/vda"
        cmd += ["-drive", f"file={guest}/rootfs.ext4,format=raw,if=none,id=d0,readonly=on",
                "-device", "virtio-blk-device,drive=d0"]
    return cmd + ["-append", append]


def hello_with_retry(agent, conn, deadline):
    """The port may not be open in the guest yet: resend HELLO (new nonce) until one is answered."""
    conn.settimeout(HELLO_RETRY_S)
    while time.monotonic() < deadline:
        try:
            info = agent.hello()
            conn.settimeout(None)
            return info
        except socket.timeout:
            continue
    raise SystemExit("no HELLO_OK before the boot deadline")


def sleeps(agent):
    r = agent.run(["sh", "-c", "cat /proc/[0-9]*/comm 2>/dev/null | grep -c '^sleep$' || true"])
    return int(r["out"].decode().strip() or 0)


def main():
    guest = sys.argv[1]
    with_root = "--no-root" not in sys.argv
    tmp = tempfile.mkdtemp(prefix="s4j-demo-")
    sock_path, console = os.path.join(tmp, "agent.sock"), os.path.join(tmp, "console.log")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(sock_path)
    server.listen(1)  # listening before QEMU starts: no connect race, the same after a restore
    t0 = time.monotonic()
    qemu = subprocess.Popen(qemu_command(guest, sock_path, console, with_root), stdin=subprocess.DEVNULL)
    try:
        server.settimeout(BOOT_TIMEOUT_S)
        conn, _ = server.accept()
        t_connect = time.monotonic() - t0
        agent = Agent(conn.sendall, conn.recv)
        info = hello_with_retry(agent, conn, t0 + BOOT_TIMEOUT_S)
        t_hello = time.monotonic() - t0
        print(f"qemu connected {t_connect * 1000:.0f} ms, HELLO_OK {t_hello * 1000:.0f} ms after start: {info}")
        print("reseed bits credited:", agent.reseed(os.urandom(64)))

        r = agent.run(["/bin/true"])
        print("/bin/true:", r["code"], r["how"])
        if with_root:
            for attempt in ("first", "second"):
                t = time.monotonic()
                r = agent.run(["python3", "-c", "print(sum(range(10)))"])
                print(f"python3 ({attempt}): out={r['out']!r} code={r['code']} {1000 * (time.monotonic() - t):.0f} ms")
        r = agent.run(["no-such-program"])
        print("missing program:", r["code"], "launch", r["launch"])
        try:
            agent.run(["/bin/true"], cwd="/no/such/dir")
        except AgentError as e:
            print("missing cwd:", e)
        rid = agent.start(["cat"], stdin=True)
        agent.stdin(rid, b"echo through stdin\n")
        agent.close_stdin(rid)
        print("cat:", agent.wait(rid))
        r = agent.run(["sh", "-c", "echo out; echo err >&2; exit 3"])
        print("streams:", r["out"], r["err"], r["code"])
        r = agent.run(["sh", "-c", "id; grep -E 'Cap(Eff|Prm|Amb)|NoNewPrivs' /proc/self/status; "
                             "cat /sys/fs/cgroup/s4j/pids.max; ls -ld /tmp; df -h / | tail -1"])
        print("identity:", r["out"].decode(), r["err"].decode())
        print("uname -r in the guest:", agent.run(["uname", "-r"])["out"].decode().strip())

        rid = agent.start(["sh", "-c", "sleep 100 & (setsid sleep 100 &); sleep 100"])
        time.sleep(1.0)
        before = sleeps(agent)
        t = time.monotonic()
        agent.kill(rid)
        r = agent.wait(rid)
        killed_ms = 1000 * (time.monotonic() - t)
        time.sleep(0.2)
        print(f"kill: {before} sleeps before, exit how={r['how']} sig={r['code']} in {killed_ms:.1f} ms,"
              f" {sleeps(agent)} sleeps after (incl. the setsid one)")

        agent.mkdir("/tmp/demo")
        payload = os.urandom(300_000)
        print("write:", agent.write("/tmp/demo/f.bin", payload), "bytes;",
              "read back equal:", agent.read("/tmp/demo/f.bin") == payload)
        agent.write("/tmp/demo/note.txt", b"hi\n")
        entries, truncated = agent.list("/tmp/demo")
        print("list:", sorted((e["name"], e["size"]) for e in entries), "truncated", truncated)
        print("lstat:", agent.lstat("/tmp/demo/note.txt"))
        print("remove_tree:", agent.remove_tree("/tmp/demo"), "entries")
        try:
            agent.lstat("/tmp/demo")
        except AgentError as e:
            print("after remove:", e)

        times = []
        for _ in range(50):
            t = time.perf_counter()
            agent.run(["/bin/true"])
            times.append(1000 * (time.perf_counter() - t))
        pings = []
        for _ in range(50):
            t = time.perf_counter()
            agent.ping()
            pings.append(1000 * (time.perf_counter() - t))
        print(f"exec /bin/true round trip: median {statistics.median(times):.2f} ms (min {min(times):.2f},"
              f" max {max(times):.2f}); ping median {statistics.median(pings):.3f} ms")

        t = time.monotonic()
        agent.shutdown()
        rc = qemu.wait(timeout=10)
        print(f"shutdown: qemu exited rc={rc} {1000 * (time.monotonic() - t):.0f} ms after SHUTDOWN")
    finally:
        if qemu.poll() is None:
            qemu.kill()
            qemu.wait()
        with open(console, errors="replace") as f:
            tail = f.read()[-1500:]
        print("--- console tail ---\n" + tail)


if __name__ == "__main__":
    main()
