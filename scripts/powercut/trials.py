#!/usr/bin/env python3
"""Power-cut trials: real beekon-ingest and beekon processes on the harness (lazyfs.py).

Each trial: load, SIGKILL, power cut (drop what was not fsynced), mount again, restart, read back.
What is counted, per configuration:

* lost: acknowledged uploads (every 2xx the load client saw, logged outside the harness and
  fsynced there before the cut) or fixes the agent reported stored (its `progress ... stored=N`
  line, the count of fixes whose store write had returned; the agent is killed right after such
  a line) that are not there after the restart;
* dup: rows read back beyond the distinct fix ids (a resent batch stored twice);
* corrupt: SQLite databases failing `PRAGMA integrity_check` after the cut;
* failed: restarts that did not come up (server not healthy, agent store not readable).

Configurations:

  server-sqlite       beekon-ingest, SQLite on the harness, group commit on
  server-sqlite-nogc  the same with --no-group-commit
  server-postgres     beekon-ingest (not on the harness) on PostgreSQL whose data directory is on it, fsync on
  server-resend       SQLite on the harness; after each restart every upload left without an answer
                      by the kill (and a sample of answered ones) is sent again: all must be 2xx, stored once
  agent-local         `beekon track` replaying a recorded walk, local only, its database on the harness
  agent-sync          the same syncing to a beekon-ingest that is not on the harness: a fix reported
                      stored must be on the server or still in the agent's database
  sqlite-full         control: plain SQLite (WAL, synchronous=FULL) must lose nothing
  planted-normal      control: server-sqlite with its writer planted at synchronous=NORMAL (plant_normal.c,
                      LD_PRELOAD: every synchronous=FULL it asks SQLite for becomes NORMAL) MUST lose
                      acknowledged uploads; if it does not, the harness cannot see a writer that skips its fsync
                      and the run fails

--plant-normal plants the same into every beekon-ingest and beekon of the run (what the code did
when GRDB reset its writers to NORMAL), to see what the harness finds there.

Exit status: 0 when every target is met (0 lost, 0 dup, 0 corrupt, 0 failed; planted-normal lost
> 0), 1 otherwise. Needs root, /dev/fuse, fuse3 and mfusepy (see lazyfs.py); PostgreSQL's
binaries for server-postgres (BEEKON_PG_BIN, default /usr/lib/postgresql/15/bin).
"""

import argparse
import datetime
import glob
import http.client
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
LAZYFS = os.path.join(HERE, "lazyfs.py")
sys.path.insert(0, os.path.dirname(HERE))
import ingest_rate  # noqa: E402  (scripts/ingest_rate.py: the envelope generator and free_port)
from ingest_rate import free_port  # noqa: E402
WALK = os.path.join(REPO, "Tests/Data/gpx/togeojson_apple_watch_walk_1hz.gpx")
CONFIGS = ["server-sqlite", "server-sqlite-nogc", "server-postgres", "server-resend", "agent-local", "agent-sync",
           "sqlite-full", "planted-normal"]


class Failure(Exception):
    pass


# ---------------------------------------------------------------- plumbing

class Mount:
    """One harness mount; its state (the backing data) lives across trials."""

    def __init__(self, root):
        self.state = os.path.join(root, "fs")
        self.mnt = os.path.join(root, "mnt")
        self.data = os.path.join(self.state, "data")
        os.makedirs(self.data, exist_ok=True)

    def prepare(self, path):
        """Creates a directory that exists before the trials (in the backing data, so it is durable)."""
        os.makedirs(os.path.join(self.data, path), exist_ok=True)
        return os.path.join(self.mnt, path)

    def _run(self, command):
        out = subprocess.run([sys.executable, LAZYFS, command, self.state, self.mnt], stdout=subprocess.PIPE, text=True)
        if out.returncode != 0:
            raise Failure("lazyfs %s failed (see %s/lazyfs.log)" % (command, self.state))
        return out.stdout

    mounted = False

    def up(self):
        self._run("up")
        self.mounted = True

    def cut(self):
        self.mounted = False
        return json.loads(self._run("cut"))

    def down(self):
        if self.mounted:
            self.mounted = False
            self._run("down")


