#!/usr/bin/env python3
"""Proves the power-cut harness (lazyfs.py) can fail and does not cry wolf.

Each case mounts a fresh harness, does some writes on it, SIGKILLs the writer, cuts the power,
mounts again and reads back:

* sqlite-full: plain SQLite, WAL, synchronous=FULL; every commit acknowledged before the kill
  must be there (and the database must pass integrity_check);
* sqlite-normal: the same at synchronous=NORMAL (in WAL mode that syncs only at checkpoints):
  acknowledged commits must be LOST, or the harness would not catch the bug it exists for;
* rename-no-dirsync / rename-dirsync: the replace-by-rename pattern (write a temporary file, fsync
  it, rename it over the target); without an fsync of the directory the target must still have
  its old content after the cut, with one it must have the new;
* create-no-dirsync / unlink-no-dirsync: a new fsynced file vanishes and an unlinked one comes
  back when their directory was not fsynced;
* unsynced-write: bytes written over a synced file and never fsynced are dropped, those before
  the fsync are kept.

Prints one line per case and a closing 'N passed, N failed'; exits non-zero on any failure.
Root and /dev/fuse are needed (see lazyfs.py).
"""

import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from trials import WRITER, Mount as Harness, read_sqlite  # noqa: E402  (the plain SQLite writer, mount and reader of the trials)

def sqlite_case(root, level, commits):
    """Returns (acknowledged, lost, integrity) for a SQLite writer killed after `commits` acks."""
    h = Harness(root)
    h.up()
    acks = os.path.join(root, "acks")
    writer = subprocess.Popen([sys.executable, "-c", WRITER, os.path.join(h.mnt, "t.db"), level, acks])
    deadline = time.monotonic() + 120
    while True:
        if os.path.exists(acks) and sum(1 for _ in open(acks)) >= commits:
            break
        if writer.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError("the writer stopped before %d commits" % commits)
        time.sleep(0.01)
    writer.send_signal(signal.SIGKILL)
    writer.wait()
    acked = [line.strip() for line in open(acks) if line.strip()]
    h.cut()
    h.up()
    try:
        integrity, ids = read_sqlite(os.path.join(h.mnt, "t.db"), "t")
        have = set(ids or [])
    finally:
        h.down()
    return len(acked), sum(1 for i in acked if i not in have), integrity


def write_file(path, data, sync=True):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.write(fd, data)
    if sync:
        os.fsync(fd)
    os.close(fd)


def fsync_dir(path):
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    os.fsync(fd)
    os.close(fd)


def read_or_none(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None


def files_case(root, action):
    """Runs action(mountpoint) on a fresh harness, cuts, and returns check(mountpoint)'s result."""
    h = Harness(root)
    h.up()
    try:
        check = action(h.mnt)
    except BaseException:
        h.down()
        raise
    h.cut()
    h.up()
    try:
        return check(h.mnt)
    finally:
        h.down()


def rename_case(dirsync):
    def action(m):
        write_file(os.path.join(m, "target"), b"old")
        fsync_dir(m)
        write_file(os.path.join(m, "target.tmp"), b"new")
        os.rename(os.path.join(m, "target.tmp"), os.path.join(m, "target"))
        if dirsync:
            fsync_dir(m)
        want = b"new" if dirsync else b"old"
        return lambda m2: (read_or_none(os.path.join(m2, "target")) == want and not os.path.exists(os.path.join(m2, "target.tmp")),
                           "target=%r" % read_or_none(os.path.join(m2, "target")))
    return action


def create_no_dirsync(m):
    write_file(os.path.join(m, "new"), b"data")  # fsynced, its directory not
    return lambda m2: (read_or_none(os.path.join(m2, "new")) is None, "new=%r" % read_or_none(os.path.join(m2, "new")))


def unlink_no_dirsync(m):
    write_file(os.path.join(m, "kept"), b"durable")
    fsync_dir(m)
    os.unlink(os.path.join(m, "kept"))
    return lambda m2: (read_or_none(os.path.join(m2, "kept")) == b"durable", "kept=%r" % read_or_none(os.path.join(m2, "kept")))


def unsynced_write(m):
    p = os.path.join(m, "f")
    write_file(p, b"A" * 10000)
    fsync_dir(m)
    fd = os.open(p, os.O_WRONLY)
    os.pwrite(fd, b"B" * 5000, 2000)  # over the synced bytes and past them
    os.pwrite(fd, b"C" * 5000, 9000)
    os.close(fd)
    return lambda m2: (read_or_none(os.path.join(m2, "f")) == b"A" * 10000, "f has %d bytes" % len(read_or_none(os.path.join(m2, "f")) or b""))


def main():
    commits = int(os.environ.get("POWERCUT_SELFTEST_COMMITS", "1500"))
    results = []
    with tempfile.TemporaryDirectory(prefix="powercut-selftest-") as tmp:
        def run(name, fn):
            root = tempfile.mkdtemp(dir=tmp)
            try:
                ok, detail = fn(root)
            except Exception as e:  # a harness that breaks is a failure, reported as such
                ok, detail = False, "error: %s" % e
            print("%s %s: %s" % ("PASS" if ok else "FAIL", name, detail), flush=True)
            results.append(ok)

        def full(root):
            acked, lost, integrity = sqlite_case(root, "FULL", commits)
            return lost == 0 and integrity == "ok", "%d acknowledged, %d lost, integrity %s" % (acked, lost, integrity)

        def normal(root):
            acked, lost, integrity = sqlite_case(root, "NORMAL", commits)
            return lost > 0 and integrity == "ok", "%d acknowledged, %d lost (must be > 0), integrity %s" % (acked, lost, integrity)

        run("sqlite-full", full)
        run("sqlite-normal", normal)
        run("rename-no-dirsync", lambda r: files_case(r, rename_case(False)))
        run("rename-dirsync", lambda r: files_case(r, rename_case(True)))
        run("create-no-dirsync", lambda r: files_case(r, create_no_dirsync))
        run("unlink-no-dirsync", lambda r: files_case(r, unlink_no_dirsync))
        run("unsynced-write", lambda r: files_case(r, unsynced_write))
    passed = sum(results)
    print("selftest: %d passed, %d failed" % (passed, len(results) - passed))
    return 0 if passed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
