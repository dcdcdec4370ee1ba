#!/usr/bin/env python3
"""A FUSE filesystem that forgets what was never fsynced: the power-cut harness.

What it models. Every write passes straight through to a backing directory, so the processes on
the mount see an ordinary filesystem. Beside that the harness remembers what a disk would lose if
the power went now:

* per file, the bytes written (or truncated away) since that file's last fsync or fdatasync,
  kept as an undo log of the old 4 KiB pages, and the file's size at that sync (fdatasync in its
  real meaning: data and size are durable after it, so both calls are treated alike);
* per directory, its entries as they stood at its last fsync (taken when the directory is first
  changed after one): files created, linked, renamed or unlinked since then are not durable.

`cut` is the power cut: after the processes using the mount have been SIGKILLed, the mount is
unmounted (the kernel's page cache, mmapped pages included, goes with it) and the backing
directory is rewritten to its durable view: un-synced pages get their old bytes back, each file
is cut back to its durable size, and each changed directory gets back exactly the entries of its
last fsync (a new file vanishes, a renamed file returns to its old name, a file replaced by a
rename gets its old content back, an unlinked file reappears). Mounting again then shows what a
disk holds after a power cut. A clean `down` keeps everything (a clean shutdown syncs).

What it does not model: torn or reordered writes within a file (every un-synced write is dropped
whole, the most a disk may lose, never a part of one); metadata other than names and sizes
(modes, owners, times are kept); data the kernel still held in dirty mmapped pages is handed over
at unmount and dropped like any other un-synced write. The backing filesystem's own fsync is not
called: the harness is the disk under test, and skipping it keeps trials fast.

Unlinked files and removed directories are kept (hard link or rename) in a graveyard beside the
data until the cut, so an entry can be restored and no inode number is reused in a session; the
identity of a file is its backing inode number.

Usage (as root; the mount uses allow_other so other users, e.g. postgres, can use it):

    lazyfs.py up STATE MOUNTPOINT     # mount STATE/data on MOUNTPOINT in the background
    lazyfs.py cut STATE MOUNTPOINT    # power cut: unmount, drop what was not synced; prints a JSON report
    lazyfs.py down STATE MOUNTPOINT   # clean unmount, everything kept
    lazyfs.py serve STATE MOUNTPOINT  # the daemon itself, in the foreground (what `up` starts)

Needs libfuse 3 (Debian: fuse3) and mfusepy (PyPI).
"""

import errno
import json
import os
import shutil
import stat
import subprocess
import sys
import threading
import time

PAGE = 4096


class FileState:
    """What a disk would hold of one file: its size and old page bytes at its last fsync."""

    __slots__ = ("durable_size", "undo")

    def __init__(self, durable_size):
        self.durable_size = durable_size
        self.undo = {}  # page index -> the page's bytes at the last fsync (clipped to durable_size)