def http_json(port, method, path, body=None, timeout=30):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        headers = {"Content-Type": "application/json"} if body is not None else {}
        c.request(method, path, body=body, headers=headers)
        r = c.getresponse()
        data = r.read()
        return r.status, (json.loads(data) if data and r.status < 300 else data)
    finally:
        c.close()


def kill(proc):
    if proc and proc.poll() is None:
        proc.send_signal(signal.SIGKILL)
    if proc:
        proc.wait()


READ = r"""
import json, sqlite3, sys
path, table = sys.argv[1], sys.argv[2]  # table "-": integrity only
out = {}
try:
    con = sqlite3.connect(path, timeout=30)
    out["integrity"] = con.execute("PRAGMA integrity_check").fetchall()[0][0]
    try:
        out["ids"] = [] if table == "-" else [str(r[0]).lower() for r in con.execute("SELECT id FROM " + table).fetchall()]
    except sqlite3.OperationalError as e:
        if "no such table" not in str(e):
            raise
        out["ids"] = []  # the schema itself was not durable
    con.close()
except sqlite3.DatabaseError as e:
    out = {"integrity": "error: %s" % e, "ids": None}
print(json.dumps(out))
"""


def read_sqlite(path, table):
    """(integrity_check's verdict, the ids in table) of a database after the cut; ('absent', []) without
    one. Read in a child process, so no descriptor of the reader can keep the mount busy."""
    if not os.path.exists(path):
        return "absent", []
    out = subprocess.run([sys.executable, "-c", READ, path, table], stdout=subprocess.PIPE, text=True, check=True)
    result = json.loads(out.stdout)
    return result["integrity"], result["ids"]


class Tally:
    def __init__(self, name, unit):
        self.name, self.unit = name, unit
        self.trials = self.acked = self.lost = self.lost_trials = self.dup = self.corrupt = self.failed = 0
        self.oldest_lost_age = None  # seconds, where acknowledgements carry a time
        self.notes = []

    def row(self):
        age = "%.2f" % self.oldest_lost_age if self.lost and self.oldest_lost_age is not None else "-"
        return "%-19s %6d %10d %-8s %8d %9d %6d %8d %7d %9s" % (
            self.name, self.trials, self.acked, self.unit, self.lost, self.lost_trials, self.dup, self.corrupt,
            self.failed, age)


# ---------------------------------------------------------------- the server under load

class Server:
    def __init__(self, binary, database, extra, log, env=None):
        self.binary, self.database, self.extra, self.log, self.env = binary, database, extra, log, env
        self.port = free_port()
        self.proc = None

    def start(self, timeout=60):
        cmd = [self.binary, "--port", str(self.port), "--database", self.database, "--auth", "off",
               "--log-level", "warning"] + self.extra
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=self.log, stdin=subprocess.DEVNULL, env=self.env)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            try:
                if http_json(self.port, "GET", "/healthz", timeout=2)[0] == 200:
                    return True
            except OSError:
                pass
            time.sleep(0.1)
        return False

    def kill(self):
        kill(self.proc)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                kill(self.proc)


def envelope(install, session, fixes, base_ms):
    """A schema-v1 upload of `fixes` new fixes (the benchmark's generator), as a dict."""
    return json.loads(ingest_rate.body(install, session, fixes, base_ms))


class Load:
    """Devices uploading batches back to back; every 2xx is appended to the acknowledgement log."""

    def __init__(self, port, devices, fixes, ack_path):
        self.port, self.fixes = port, fixes
        self.devices = [(str(uuid.uuid4()), str(uuid.uuid4())) for _ in range(devices)]
        self.ack_file = open(ack_path, "a", buffering=1)
        self.lock = threading.Lock()
        self.acked = []  # (envelope, monotonic time of the answer)
        self.unanswered = []  # envelopes sent whose answer never came
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=self._device, args=(d,), daemon=True) for d in self.devices]

    def _device(self, device):
        install, session = device
        base = int(time.time() * 1000) - 3_600_000
        k = 0
        conn = None
        while not self.stop.is_set():
            env = envelope(install, session, self.fixes, base + k * self.fixes * 1000)
            k += 1
            try:
                if conn is None:
                    conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
                conn.request("POST", "/v1/locations", body=json.dumps(env).encode(),
                             headers={"Content-Type": "application/json"})
                r = conn.getresponse()
                r.read()
            except (OSError, http.client.HTTPException):
                with self.lock:
                    self.unanswered.append(env)
                return  # the server is gone
            if 200 <= r.status < 300:
                with self.lock:
                    self.acked.append((env, time.monotonic()))
                    self.ack_file.write(json.dumps({"batch_id": env["batch_id"], "install_id": install,
                                                    "fixes": [l["id"] for l in env["locations"]]}) + "\n")
            else:
                raise Failure("upload answered %d" % r.status)

    def start(self):
        for t in self.threads:
            t.start()

    def finish(self):
        self.stop.set()
        for t in self.threads:
            t.join(timeout=60)
        self.ack_file.flush()
        os.fsync(self.ack_file.fileno())  # the acknowledgements live on the real disk, not on the harness
        self.ack_file.close()


def read_fixes(port, install):
    """Every fix id the server returns for the device, in order (a duplicate appears twice)."""
    ids, cursor = [], None
    while True:
        q = "/v1/devices/%s/fixes?from=2000-01-01T00:00:00Z&to=2100-01-01T00:00:00Z&limit=5000" % install
        if cursor:
            q += "&cursor=" + cursor
        status, page = http_json(port, "GET", q, timeout=60)
        if status != 200:
            raise Failure("reading fixes answered %d: %r" % (status, page[:200]))
        ids += [f["id"].lower() for f in page["fixes"]]
        cursor = page.get("next_cursor")
        if not cursor:
            return ids


def server_trial(t, args, server, mount, ack_path, resend, pg=None):
    """One power cut under upload load. Returns nothing; adds to the tally t."""
    load = Load(server.port, args.devices, args.fixes, ack_path)
    load.start()
    time.sleep(random.uniform(args.min_load, args.max_load))
    server.kill()
    if pg:
        pg.kill()
    cut_at = time.monotonic()
    load.finish()
    mount.cut()
    mount.up()
    if pg and not pg.start():
        t.failed += 1
        t.notes.append("PostgreSQL did not restart (see %s)" % pg.log_path)
        raise Failure("PostgreSQL did not restart")
    if server.database.startswith("sqlite:"):
        verdict, _ = read_sqlite(server.database[len("sqlite:"):], "-")
        if verdict != "ok":
            t.corrupt += 1
            t.notes.append("integrity_check: %s" % verdict)
    if not server.start():
        t.failed += 1
        t.notes.append("the server did not restart (see its log)")
        raise Failure("the server did not restart")
    t.trials += 1
    t.acked += len(load.acked)
    present = {}
    for install, _ in load.devices:
        ids = read_fixes(server.port, install)
        present[install] = set(ids)
        t.dup += len(ids) - len(set(ids))
    lost = [(env, at) for env, at in load.acked
            if not all(l["id"] in present[env["device"]["install_id"]] for l in env["locations"])]
    if lost:
        t.lost += len(lost)
        t.lost_trials += 1
        t.oldest_lost_age = max(t.oldest_lost_age or 0.0, max(cut_at - at for _, at in lost))
    if resend:
        again = load.unanswered + [env for env, _ in random.sample(load.acked, min(len(load.acked), 5))]
        for env in again:
            status, _ = http_json(server.port, "POST", "/v1/locations", json.dumps(env).encode())
            if not 200 <= status < 300:
                t.notes.append("a resent batch answered %d" % status)
                t.failed += 1
        for install, _ in load.devices:
            ids = read_fixes(server.port, install)
            t.dup += len(ids) - len(set(ids))
            missing = [env for env in again if env["device"]["install_id"] == install
                       and not all(l["id"] in set(ids) for l in env["locations"])]
            t.lost += len(missing)
        t.acked += len(load.unanswered)