class Durability:
    """The model of what is durable, over a backing directory; all changes go through here."""

    def __init__(self, state_dir):
        self.data = os.path.join(state_dir, "data")
        self.graveyard = os.path.join(state_dir, "graveyard")
        os.makedirs(self.data, exist_ok=True)
        shutil.rmtree(self.graveyard, ignore_errors=True)
        os.makedirs(self.graveyard)
        self.lock = threading.RLock()
        self.files = {}  # inode -> FileState, for files changed since their last fsync
        self.dirs = {}  # inode -> {name: inode} as of the directory's last fsync
        self.stats = {"writes": 0, "fsyncs": 0, "dir_fsyncs": 0}

    # -- paths and identities

    def real(self, path):
        return os.path.join(self.data, path.lstrip("/"))

    def _bury(self, real_path):
        """Keeps an entry about to be unlinked or replaced, so a cut can bring it back."""
        st = os.lstat(real_path)
        grave = os.path.join(self.graveyard, str(st.st_ino))
        if stat.S_ISDIR(st.st_mode):
            return  # rmdir is done by renaming into the graveyard (see rmdir)
        if not os.path.lexists(grave):
            os.link(real_path, grave, follow_symlinks=False)

    def _snapshot_dir(self, dir_real):
        """Records a directory's entries before its first change since its last fsync."""
        ino = os.lstat(dir_real).st_ino
        if ino not in self.dirs:
            self.dirs[ino] = {e.name: e.inode() for e in os.scandir(dir_real)}

    def _parent(self, real_path):
        return os.path.dirname(real_path.rstrip("/")) or "/"

    def changing_entry(self, real_path, bury=True):
        """Called before an entry named real_path is created, removed, replaced or renamed away."""
        self._snapshot_dir(self._parent(real_path))
        if bury and os.path.lexists(real_path):
            self._bury(real_path)

    # -- file contents

    def _file(self, ino, current_size):
        fs = self.files.get(ino)
        if fs is None:
            fs = self.files[ino] = FileState(current_size)
        return fs

    def _save_pages(self, fd, fs, start, end):
        """Keeps the durable bytes of the pages in [start, end) before they change."""
        end = min(end, fs.durable_size)
        if start >= end:
            return
        for page in range(start // PAGE, (end - 1) // PAGE + 1):
            if page not in fs.undo:
                length = min(PAGE, fs.durable_size - page * PAGE)
                fs.undo[page] = os.pread(fd, length, page * PAGE)

    def before_write(self, fd, offset, length):
        st = os.fstat(fd)
        fs = self._file(st.st_ino, st.st_size)
        self._save_pages(fd, fs, offset, offset + length)
        self.stats["writes"] += 1

    def before_truncate(self, fd, new_size):
        st = os.fstat(fd)
        fs = self._file(st.st_ino, st.st_size)
        if new_size < st.st_size:
            self._save_pages(fd, fs, new_size, st.st_size)

    def new_file(self, fd):
        self.files[os.fstat(fd).st_ino] = FileState(0)

    def synced(self, fd):
        self.files.pop(os.fstat(fd).st_ino, None)
        self.stats["fsyncs"] += 1

    def dir_synced(self, dir_real):
        self.dirs.pop(os.lstat(dir_real).st_ino, None)
        self.stats["dir_fsyncs"] += 1

    # -- the cut

    def _inode_paths(self):
        where = {}
        for root in (self.data, self.graveyard):
            where.setdefault(os.lstat(root).st_ino, root)
            for dirpath, dirnames, filenames in os.walk(root):
                for name in dirnames + filenames:
                    p = os.path.join(dirpath, name)
                    where.setdefault(os.lstat(p).st_ino, p)
        return where

    def cut(self):
        """Rewrites the backing directory to its durable view; returns what was dropped."""
        report = {"files_reverted": 0, "bytes_dropped": 0, "entries_reverted": 0}
        where = self._inode_paths()
        for ino, fs in self.files.items():
            path = where.get(ino)
            if path is None or not os.path.isfile(path):
                continue
            fd = os.open(path, os.O_WRONLY)
            try:
                size = os.fstat(fd).st_size
                for page, data in fs.undo.items():
                    os.pwrite(fd, data, page * PAGE)
                os.ftruncate(fd, fs.durable_size)
                report["bytes_dropped"] += max(0, size - fs.durable_size) + PAGE * len(fs.undo)
            finally:
                os.close(fd)
            report["files_reverted"] += 1
        # Directories: first put each durable entry that is missing under a temporary name (a link or
        # a move of its inode from wherever it is now), then remove what was not durable, then rename.
        pending = []
        for dir_ino, durable in self.dirs.items():
            dir_path = where.get(dir_ino)
            if dir_path is None or not os.path.isdir(dir_path):
                continue
            current = {e.name: e.inode() for e in os.scandir(dir_path)}
            for name, ino in durable.items():
                if current.get(name) == ino:
                    continue
                source = where.get(ino)
                if source is None:
                    continue
                temp = os.path.join(dir_path, ".lazyfs-restore-%d" % ino)
                if os.path.isdir(source) and not os.path.islink(source):
                    os.rename(source, temp)
                else:
                    os.link(source, temp, follow_symlinks=False)
                pending.append((temp, os.path.join(dir_path, name)))
            for name, ino in current.items():
                if durable.get(name) != ino:
                    victim = os.path.join(dir_path, name)
                    if os.path.isdir(victim) and not os.path.islink(victim):
                        shutil.rmtree(victim)
                    else:
                        os.unlink(victim)
                    report["entries_reverted"] += 1
        for temp, final in pending:
            if os.path.lexists(final):  # a durable name taken by a non-durable entry of another directory
                if os.path.isdir(final) and not os.path.islink(final):
                    shutil.rmtree(final)
                else:
                    os.unlink(final)
            os.rename(temp, final)
            report["entries_reverted"] += 1
        self.finish()
        return report

    def finish(self):
        shutil.rmtree(self.graveyard, ignore_errors=True)
        self.files.clear()
        self.dirs.clear()


def make_operations(model):
    """The FUSE operations: a pass-through to model.data that tells the model before each change."""
    import mfusepy as fuse

    def err(e):
        return fuse.FuseOSError(e.errno or errno.EIO)

    class PowerCutFS(fuse.Operations):
        use_ns = True

        def __init__(self):
            self.mutex = model.lock

        def _own(self, real_path):
            uid, gid, _ = fuse.fuse_get_context()
            os.lchown(real_path, uid, gid)

        def getattr(self, path, fh=None):
            try:
                st = os.fstat(fh) if fh is not None else os.lstat(model.real(path))
            except OSError as e:
                raise err(e)
            keys = ("st_mode", "st_nlink", "st_uid", "st_gid", "st_size", "st_ino", "st_blocks")
            attrs = {k: getattr(st, k) for k in keys}
            attrs.update(st_atime=st.st_atime_ns, st_mtime=st.st_mtime_ns, st_ctime=st.st_ctime_ns)
            return attrs

        def readdir(self, path, fh):
            return [".", ".."] + os.listdir(model.real(path))

        def readlink(self, path):
            return os.readlink(model.real(path))

        def statfs(self, path):
            sv = os.statvfs(model.real(path))
            keys = ("f_bavail", "f_bfree", "f_blocks", "f_bsize", "f_favail", "f_ffree", "f_files", "f_flag", "f_frsize", "f_namemax")
            return {k: getattr(sv, k) for k in keys}

        def chmod(self, path, mode):
            os.chmod(model.real(path), mode)
            return 0

        def chown(self, path, uid, gid):
            os.lchown(model.real(path), uid, gid)
            return 0

        def utimens(self, path, times=None):
            os.utime(model.real(path), ns=times, follow_symlinks=False)
            return 0

        def mkdir(self, path, mode):
            real = model.real(path)
            with self.mutex:
                model.changing_entry(real)
                os.mkdir(real, mode)
                self._own(real)
            return 0

        def rmdir(self, path):
            real = model.real(path)
            with self.mutex:
                model.changing_entry(real)
                if os.listdir(real):
                    raise fuse.FuseOSError(errno.ENOTEMPTY)
                os.rename(real, os.path.join(model.graveyard, str(os.lstat(real).st_ino)))
            return 0

        def unlink(self, path):
            real = model.real(path)
            with self.mutex:
                model.changing_entry(real)
                os.unlink(real)
            return 0

        def symlink(self, target, source):
            real = model.real(target)
            with self.mutex:
                model.changing_entry(real)
                os.symlink(source, real)
                self._own(real)
            return 0

        def link(self, target, source):
            real = model.real(target)
            with self.mutex:
                model.changing_entry(real)
                os.link(model.real(source), real)
            return 0

        def rename(self, old, new):
            old_real, new_real = model.real(old), model.real(new)
            with self.mutex:
                model.changing_entry(old_real, bury=False)
                if os.path.isdir(new_real) and not os.path.islink(new_real) and os.path.lexists(new_real):
                    if os.listdir(new_real):
                        raise fuse.FuseOSError(errno.ENOTEMPTY)
                    model.changing_entry(new_real)
                    os.rename(new_real, os.path.join(model.graveyard, str(os.lstat(new_real).st_ino)))
                else:
                    model.changing_entry(new_real)
                try:
                    os.rename(old_real, new_real)
                except OSError as e:
                    raise err(e)
            return 0

        def mknod(self, path, mode, dev):
            real = model.real(path)
            with self.mutex:
                model.changing_entry(real)
                os.mknod(real, mode, dev)
                self._own(real)
            return 0

        @staticmethod
        def _flags(flags):
            """The backing descriptor's flags: readable too (the undo log reads old pages), positioned
            writes only (the kernel gives the offset, also for O_APPEND), no O_DIRECT alignment rules."""
            flags &= ~(os.O_APPEND | getattr(os, "O_DIRECT", 0) | os.O_CREAT | os.O_EXCL | os.O_TRUNC)
            if flags & os.O_ACCMODE != os.O_RDONLY:
                flags = (flags & ~os.O_ACCMODE) | os.O_RDWR
            return flags

        def open(self, path, flags):
            real = model.real(path)
            try:
                fd = os.open(real, self._flags(flags))
            except OSError as e:
                raise err(e)
            if flags & os.O_TRUNC:
                with self.mutex:
                    model.before_truncate(fd, 0)
                    os.ftruncate(fd, 0)
            return fd

        def create(self, path, mode, flags=os.O_RDWR):
            real = model.real(path)
            with self.mutex:
                existed = os.path.lexists(real)
                if existed and flags & os.O_EXCL:
                    raise fuse.FuseOSError(errno.EEXIST)
                if not existed:
                    model.changing_entry(real)
                fd = os.open(real, self._flags(flags) | os.O_CREAT, mode)
                if existed:
                    if flags & os.O_TRUNC:
                        model.before_truncate(fd, 0)
                        os.ftruncate(fd, 0)
                else:
                    model.new_file(fd)
                    self._own(real)
            return fd

        def read(self, path, size, offset, fh):
            return os.pread(fh, size, offset)

        def write(self, path, data, offset, fh):
            with self.mutex:
                model.before_write(fh, offset, len(data))
                return os.pwrite(fh, data, offset)

        def truncate(self, path, length, fh=None):
            with self.mutex:
                fd = fh if fh is not None else os.open(model.real(path), os.O_RDWR)  # the undo log reads
                try:
                    model.before_truncate(fd, length)
                    os.ftruncate(fd, length)
                finally:
                    if fh is None:
                        os.close(fd)
            return 0

        def fallocate(self, path, mode, offset, size, fh):
            if mode != 0:
                raise fuse.FuseOSError(errno.EOPNOTSUPP)
            with self.mutex:
                model.before_write(fh, offset, 0)
                os.posix_fallocate(fh, offset, size)
            return 0

        def flush(self, path, fh):
            return 0

        def release(self, path, fh):
            os.close(fh)
            return 0

        def fsync(self, path, datasync, fh):
            with self.mutex:
                model.synced(fh)
            return 0

        def fsyncdir(self, path, datasync, fh):
            with self.mutex:
                model.dir_synced(model.real(path))
            return 0

    return PowerCutFS()


def serve(state, mountpoint):
    """Runs the filesystem until it is unmounted, then applies a cut if one was asked for."""
    import mfusepy as fuse

    model = Durability(state)
    cut_flag = os.path.join(state, "cut")
    if os.path.exists(cut_flag):
        os.unlink(cut_flag)
    fuse.FUSE(make_operations(model), mountpoint, foreground=True, allow_other=True, default_permissions=True,
              hard_remove=True, fsname="lazyfs", subtype="lazyfs")
    with model.lock:
        if os.path.exists(cut_flag):
            report = model.cut()
        else:
            model.finish()
            report = {"files_reverted": 0, "bytes_dropped": 0, "entries_reverted": 0, "clean": True}
    report.update(model.stats)
    with open(os.path.join(state, "report.json.tmp"), "w") as f:
        json.dump(report, f)
    os.rename(os.path.join(state, "report.json.tmp"), os.path.join(state, "report.json"))


def is_mounted(mountpoint):
    target = os.path.realpath(mountpoint)
    with open("/proc/self/mounts") as f:
        return any(line.split()[1] == target for line in f)


def up(state, mountpoint):
    os.makedirs(state, exist_ok=True)
    os.makedirs(mountpoint, exist_ok=True)
    for name in ("report.json", "cut"):
        if os.path.exists(os.path.join(state, name)):
            os.unlink(os.path.join(state, name))
    log = open(os.path.join(state, "lazyfs.log"), "ab")
    proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "serve", state, mountpoint],
                            stdout=log, stderr=log, stdin=subprocess.DEVNULL, start_new_session=True)
    with open(os.path.join(state, "pid"), "w") as f:
        f.write(str(proc.pid))
    deadline = time.monotonic() + 30
    while not is_mounted(mountpoint):
        if proc.poll() is not None or time.monotonic() > deadline:
            sys.exit("lazyfs: mount of %s failed, see %s/lazyfs.log" % (mountpoint, state))
        time.sleep(0.05)
    print(proc.pid)