class Postgres:
    """A cluster whose data directory is on the harness; started as the postgres user."""

    def __init__(self, bindir, data, sockets):
        self.bindir, self.data, self.sockets = bindir, data, sockets
        self.log_path = os.path.join(sockets, "postgres.log")  # a directory the postgres user may write
        self.port = free_port()

    def _as_postgres(self, *cmd):
        return subprocess.run(["runuser", "-u", "postgres", "--"] + list(cmd), stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL).returncode == 0

    def start(self):
        return self._as_postgres(
            os.path.join(self.bindir, "pg_ctl"), "-D", self.data, "-w", "-t", "120", "-l", self.log_path, "-o",
            "-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=on -c synchronous_commit=on -c full_page_writes=on"
            % (self.port, self.sockets), "start")

    def kill(self):
        """SIGKILL the postmaster and every child: the power goes for all of them at once."""
        try:
            with open(os.path.join(self.data, "postmaster.pid")) as f:
                master = int(f.readline())
        except (OSError, ValueError):
            return
        pids = [master]
        for stat in glob.glob("/proc/[0-9]*/stat"):
            try:
                with open(stat) as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                if int(fields[1]) == master:
                    pids.append(int(stat.split("/")[2]))
            except (OSError, ValueError, IndexError):
                pass
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for pid in pids:  # wait until they are gone, so nothing holds the mount
            for _ in range(600):
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    break
                time.sleep(0.01)

    def stop(self):
        self._as_postgres(os.path.join(self.bindir, "pg_ctl"), "-D", self.data, "-m", "fast", "-w", "stop")


def postgres_template(root, bindir):
    d = os.path.join(root, "pg-template")
    os.makedirs(d)
    shutil.chown(d, "postgres")
    subprocess.run(["runuser", "-u", "postgres", "--", os.path.join(bindir, "initdb"), "-D", os.path.join(d, "data"),
                    "-A", "trust", "-U", "beekon", "--no-sync"], check=True, stdout=subprocess.DEVNULL)
    return os.path.join(d, "data")


def run_server_config(name, args, root):
    t = Tally(name, "batches")
    mount = Mount(root)
    log = open(os.path.join(root, "server.log"), "ab")
    ack_path = os.path.join(root, "acks.ndjson")
    pg = None
    extra = ["--no-group-commit"] if name == "server-sqlite-nogc" else []
    env = planted_env(args) if name == "planted-normal" else args.env
    if name == "server-postgres":
        bindir = os.environ.get("BEEKON_PG_BIN", "/usr/lib/postgresql/15/bin")
        sockets = os.path.join(root, "pg-sockets")
        os.makedirs(sockets)
        shutil.chown(sockets, "postgres")
        os.chmod(root, 0o755)
        # The cluster is made before the first mount, in the backing data: durable from the start.
        subprocess.run(["cp", "-a", postgres_template(root, bindir), os.path.join(mount.data, "pg")], check=True)
        mount.up()
        pg = Postgres(bindir, os.path.join(mount.mnt, "pg"), sockets)
        if not pg.start():
            raise Failure("PostgreSQL did not start on the harness (see %s)" % pg.log_path)
        database = "postgres://beekon@127.0.0.1:%d/postgres?sslmode=disable" % pg.port
    else:
        database = "sqlite:" + os.path.join(mount.prepare("ingest"), "beekon-ingest.sqlite")
        mount.up()
    server = Server(args.ingest, database, extra, log, env)
    try:
        if not server.start():
            raise Failure("the server did not start (see %s/server.log)" % root)
        for _ in range(args.trials):
            server_trial(t, args, server, mount, ack_path, resend=(name == "server-resend"), pg=pg)
        # The control must show a loss. On an idle machine a short run loses little (50 of 765 in
        # three trials once), so a bounded run that saw none yet goes on, up to four times as many
        # trials, before it concludes that the harness cannot see a missing fsync.
        while name == "planted-normal" and t.lost == 0 and t.trials < 4 * args.trials:
            server_trial(t, args, server, mount, ack_path, resend=False, pg=pg)
    except Failure as e:
        t.notes.append(str(e))
        t.failed = max(t.failed, 1)
    finally:
        server.stop()
        if pg:
            pg.stop()
        mount.down()
    return t


# ---------------------------------------------------------------- the agent

def agent_rows(db):
    """(integrity, fix ids) of the agent's database after the cut; ids None when it cannot be read."""
    verdict, ids = read_sqlite(db, "location")
    return verdict, (None if ids is None else set(ids))


def shifted_walk(src, hours, dst):
    """The GPX walk with every time moved `hours` later: each trial replays fixes later than the last
    one stored (a resumed session rejects a fix not later than its newest, and --rebase would start
    each replay at "now", behind what the previous, faster-than-real-time replay stored)."""
    def later(m):
        t = datetime.datetime.fromisoformat(m.group(1).replace("Z", "+00:00")) + datetime.timedelta(hours=hours)
        return "<time>" + t.strftime("%Y-%m-%dT%H:%M:%S") + "Z</time>"
    with open(src) as f:
        text = re.sub(r"<time>([^<]+)</time>", later, f.read())
    with open(dst, "w") as f:
        f.write(text)
    return dst


def track_until_killed(args, db, config, log, delay, walk):
    """Runs `beekon track` on `walk`; SIGKILLs it right after the first progress line past `delay`
    seconds. Returns the fixes it reported stored in that line (None if it never printed one)."""
    cmd = [args.agent, "track", "--source", "replay:" + walk, "--speed", str(args.speed),
           "--db", db, "--config", config]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log, stdin=subprocess.DEVNULL, text=True, env=args.env)
    start, stored = time.monotonic(), None
    try:
        for line in proc.stdout:
            log.write(line.encode())
            if line.startswith("progress "):
                fields = dict(f.split("=", 1) for f in line.split()[1:] if "=" in f)
                stored = int(fields["stored"])
                if time.monotonic() - start >= delay:
                    break
    finally:
        kill(proc)
    return stored


def run_agent_config(name, args, root):
    t = Tally(name, "fixes")
    mount = Mount(root)
    log = open(os.path.join(root, "agent.log"), "ab")
    db = os.path.join(mount.prepare("agent"), "beekon.sqlite")
    mount.up()
    config = os.path.join(root, "agent.json")
    settings = {"minTimeBetweenLocationsSeconds": 0, "minDistanceBetweenLocationsMeters": 0}
    server = None
    if name == "agent-sync":  # the server on the real disk: only the agent's database is on the harness
        server = Server(args.ingest, "sqlite:" + os.path.join(root, "server.sqlite"), [], open(os.path.join(root, "server.log"), "ab"))
        settings["sync"] = {"url": "http://127.0.0.1:%d/v1/locations" % server.port, "batchSize": 20, "syncThreshold": 10}
    with open(config, "w") as f:
        json.dump(settings, f)

    def present():
        verdict, local = agent_rows(db)
        if verdict not in ("ok", "absent"):
            t.corrupt += 1
            t.notes.append("integrity_check: %s" % verdict)
        if local is None:
            return None
        if server is None:
            return local
        status, devices = http_json(server.port, "GET", "/v1/devices")
        ids = []
        for d in devices["devices"]:
            ids += read_fixes(server.port, d["install_id"])
        t.dup += len(ids) - len(set(ids))
        return local | set(ids)

    try:
        if server and not server.start():
            raise Failure("the server did not start (see %s/server.log)" % root)
        known = present() or set()
        for trial in range(args.trials):
            walk = shifted_walk(args.walk, trial, os.path.join(root, "walk.gpx"))
            stored = track_until_killed(args, db, config, log, random.uniform(args.min_load, args.max_load), walk)
            mount.cut()
            mount.up()
            t.trials += 1
            if stored is None:
                t.failed += 1
                t.notes.append("beekon track printed no progress line (see %s/agent.log)" % root)
                continue
            now = present()
            if now is None:
                t.failed += 1
                t.notes.append("the agent's database could not be read after the cut")
                continue
            t.acked += stored
            # What was there before must still be, and this run's reported count must be among the new
            # ids (a count: a fix stored after the last progress line only adds to the new ones).
            lost = len(known - now) + max(0, stored - len(now - known))
            if lost > 0:
                t.lost += lost
                t.lost_trials += 1
            status = subprocess.run([args.agent, "status", "--db", db], stdout=subprocess.DEVNULL, stderr=log, env=args.env)
            if status.returncode != 0:
                t.failed += 1
                t.notes.append("beekon status exited %d after the cut" % status.returncode)
            known = now
    except Failure as e:
        t.notes.append(str(e))
        t.failed = max(t.failed, 1)
    finally:
        if server:
            server.stop()
        mount.down()
    return t