def users(mountpoint):
    """Processes holding a file, a mapping or their directory on the mount (why an unmount is busy)."""
    found = []
    for proc in os.listdir("/proc"):
        if not proc.isdigit():
            continue
        try:
            links = [os.readlink("/proc/%s/cwd" % proc)]
            links += [os.readlink("/proc/%s/fd/%s" % (proc, fd)) for fd in os.listdir("/proc/%s/fd" % proc)]
            with open("/proc/%s/maps" % proc) as f:
                links += [line.split(None, 5)[-1].strip() for line in f]
            if any(link == mountpoint or link.startswith(mountpoint + "/") for link in links):
                with open("/proc/%s/comm" % proc) as f:
                    found.append("%s (%s)" % (proc, f.read().strip()))
        except OSError:
            pass
    return found


def down(state, mountpoint, cut):
    if cut:
        open(os.path.join(state, "cut"), "w").close()
    for attempt in range(100):
        if subprocess.run(["fusermount3", "-u", mountpoint], stderr=subprocess.DEVNULL).returncode == 0:
            break
        time.sleep(0.1)  # busy: a killed process's descriptors are still being released
    else:
        sys.exit("lazyfs: %s stays busy, used by: %s" % (mountpoint, ", ".join(users(mountpoint)) or "nobody seen"))
    report = os.path.join(state, "report.json")
    deadline = time.monotonic() + 120
    while not os.path.exists(report):
        if time.monotonic() > deadline:
            sys.exit("lazyfs: no report from the daemon, see %s/lazyfs.log" % state)
        time.sleep(0.05)
    with open(report) as f:
        print(f.read())


def main(argv):
    if len(argv) != 4 or argv[1] not in ("up", "cut", "down", "serve"):
        sys.exit(__doc__.split("Usage")[1].split("Needs")[0])
    command, state, mountpoint = argv[1], os.path.abspath(argv[2]), os.path.abspath(argv[3])
    if command == "serve":
        serve(state, mountpoint)
    elif command == "up":
        up(state, mountpoint)
    else:
        down(state, mountpoint, cut=(command == "cut"))


if __name__ == "__main__":
    main(sys.argv)