# ---------------------------------------------------------------- plain SQLite (controls)

WRITER = r"""
import sqlite3, sys
db, level, acks = sys.argv[1], sys.argv[2], sys.argv[3]
con = sqlite3.connect(db, isolation_level=None)
con.execute("PRAGMA journal_mode=WAL")
con.execute("PRAGMA synchronous=" + level)
con.execute("CREATE TABLE IF NOT EXISTS t (id TEXT PRIMARY KEY, payload TEXT)")
log = open(acks, "a", buffering=1)
import uuid
while True:
    i = str(uuid.uuid4())
    con.execute("INSERT INTO t (id, payload) VALUES (?, ?)", (i, "x" * 200))
    log.write(i + "\n")
"""


def run_sqlite_config(name, args, root):
    t = Tally(name, "commits")
    mount = Mount(root)
    mount.up()
    db = os.path.join(mount.mnt, "plain.sqlite")
    acks = os.path.join(root, "acks")
    level = "FULL"
    try:
        for _ in range(args.trials):
            done = sum(1 for _ in open(acks)) if os.path.exists(acks) else 0
            writer = subprocess.Popen([sys.executable, "-c", WRITER, db, level, acks])
            time.sleep(random.uniform(args.min_load, args.max_load))
            kill(writer)
            with open(acks) as f:
                acked = [line.strip() for line in f][done:]
            mount.cut()
            mount.up()
            t.trials += 1
            t.acked += len(acked)
            verdict, ids = read_sqlite(db, "t")
            if verdict not in ("ok", "absent"):
                t.corrupt += 1
            have = set(ids or [])
            lost = sum(1 for i in acked if i not in have)
            if lost:
                t.lost += lost
                t.lost_trials += 1
    finally:
        mount.down()
    return t


def planted_env(args):
    """The environment of a process whose SQLite writer is planted at NORMAL (plant_normal.c, built once)."""
    lib = os.path.join(args.work, "plant_normal.so")
    if not os.path.exists(lib):
        compiler = shutil.which("cc") or shutil.which("clang")
        if not compiler:
            raise SystemExit("powercut: no C compiler (cc or clang) to build plant_normal.c")
        subprocess.run([compiler, "-shared", "-fPIC", "-O2", "-o", lib, os.path.join(HERE, "plant_normal.c"), "-ldl"], check=True)
    return dict(os.environ, LD_PRELOAD=lib)


# ---------------------------------------------------------------- driver

def debug_binary(package, name):
    """package/.build/debug/name, or the triple's folder the debug link points to (SwiftPM makes the
    link only after a build that succeeded whole)."""
    build = os.path.join(REPO, package, ".build")
    for folder in ["debug"] + sorted(glob.glob(os.path.join(build, "*-linux-gnu", "debug"))):
        path = os.path.join(build, folder, name)
        if os.access(path, os.X_OK):
            return os.path.normpath(path)
    return os.path.normpath(os.path.join(build, "debug", name))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--trials", type=int, default=50, help="power cuts per configuration (default 50)")
    p.add_argument("--config", action="append", choices=CONFIGS, help="a configuration (repeatable; default: all)")
    p.add_argument("--ingest", default=debug_binary(".", "beekon-ingest"), help="beekon-ingest binary (default: the debug build)")
    p.add_argument("--agent", default=debug_binary(".", "beekon"), help="beekon binary (default: the debug build)")
    p.add_argument("--walk", default=WALK, help="recorded track (GPX) the agent replays, an hour later in each trial")
    p.add_argument("--speed", default="40", help="the agent's replay speed (fixes per second for a 1 Hz walk)")
    p.add_argument("--devices", type=int, default=8, help="concurrent uploading devices in server trials")
    p.add_argument("--fixes", type=int, default=10, help="fixes per upload")
    p.add_argument("--min-load", type=float, default=1.0, help="shortest load before the kill, seconds")
    p.add_argument("--max-load", type=float, default=3.0, help="longest load before the kill, seconds")
    p.add_argument("--plant-normal", action="store_true",
                   help="plant synchronous=NORMAL into every beekon-ingest and beekon of the run (writers that skip their fsync)")
    p.add_argument("--seed", type=int, help="random seed (printed; default: from the time)")
    p.add_argument("--keep", action="store_true", help="keep the work directory (logs, backing data)")
    args = p.parse_args()
    configs = args.config or CONFIGS
    seed = args.seed if args.seed is not None else int(time.time())
    random.seed(seed)
    if os.geteuid() != 0:
        sys.exit("powercut: needs root (FUSE with allow_other, PostgreSQL as the postgres user)")
    for binary in ([args.ingest] if any(c.startswith("server") or c in ("agent-sync", "planted-normal") for c in configs) else []) + \
            ([args.agent] if any(c.startswith("agent") for c in configs) else []):
        if not os.access(binary, os.X_OK):
            sys.exit("powercut: no binary at %s (build it, or pass --ingest/--agent)" % binary)
    work = tempfile.mkdtemp(prefix="powercut-")
    os.chmod(work, 0o755)
    args.work = work
    args.env = planted_env(args) if args.plant_normal else None
    if args.plant_normal:
        print("powercut: --plant-normal: every SQLite writer of beekon-ingest and beekon runs at synchronous=NORMAL")
    print("powercut: %d trials per configuration, seed %d, work directory %s" % (args.trials, seed, work), flush=True)
    tallies = []
    for name in configs:
        root = os.path.join(work, name)
        os.makedirs(root)
        started = time.monotonic()
        if name.startswith("server") or name == "planted-normal":
            t = run_server_config(name, args, root)
        elif name.startswith("agent"):
            t = run_agent_config(name, args, root)
        else:
            t = run_sqlite_config(name, args, root)
        tallies.append(t)
        print("  %s: %d trials in %.0f s, %d %s acknowledged, %d lost" % (
            name, t.trials, time.monotonic() - started, t.acked, t.unit, t.lost), flush=True)
    print()
    print("%-19s %6s %10s %-8s %8s %9s %6s %8s %7s %9s" % (
        "configuration", "trials", "acked", "unit", "lost", "lost-in", "dup", "corrupt", "failed", "oldest-s"))
    missed = []
    for t in tallies:
        print(t.row())
        for note in t.notes[:5]:
            print("    note: " + note)
        if t.trials < args.trials:
            missed.append("%s ran %d of %d trials" % (t.name, t.trials, args.trials))
        if t.name == "planted-normal":
            if t.lost == 0:
                missed.append("planted-normal lost nothing: the harness cannot see a missing fsync")
        elif t.lost or t.dup or t.corrupt or t.failed:
            missed.append("%s: %d lost, %d duplicates, %d corrupt, %d failed restarts" % (t.name, t.lost, t.dup, t.corrupt, t.failed))
    print("(acked: acknowledged uploads, fixes reported stored or commits returned; lost-in: trials that lost any; "
          "oldest-s: the oldest lost acknowledgement, seconds before the kill)")
    if not args.keep and not missed:
        shutil.rmtree(work, ignore_errors=True)
    for m in missed:
        print("TARGET MISSED: " + m)
    passed = len(tallies) - len({m.split(":")[0].split(" ")[0] for m in missed})
    print("powercut: %d passed, %d failed" % (passed, len(tallies) - passed))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
