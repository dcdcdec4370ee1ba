#!/usr/bin/env python3
"""Chaos harness for Beekon: real `beekon track` agents upload through a
fault-injecting proxy to a real `beekon-ingest`; agents and server are
SIGKILLed and restarted at random moments. At the end every agent's history is
compared with the server's stored fixes (read API, paged).

Run it through scripts/chaos.sh (which locates the binaries). Standard library
only; every socket is on 127.0.0.1; every wait is bounded.

Invariants checked per trial:
  * every fix an agent stored is at the server exactly once (by id)  -> lost
  * no fix at the server that no agent stored                         -> foreign
  * no fix id travels in two different batch ids, no id twice at the
    server                                                            -> duplicated
  * one session id per agent across all its restarts                   -> session_changes
  * the server never answered 500 (or 400/413/422) to a batch the agent
    sent while its database was up                                     -> server_errors
  * no process died that the harness did not kill; agents exit 0 or 3  -> crashes
  * every live viewer (GET /v1/live, dropping and resuming with
    Last-Event-ID at random, also across server SIGKILLs) received
    exactly the server's stored fixes, none twice, ids increasing   -> viewer_lost, viewer_dup
"""

import argparse
import gzip
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

API_KEY = "chaos-api-key-0123456789"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "Tests", "Data")  # the recordings kept in the repository (NOTICE.md there)
TRACKS = [
    "gpx/togeojson_apple_watch_walk_1hz.gpx",
    "gpx/movingpandas_304_to_UL_bus_1hz.gpx",
    "gpx/gpxgo_visnjan_4s.gpx",
    "nmea/derived_apple_watch_walk.nmea",
    "nmea/derived_304_to_UL_bus.nmea",
]
FAULT_KINDS = ["lost_2xx", "drop_request", "http_500", "storm_503", "storm_429", "slow",
               "stall_past_timeout", "kill_agent_inflight", "kill_agent", "kill_server", "pg_restart",
               "token_outage", "token_refused", "lost_token_answer", "kill_agent_refresh", "disk_full"]
PG_BIN = os.environ.get("BEEKON_PG_BIN", "/usr/lib/postgresql/15/bin")


def log(msg):
    print(f"[chaos {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def track_points(path, count=6):
    """A few evenly spaced (lat, lon) points of a GPX or NMEA track, for geofences on its way."""
    import re
    pts = []
    with open(path, "r", encoding="utf-8", errors="replace") as f:
        text = f.read()
    if path.endswith(".gpx"):
        for m in re.finditer(r'lat="([-0-9.]+)"\s+lon="([-0-9.]+)"', text):
            pts.append((float(m.group(1)), float(m.group(2))))
    else:
        for line in text.splitlines():
            parts = line.split(",")
            if len(parts) > 6 and parts[0].endswith("GGA") and parts[2] and parts[4]:
                try:
                    lat = int(parts[2][:2]) + float(parts[2][2:]) / 60
                    lon = int(parts[4][:3]) + float(parts[4][3:]) / 60
                except ValueError:
                    continue
                pts.append((-lat if parts[3] == "S" else lat, -lon if parts[5] == "W" else lon))
    if not pts:
        return []
    step = max(1, len(pts) // (count + 1))
    return [pts[i] for i in range(step, len(pts), step)][:count]


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


# --------------------------------------------------------------------------- proxy

class Proxy:
    """HTTP/1.1 proxy on 127.0.0.1 with per-request faults.

    Agent i posts to /a{i}/v1/locations; the prefix identifies it and is
    stripped before forwarding. Decisions come from a seeded RNG in arrival
    order, so a trial's fault schedule is reproducible up to thread timing.
    """

    def __init__(self, rng, counts, on_kill_inflight, upstream_port):
        self.rng = rng
        self.rng_lock = threading.Lock()
        self.counts = counts
        self.on_kill_inflight = on_kill_inflight
        self.upstream_port = upstream_port
        self.calm = False
        self.token_down_until = 0.0  # the token endpoint refuses every refresh until then
        self.on_kill_refresh = on_kill_inflight
        self.storms = {}           # agent -> (status, remaining)
        self.lock = threading.Lock()
        self.batches = {}          # batch_id -> set(location ids)
        self.fix_batches = {}      # location id -> set(batch ids)
        self.event_batches = {}    # geofence event id -> set(batch ids)
        self.acked_batches = set() # batch ids the server answered 2xx (relayed or not)
        self.upstream_status = []  # (agent, batch_id, status, db_up)
        self.token_status = []     # (agent, status, db_up) of relayed refreshes
        self.db_up = lambda: True
        self.stalled = []
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(128)
        self.port = self.sock.getsockname()[1]
        self.stopped = False
        threading.Thread(target=self._accept, daemon=True).start()

    def stop(self):
        self.stopped = True
        try:
            self.sock.close()
        except OSError:
            pass
        for s in list(self.stalled):
            try:
                s.close()
            except OSError:
                pass

    def count(self, kind):
        with self.lock:
            self.counts[kind] = self.counts.get(kind, 0) + 1

    def _accept(self):
        while not self.stopped:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(c,), daemon=True).start()

    @staticmethod
    def _read_head(f):
        lines = []
        while True:
            line = f.readline(65536)
            if not line:
                return None
            if line in (b"\r\n", b"\n"):
                return lines
            lines.append(line.decode("latin-1").rstrip("\r\n"))

    @staticmethod
    def _read_body(f, headers):
        if "chunked" in headers.get("transfer-encoding", "").lower():
            body = b""
            while True:
                size_line = f.readline(1024)
                if not size_line:
                    return None
                size = int(size_line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while True:
                        t = f.readline(1024)
                        if not t or t in (b"\r\n", b"\n"):
                            break
                    return body
                chunk = f.read(size)
                f.readline(16)
                if chunk is None or len(chunk) < size:
                    return None
                body += chunk
        n = int(headers.get("content-length", "0") or "0")
        body = f.read(n) if n else b""
        if body is None or len(body) < n:
            return None
        return body

    def _decide(self, agent):
        with self.rng_lock:
            if self.calm:
                return ("pass", None)
            storm = self.storms.get(agent)
            if storm and storm[1] > 0:
                self.storms[agent] = (storm[0], storm[1] - 1)
                return ("storm", storm[0])
            r = self.rng.random()
            table = [
                (0.12, "lost_2xx"), (0.05, "drop_request"), (0.04, "http_500"), (0.03, "storm_503"),
                (0.03, "storm_429"), (0.07, "slow"), (0.012, "stall_past_timeout"),
                (0.04, "kill_agent_inflight"),
            ]
            acc = 0.0
            for p, kind in table:
                acc += p
                if r < acc:
                    if kind.startswith("storm_"):
                        status = int(kind[-3:])
                        self.storms[agent] = (status, self.rng.randint(2, 6))
                        return ("storm", status)
                    if kind == "slow":
                        return (kind, self.rng.uniform(0.3, 2.5))
                    if kind == "stall_past_timeout":
                        return (kind, 32.0)
                    return (kind, None)
            return ("pass", None)

    def _decide_token(self):
        """Faults for a refresh request (token mode): outage windows, lost answers, kills."""
        with self.rng_lock:
            if time.time() < self.token_down_until:
                return ("token_refused", self.rng.choice([503, None]))
            if self.calm:
                return ("pass", None)
            r = self.rng.random()
            if r < 0.12:
                return ("lost_token_answer", None)
            if r < 0.20:
                return ("kill_agent_refresh", self.rng.random() < 0.5)  # True: after the server rotated
            return ("pass", None)

    def _record(self, agent, body, headers):
        """Parses the upload; returns (batch_id, [location ids]) or (None, [])."""
        try:
            raw = gzip.decompress(body) if headers.get("content-encoding", "").lower() == "gzip" else body
            env = json.loads(raw)
            bid = env["batch_id"]
            ids = [l["id"] for l in env.get("locations", [])]
            events = [e["id"] for e in env.get("geofence_events", [])]
        except Exception:
            return None, []
        with self.lock:
            known = self.batches.get(bid)
            if known is None:
                self.batches[bid] = set(ids)
            for i in ids:
                self.fix_batches.setdefault(i, set()).add(bid)
            for e in events:
                self.event_batches.setdefault(e, set()).add(bid)
        return bid, ids

    def _forward(self, method, path, headers, body):
        """One request upstream (Connection: close); returns (status, raw response) or (None, None)."""
        try:
            u = socket.create_connection(("127.0.0.1", self.upstream_port), timeout=40)
        except OSError:
            return None, None
        try:
            head = f"{method} {path} HTTP/1.1\r\n"
            for k, v in headers.items():
                if k in ("connection", "content-length", "transfer-encoding", "keep-alive"):
                    continue
                head += f"{k}: {v}\r\n"
            head += f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
            u.sendall(head.encode("latin-1") + body)
            f = u.makefile("rb")
            status_line = f.readline(65536)
            if not status_line:
                return None, None
            status = int(status_line.split()[1])
            rhead = []
            while True:
                line = f.readline(65536)
                if not line or line in (b"\r\n", b"\n"):
                    break
                rhead.append(line.decode("latin-1").rstrip("\r\n"))
            rh = {}
            for line in rhead:
                if ":" in line:
                    k, v = line.split(":", 1)
                    rh[k.strip().lower()] = v.strip()
            rbody = self._read_body(f, rh) or b""
            out = f"HTTP/1.1 {status} X\r\ncontent-length: {len(rbody)}\r\n"
            for k, v in rh.items():
                if k in ("content-type", "retry-after", "www-authenticate"):
                    out += f"{k}: {v}\r\n"
            out += "\r\n"
            return status, out.encode("latin-1") + rbody
        except (OSError, ValueError, IndexError):
            return None, None
        finally:
            try:
                u.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            u.close()

    def _serve_token(self, c, agent, method, path, headers, body):
        """Relays one refresh with its fault; returns whether the connection stays open."""
        kind, arg = self._decide_token()
        if kind not in ("pass", "kill_agent_refresh"):
            self.count(kind)  # kills are counted when they happen
        if kind == "token_refused":
            if arg is None:
                return False  # connection dropped: the agent sees a network error
            c.sendall(b"HTTP/1.1 503 X\r\ncontent-length: 2\r\n\r\n{}")
            return True
        if kind == "kill_agent_refresh" and not arg:
            self.on_kill_refresh(agent, "kill_agent_refresh")  # before the server saw it
            return False
        db_up = self.db_up()
        status, response = self._forward(method, path, headers, body)
        if status is None:
            return False
        with self.lock:
            self.token_status.append((agent, status, db_up and self.db_up()))
        if kind == "lost_token_answer":
            return False  # the server rotated the refresh token; the agent never hears of it
        if kind == "kill_agent_refresh":
            self.on_kill_refresh(agent, "kill_agent_refresh")
            return False
        c.sendall(response)
        return True

    def _serve(self, c):
        c.settimeout(120)
        f = c.makefile("rb")
        try:
            while True:
                head = self._read_head(f)
                if not head:
                    return
                parts = head[0].split()
                if len(parts) < 2:
                    return
                method, path = parts[0], parts[1]
                headers = {}
                for line in head[1:]:
                    if ":" in line:
                        k, v = line.split(":", 1)
                        headers[k.strip().lower()] = v.strip()
                if headers.get("expect", "").lower() == "100-continue":
                    c.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
                body = self._read_body(f, headers)
                if body is None:
                    return
                agent = None
                if path.startswith("/a") and "/" in path[1:]:
                    prefix, rest = path[1:].split("/", 1)
                    agent, path = prefix, "/" + rest
                if path == "/oauth/token":
                    if not self._serve_token(c, agent, method, path, headers, body):
                        return
                    continue
                bid, _ = self._record(agent, body, headers)
                kind, arg = self._decide(agent)
                if kind not in ("pass", "storm", "kill_agent_inflight"):
                    self.count(kind)  # kills are counted when they happen
                if kind == "storm":
                    self.count(f"storm_{arg}")
                    retry = 1 if arg == 429 else 2
                    c.sendall(f"HTTP/1.1 {arg} X\r\ncontent-length: 2\r\nretry-after: {retry}\r\n\r\n{{}}".encode())
                    continue
                if kind == "http_500":
                    c.sendall(b"HTTP/1.1 500 X\r\ncontent-length: 2\r\n\r\n{}")
                    continue
                if kind == "drop_request":
                    return
                if kind == "slow":
                    time.sleep(arg)
                db_up = self.db_up()
                status, response = self._forward(method, path, headers, body)
                if status is None:
                    with self.lock:
                        self.counts["upstream_unreachable"] = self.counts.get("upstream_unreachable", 0) + 1
                    return  # server down: the agent sees a network error
                with self.lock:
                    self.upstream_status.append((agent, bid, status, db_up and self.db_up()))
                    if 200 <= status < 300:
                        self.acked_batches.add(bid)
                if kind == "lost_2xx":
                    return
                if kind == "kill_agent_inflight":
                    self.on_kill_inflight(agent, "kill_agent_inflight")
                    return
                if kind == "stall_past_timeout":
                    self.stalled.append(c)
                    deadline = time.time() + arg
                    while time.time() < deadline and not self.stopped:
                        time.sleep(0.2)
                    return
                c.sendall(response)
        except (OSError, ValueError):
            return
        finally:
            # The makefile() reader holds the descriptor open: close it too, and shut the
            # socket down so the client sees the drop at once (not after its timeout).
            f.close()
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            c.close()


# --------------------------------------------------------------------------- live viewers

class Viewer:
    """A live-stream viewer (GET /v1/live with an admin key) that resumes with Last-Event-ID
    and drops its connection at random moments, also across server SIGKILLs. It records
    every fix id in arrival order and fails on an id that does not increase (a repeat)."""

    def __init__(self, trial, index, rng):
        self.trial, self.index, self.rng = trial, index, rng
        self.last_id = "0"
        self.fixes = []
        self.problems = []
        self.sessions = 0
        self.stop = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stop:
            try:
                self._session(deadline=time.time() + self.rng.uniform(0.2, 3.0))
            except (OSError, RuntimeError, ValueError):
                time.sleep(self.rng.uniform(0.05, 0.5))

    def _session(self, deadline, until=None):
        port = self.trial.server_port
        s = socket.create_connection(("127.0.0.1", port), timeout=2)
        self.sessions += 1
        try:
            s.sendall((f"GET /v1/live HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {API_KEY}\r\n"
                       f"Last-Event-ID: {self.last_id}\r\n\r\n").encode())
            s.settimeout(0.2)
            buf, head, cur = b"", True, {}
            while not self.stop and time.time() < deadline:
                if until is not None and until():
                    return
                try:
                    chunk = s.recv(65536)
                except socket.timeout:
                    continue
                if not chunk:
                    return
                buf += chunk
                if head:
                    if b"\r\n\r\n" not in buf:
                        continue
                    h, buf = buf.split(b"\r\n\r\n", 1)
                    status = int(h.split(b" ")[1])
                    if status != 200:
                        raise RuntimeError(f"GET /v1/live answered {status}")
                    head = False
                *lines, buf = buf.split(b"\n")
                for raw in lines:
                    if raw.endswith(b"\r"):
                        continue  # chunked framing, never part of an SSE line
                    line = raw.decode("utf-8", "replace")
                    if line == "":
                        if "id" in cur:
                            if int(cur["id"]) <= int(self.last_id):
                                self.problems.append(f"viewer{self.index}: event id {cur['id']} after {self.last_id}")
                            self.last_id = cur["id"]
                            if cur.get("event") == "fix":
                                self.fixes.append(json.loads(cur["data"])["id"])
                            elif cur.get("event") == "reset":
                                self.problems.append(f"viewer{self.index}: reset {cur.get('data')}")
                        cur = {}
                    elif ": " in line and not line.startswith(":"):
                        k, v = line.split(": ", 1)
                        cur[k] = v
        finally:
            s.close()

    def finish(self, expected, timeout=60):
        """Stops the random drops, catches up until every expected fix arrived; returns (lost, dup, foreign)."""
        self.stop = True
        self.thread.join(10)
        self.stop = False
        deadline = time.time() + timeout
        while time.time() < deadline and not expected <= set(self.fixes):
            try:
                self._session(deadline, until=lambda: expected <= set(self.fixes))
            except (OSError, RuntimeError, ValueError) as e:
                time.sleep(0.2)
        got = set(self.fixes)
        return len(expected - got), len(self.fixes) - len(got), len(got - expected)


# --------------------------------------------------------------------------- processes

class Managed:
    """A child process whose stdout is read line by line on a thread."""

    def __init__(self, argv, logpath, env=None):
        self.argv = argv
        self.killed_by_us = False
        self.lines = []
        self.logf = open(logpath, "ab")
        self.logf.write(("$ " + " ".join(argv) + "\n").encode())
        self.logf.flush()
        self.p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=self.logf, stdin=subprocess.DEVNULL,
                                  env=env, cwd=os.path.dirname(logpath))
        self.cond = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for raw in self.p.stdout:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            self.logf.write(raw)
            self.logf.flush()
            with self.cond:
                self.lines.append(line)
                self.cond.notify_all()
        with self.cond:
            self.cond.notify_all()

    def wait_line(self, pred, timeout):
        deadline = time.time() + timeout
        with self.cond:
            i = 0
            while True:
                while i < len(self.lines):
                    if pred(self.lines[i]):
                        return self.lines[i]
                    i += 1
                left = deadline - time.time()
                if left <= 0 or (self.p.poll() is not None and i >= len(self.lines)):
                    return None
                self.cond.wait(min(left, 0.2))

    def kill(self, sig=signal.SIGKILL):
        if self.p.poll() is None:
            self.killed_by_us = True
            self.p.send_signal(sig)

    def alive(self):
        return self.p.poll() is None

    def wait(self, timeout):
        try:
            return self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            return None


class PostgresCluster:
    def __init__(self, workdir):
        self.dir = os.path.join(workdir, "pg")
        os.makedirs(self.dir)
        self.port = free_port()
        if os.getuid() == 0:
            shutil.chown(self.dir, "postgres")
        self._as_owner(f"{PG_BIN}/initdb", "-D", f"{self.dir}/data", "-A", "trust", "-U", "beekon", "--no-sync")
        self.start()

    def _as_owner(self, *argv):
        if os.getuid() == 0:
            argv = ("/usr/sbin/runuser", "-u", "postgres", "--") + argv
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)

    def start(self):
        self._as_owner(f"{PG_BIN}/pg_ctl", "-D", f"{self.dir}/data", "-w", "-t", "60", "-l", f"{self.dir}/log", "-o",
                       f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200",
                       "start")

    def restart(self):
        self._as_owner(f"{PG_BIN}/pg_ctl", "-D", f"{self.dir}/data", "-m", "fast", "-w", "-t", "60", "stop")
        self.start()

    def create_database(self, name):
        subprocess.run([f"{PG_BIN}/createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "beekon", name],
                       check=True, timeout=60)
        return f"postgres://beekon@127.0.0.1:{self.port}/{name}?sslmode=disable"

    def stop(self):
        try:
            self._as_owner(f"{PG_BIN}/pg_ctl", "-D", f"{self.dir}/data", "-m", "fast", "-w", "stop")
        except Exception:
            pass


# --------------------------------------------------------------------------- one trial

class Trial:
    def __init__(self, args, index, workdir, pg, shared):
        self.args = args
        self.index = index
        self.shared = shared  # state shared by parallel trials (the one PostgreSQL cluster)
        self.rng = random.Random(f"{args.seed}/{index}")
        self.auth = args.auth if args.auth != "mixed" else self.rng.choice(["key", "tokens"])
        self.disk = None  # the agent whose database sits on a small tmpfs, if any
        self.dir = os.path.join(workdir, f"trial-{index}")
        os.makedirs(self.dir)
        self.pg = pg
        self.counts = {}
        self.crashes = []
        self.lock = threading.Lock()
        self.server = None
        self.server_port = None
        self.agents = []

    # ---- server
    def start_server(self):
        argv = [self.args.ingest, "--port", "0", "--database", self.database, "--api-key", API_KEY,
                "--auth", "required", "--log-level", "error"]
        if self.auth == "tokens":
            argv += ["--access-token-ttl", "4"]  # many refreshes in a short trial
        s = Managed(argv, os.path.join(self.dir, "server.log"))
        line = s.wait_line(lambda l: l.startswith("listening on "), 60)
        if line is None:
            s.kill()
            raise RuntimeError(f"beekon-ingest did not start; see {self.dir}/server.log")
        self.server = s
        self.server_port = int(line.rsplit(":", 1)[1])
        if hasattr(self, "proxy"):
            self.proxy.upstream_port = self.server_port

    def check_server(self):
        s = self.server
        if s is not None and not s.alive() and not s.killed_by_us:
            self.crashes.append(f"beekon-ingest exited {s.p.returncode} without being killed")
            self.server = None
            self.start_server()

    # ---- agents
    def agent_config(self, i, spec):
        url = f"http://127.0.0.1:{self.proxy.port}/a{i}/v1/locations"
        sync = {"url": url, "batchSize": spec["batch"], "syncThreshold": spec["batch"], "intervalSeconds": 60,
                "requestTimeoutSeconds": 10}
        if self.auth == "tokens":
            seed = self.issue_tokens(f"chaos-{self.index}-a{i}")
            sync["auth"] = {"accessToken": seed["access_token"], "refreshToken": seed["refresh_token"], "expiresAt": 1,
                            "skewMarginSeconds": 1, "refreshUrl": f"http://127.0.0.1:{self.proxy.port}/a{i}/oauth/token",
                            "refreshPayload": {"grant_type": "refresh_token", "refresh_token": "{refreshToken}"}}
        else:
            sync["headers"] = {"Authorization": f"Bearer {API_KEY}"}
        cfg = {"minTimeBetweenLocationsSeconds": 0, "minDistanceBetweenLocationsMeters": 0, "sync": sync,
               "extras": {"chaos_trial": str(self.index), "agent": str(i)},
               # Fences on the track's way: crossings are stored with their fix and uploaded (GF-3).
               "geofences": [{"id": f"t{self.index}-a{i}-f{k}", "latitude": lat, "longitude": lon, "radiusMeters": 60}
                             for k, (lat, lon) in enumerate(track_points(spec["track"]))]}
        path = os.path.join(self.dir, f"agent{i}.json")
        with open(path, "w") as f:
            json.dump(cfg, f)
        return path

    @staticmethod
    def tail(path, lines=5):
        try:
            with open(path, "rb") as f:
                f.seek(0, 2)
                f.seek(max(0, f.tell() - 4096))
                return f.read().decode("utf-8", "replace").splitlines()[-lines:]
        except OSError:
            return []

    def issue_tokens(self, subject):
        """A seed access + refresh token for one agent, from the server's own `issue-token`."""
        out = subprocess.run([self.args.ingest, "issue-token", "--subject", subject, "--database", self.database,
                              "--log-level", "error"], capture_output=True, timeout=120)
        if out.returncode != 0:
            raise RuntimeError(f"issue-token failed: {out.stderr.decode()[-300:]}")
        return json.loads(out.stdout)

    # ---- disk full (a small tmpfs under one agent's database, filled and freed)
    def mount_disk(self, path):
        os.makedirs(path)
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", path], capture_output=True)
        return r.returncode == 0

    def fill_disk(self):
        filler = os.path.join(self.disk["disk"], "filler")
        try:
            with open(filler, "wb") as f:
                chunk = b"\0" * (1 << 20)
                while True:
                    f.write(chunk)
                    f.flush()
        except OSError:
            pass  # ENOSPC: the disk is full
        try:  # the last partial MiB too
            with open(filler + "-tail", "wb") as f:
                while True:
                    f.write(b"\0" * 4096)
                    f.flush()
        except OSError:
            pass

    def free_disk(self):
        for name in ("filler", "filler-tail"):
            try:
                os.remove(os.path.join(self.disk["disk"], name))
            except OSError:
                pass

    def launch_agent(self, a, mode):
        if mode == "track":
            argv = [self.args.beekon, "track", "--source", "replay:" + a["track"], "--speed", a["speed"],
                    "--db", a["db"], "--config", a["config"], "--drain-timeout", str(self.args.drain_timeout)]
        else:
            argv = [self.args.beekon, "sync", "--db", a["db"], "--config", a["config"],
                    "--drain-timeout", str(self.args.drain_timeout)]
        a["proc"] = Managed(argv, a["log"])
        a["mode"] = mode
        a["runs"].append(a["proc"])

    def tracking_intent(self, a):
        if not os.path.exists(a["db"]):
            return True
        out = subprocess.run([self.args.beekon, "status", "--db", a["db"], "--json"], capture_output=True, timeout=60)
        if out.returncode != 0:
            self.crashes.append(f"agent{a['i']} status exited {out.returncode}: {out.stderr.decode()[-300:]}")
            return False
        return bool(json.loads(out.stdout).get("tracking_intent"))

    def restart_agent(self, a):
        """After a kill: resume tracking if the session is still on, else drain the queue."""
        a["proc"].wait(10)
        ever_started = any(l.startswith(("started session ", "resumed session ")) for p in a["runs"] for l in p.lines)
        self.launch_agent(a, "track" if not ever_started or self.tracking_intent(a) else "sync")

    def kill_agent(self, a, kind):
        with self.lock:
            p = a["proc"]
            if p is None or not p.alive():
                return False
            p.kill()
            self.counts[kind] = self.counts.get(kind, 0) + 1
            a["restart_at"] = time.time() + self.rng.uniform(0.0, 1.5)
            return True

    def kill_inflight(self, agent_label, kind):
        for a in self.agents:
            if f"a{a['i']}" == agent_label:
                self.kill_agent(a, kind)

    def check_agents(self, final=False):
        for a in self.agents:
            p = a["proc"]
            if p is None or p.alive():
                continue
            if not p.killed_by_us and not a.get("checked_exit_of") is p:
                a["checked_exit_of"] = p
                rc = p.p.returncode
                # Exit 1 with a storage error is the documented answer to a disk that filled up.
                disk_error = rc == 1 and a.get("disk") and any("the disk is full" in l for l in self.tail(a["log"]))
                if rc < 0 or (rc not in (0, 3) and not disk_error):
                    self.crashes.append(f"agent{a['i']} `{' '.join(p.argv[1:3])}` exited {rc} without being killed "
                                        f"(see {a['log']})")
            if p.killed_by_us and not final:
                if time.time() >= a.get("restart_at", 0):
                    with self.lock:
                        self.restart_agent(a)

    # ---- run
    def run(self):
        args = self.args
        if args.store == "postgres":
            self.database = self.pg.create_database(f"chaos_{os.getpid()}_{self.index}")
        else:
            self.database = "sqlite:" + os.path.join(self.dir, "ingest.sqlite")
        self.start_server()
        self.viewers = [Viewer(self, v, random.Random(f"{args.seed}/{self.index}/viewer{v}")) for v in range(args.viewers)]
        self.proxy = Proxy(random.Random(f"{args.seed}/{self.index}/proxy"), self.counts, self.kill_inflight,
                           self.server_port)
        self.proxy.db_up = lambda: time.time() >= self.shared["db_down_until"]
        n_agents = args.agents
        for i in range(n_agents):
            spec = {"batch": self.rng.choice([10, 20, 50, 100]),
                    "speed": self.rng.choice(args.speeds.split(",")),
                    "track": os.path.join(DATA, self.rng.choice(TRACKS))}
            a = {"i": i, "db": os.path.join(self.dir, f"agent{i}.sqlite"), "log": os.path.join(self.dir, f"agent{i}.log"),
                 "track": spec["track"], "speed": spec["speed"], "runs": [], "proc": None}
            if i == 0 and self.shared["disk_full"] and self.rng.random() < 0.5:
                disk = os.path.join(self.dir, f"agent{i}-disk")
                if self.mount_disk(disk):
                    a["disk"] = disk
                    a["db"] = os.path.join(disk, f"agent{i}.sqlite")
                    self.disk = a
                else:
                    self.shared["disk_full"] = False
                    log("disk-full faults off: mounting a tmpfs failed (not root?)")
            a["config"] = self.agent_config(i, spec)
            self.agents.append(a)
            log(f"trial {self.index}: agent{i} {os.path.basename(spec['track'])} speed={spec['speed']} batch={spec['batch']} "
                f"auth={self.auth}" + (" db-on-tmpfs" if a.get("disk") else ""))
        for a in self.agents:
            self.launch_agent(a, "track")

        # Chaos phase.
        end = time.time() + args.duration
        next_event = time.time() + self.rng.uniform(0.5, 3.0)
        server_restart_at = None
        disk_free_at = None
        while time.time() < end:
            time.sleep(0.05)
            self.check_agents()
            if server_restart_at is not None and time.time() >= server_restart_at:
                self.start_server()
                server_restart_at = None
            elif server_restart_at is None:
                self.check_server()
            if disk_free_at is not None and time.time() >= disk_free_at:
                self.free_disk()
                disk_free_at = None
            if time.time() < next_event:
                continue
            next_event = time.time() + self.rng.uniform(0.8, 3.0)
            r = self.rng.random()
            if r < 0.40:
                self.kill_agent(self.rng.choice(self.agents), "kill_agent")
            elif r < 0.58 and server_restart_at is None:
                self.server.kill()
                self.server.wait(10)
                self.counts["kill_server"] = self.counts.get("kill_server", 0) + 1
                server_restart_at = time.time() + self.rng.uniform(0.1, 2.0)
            elif r < 0.66 and self.pg is not None and server_restart_at is None:
                self.restart_postgres()
            elif r < 0.76 and self.auth == "tokens":
                self.counts["token_outage"] = self.counts.get("token_outage", 0) + 1
                self.proxy.token_down_until = time.time() + self.rng.uniform(1.0, 5.0)
            elif r < 0.86 and self.disk is not None and disk_free_at is None:
                self.counts["disk_full"] = self.counts.get("disk_full", 0) + 1
                self.fill_disk()
                disk_free_at = time.time() + self.rng.uniform(1.0, 4.0)
        if server_restart_at is not None:
            self.start_server()
        if self.disk is not None:
            self.free_disk()

        # Calm phase: faults off; let every agent finish, then drain what is left.
        self.proxy.calm = True
        self.proxy.token_down_until = 0.0
        for a in self.agents:
            if a["proc"].killed_by_us and a["proc"] is a["runs"][-1]:
                self.restart_agent(a)
        deadline = time.time() + args.drain_timeout + 90
        while time.time() < deadline and any(a["proc"].alive() for a in self.agents):
            time.sleep(0.1)
            self.check_server()
        for a in self.agents:
            if a["proc"].alive():
                self.crashes.append(f"agent{a['i']} still running {args.drain_timeout + 90} s after the chaos phase")
                a["proc"].kill()
                a["proc"].wait(10)
        self.check_agents(final=True)
        for a in self.agents:
            # Whatever is still queued (e.g. the last run hit its drain timeout): one more drain.
            self.launch_agent(a, "sync")
            rc = a["proc"].wait(args.drain_timeout + 30)
            if rc is None:
                a["proc"].kill()
                self.crashes.append(f"agent{a['i']} final sync did not finish")
            elif rc != 0:
                self.crashes.append(f"agent{a['i']} final sync exited {rc} (see {a['log']})")
        self.check_server()
        return self.verify()

    def restart_postgres(self):
        """Restarts the shared cluster (skipped while a parallel trial restarts it)."""
        if not self.shared["pg_lock"].acquire(blocking=False):
            return
        try:
            self.counts["pg_restart"] = self.counts.get("pg_restart", 0) + 1
            self.shared["db_down_until"] = time.time() + 120
            try:
                self.pg.restart()
            finally:
                self.shared["db_down_until"] = time.time() + 1.0
        finally:
            self.shared["pg_lock"].release()

    def server_sessions(self, install):
        url = f"http://127.0.0.1:{self.server_port}/v1/devices/{install}/sessions"
        req = urllib.request.Request(url, headers={"Authorization": f"Bearer {API_KEY}"})
        with urllib.request.urlopen(req, timeout=60) as r:
            body = json.loads(r.read())
        return body["sessions"] if isinstance(body, dict) else body

    def server_fixes(self, install):
        out, cursor = [], None
        for _ in range(10000):
            q = {"limit": "5000"}
            if cursor:
                q["cursor"] = cursor
            url = f"http://127.0.0.1:{self.server_port}/v1/devices/{install}/fixes?" + urllib.parse.urlencode(q)
            req = urllib.request.Request(url, headers={"Authorization": f"Bearer {API_KEY}"})
            with urllib.request.urlopen(req, timeout=60) as r:
                page = json.loads(r.read())
            out += page["fixes"]
            cursor = page.get("next_cursor")
            if not cursor:
                break
        return out

    def verify(self):
        res = {"stored": 0, "at_server": 0, "lost": 0, "duplicated": 0, "foreign": 0, "session_changes": 0,
               "server_errors": 0, "events_stored": 0, "events_at_server": 0, "events_lost": 0, "events_duplicated": 0,
               "problems": []}
        all_stored = set()
        all_events = set()
        server_ids = set()
        for a in self.agents:
            h = subprocess.run([self.args.beekon, "history", "--db", a["db"], "--format", "ndjson"],
                               capture_output=True, timeout=120)
            st = subprocess.run([self.args.beekon, "status", "--db", a["db"], "--json"], capture_output=True, timeout=60)
            if h.returncode != 0 or st.returncode != 0:
                self.crashes.append(f"agent{a['i']} history/status failed: {h.stderr.decode()[-200:]} {st.stderr.decode()[-200:]}")
                continue
            rows = [json.loads(l) for l in h.stdout.decode().splitlines() if l.strip()]
            status = json.loads(st.stdout)
            mine = [r["id"] for r in rows]
            all_stored |= set(mine)
            res["stored"] += len(mine)
            theirs = self.server_fixes(status["install_id"])
            ids = [f["id"] for f in theirs]
            server_ids |= set(ids)
            res["at_server"] += len(ids)
            res["duplicated"] += len(ids) - len(set(ids))
            lost = set(mine) - set(ids)
            res["lost"] += len(lost)
            if lost:
                res["problems"].append(f"agent{a['i']}: {len(lost)} stored fixes not at the server, e.g. {sorted(lost)[:3]}; "
                                       f"status {status}")
            foreign = set(ids) - set(mine)
            res["foreign"] += len(foreign)
            # Geofence events: each stored one went out in a batch the server accepted, and the
            # server's per-session counts (it dedupes by event id) add up to the agent's.
            ev = subprocess.run([self.args.beekon, "history", "--db", a["db"], "--events"], capture_output=True, timeout=120)
            if ev.returncode != 0:
                self.crashes.append(f"agent{a['i']} history --events failed: {ev.stderr.decode()[-200:]}")
            events = [json.loads(l)["id"] for l in ev.stdout.decode().splitlines() if l.strip()]
            all_events |= set(events)
            res["events_stored"] += len(events)
            undelivered = [e for e in events if not (self.proxy.event_batches.get(e, set()) & self.proxy.acked_batches)]
            res["events_lost"] += len(undelivered)
            if undelivered:
                res["problems"].append(f"agent{a['i']}: {len(undelivered)} stored geofence events never accepted by the server")
            counted = sum(s.get("geofence_event_count", 0) for s in self.server_sessions(status["install_id"]))
            res["events_at_server"] += counted
            if counted != len(events):
                res["problems"].append(f"agent{a['i']}: {len(events)} geofence events stored, {counted} at the server")
                res["events_lost"] += max(0, len(events) - counted)
                res["events_duplicated"] += max(0, counted - len(events))
            # Sessions: one id over every run (start, resumes), and it is what the history carries.
            started = []
            for p in a["runs"]:
                for l in p.lines:
                    if l.startswith("started session ") or l.startswith("resumed session "):
                        started.append(l.split()[-1])
            sessions = set(started) | {r["session_id"] for r in rows}
            if len(sessions) > 1:
                res["session_changes"] += len(sessions) - 1
                res["problems"].append(f"agent{a['i']}: sessions {sessions} (runs: {[p.argv[1] for p in a['runs']]})")
            if status.get("pending_uploads") or status.get("open_batches") or status.get("rejected_locations"):
                res["problems"].append(f"agent{a['i']}: queue not empty at the end: {status}")
        # A fix travelling in two different batches is a duplicate delivery even though the server dedupes.
        for fid, bids in self.proxy.fix_batches.items():
            if len(bids) > 1:
                res["duplicated"] += 1
                if len([p for p in res["problems"] if "batches" in p]) < 3:
                    res["problems"].append(f"fix {fid} sent in batches {sorted(bids)}")
        for agent, bid, status, db_up in self.proxy.upstream_status:
            if status >= 500 and db_up or status in (400, 413, 415, 422):
                res["server_errors"] += 1
                res["problems"].append(f"server answered {status} to batch {bid} from {agent}")
        for eid, bids in self.proxy.event_batches.items():
            if len(bids) > 1:
                res["events_duplicated"] += 1
                res["problems"].append(f"geofence event {eid} sent in batches {sorted(bids)}")
        res["foreign"] += len(set(self.proxy.event_batches) - all_events)
        for agent, status, db_up in self.proxy.token_status:
            if status >= 500 and db_up:
                res["server_errors"] += 1
                res["problems"].append(f"token endpoint answered {status} to {agent} while the database was up")
        res["foreign"] += len(set().union(*self.proxy.batches.values()) - all_stored) if self.proxy.batches else 0
        # Live viewers: each one's received set is the server's stored set, nothing twice.
        res["viewer_lost"] = res["viewer_dup"] = 0
        for v in getattr(self, "viewers", []):
            lost, dup, foreign = v.finish(server_ids)
            res["viewer_lost"] += lost
            res["viewer_dup"] += dup
            res["foreign"] += foreign
            if lost or dup or foreign:
                res["problems"].append(f"viewer{v.index}: {lost} stored fixes never streamed, {dup} streamed twice, "
                                       f"{foreign} unknown ({v.sessions} connections)")
            res["problems"] += v.problems
            res["viewer_dup"] += len(v.problems)
            self.counts["viewer_connections"] = self.counts.get("viewer_connections", 0) + v.sessions
        res["crashes"] = len(self.crashes)
        res["problems"] += self.crashes
        return res

    def cleanup(self):
        for v in getattr(self, "viewers", []):
            v.stop = True
        for a in self.agents:
            if a["proc"] is not None:
                a["proc"].kill()
        if self.server is not None and self.server.alive():
            self.server.kill(signal.SIGTERM)
            if self.server.wait(20) is None:
                self.server.kill()
            elif self.server.p.returncode not in (0, None):
                self.crashes.append(f"beekon-ingest exited {self.server.p.returncode} on SIGTERM")
        if hasattr(self, "proxy"):
            self.proxy.stop()
        if self.disk is not None:
            for a in self.agents:
                if a["proc"] is not None:
                    a["proc"].wait(10)
            subprocess.run(["umount", "-l", self.disk["disk"]], capture_output=True)


# --------------------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--store", choices=["sqlite", "postgres"], default="sqlite")
    ap.add_argument("--agents", type=int, default=2)
    ap.add_argument("--duration", type=float, default=20.0, help="seconds of chaos per trial")
    ap.add_argument("--drain-timeout", type=int, default=40)
    ap.add_argument("--jobs", type=int, default=1, help="trials run side by side")
    ap.add_argument("--speeds", default="max,60,120,240", help="replay speeds to pick from")
    ap.add_argument("--auth", choices=["key", "tokens", "mixed"], default="mixed",
                    help="static API key, rotating tokens (refresh faults), or a per-trial pick")
    ap.add_argument("--disk-full", choices=["auto", "off"], default="auto",
                    help="auto: put one agent's database on a small tmpfs and fill it (needs root)")
    ap.add_argument("--beekon", required=True)
    ap.add_argument("--ingest", required=True)
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    ap.add_argument("--viewers", type=int, default=2, help="live-stream viewers per trial (random drops, Last-Event-ID resume)")
    args = ap.parse_args()

    workdir = tempfile.mkdtemp(prefix="beekon-chaos-")
    os.chmod(workdir, 0o755)
    log(f"seed {args.seed}, {args.trials} trials, store {args.store}, work dir {workdir}")
    pg = PostgresCluster(workdir) if args.store == "postgres" else None
    totals = {"stored": 0, "at_server": 0, "lost": 0, "duplicated": 0, "foreign": 0, "session_changes": 0,
              "server_errors": 0, "crashes": 0, "events_stored": 0, "events_at_server": 0, "events_lost": 0,
              "events_duplicated": 0, "viewer_lost": 0, "viewer_dup": 0}
    faults = {}
    failed_trials = []
    started = time.time()
    shared = {"db_down_until": 0.0, "pg_lock": threading.Lock(), "disk_full": args.disk_full == "auto"}
    report_lock = threading.Lock()

    def one(t):
        trial = Trial(args, t, workdir, pg, shared)
        try:
            res = trial.run()
        except Exception as e:  # harness failure: report, count as a crash
            res = {k: 0 for k in totals}
            res["crashes"] = 1
            res["problems"] = [f"harness: {type(e).__name__}: {e}"]
        finally:
            trial.cleanup()
        with report_lock:
            for k in totals:
                totals[k] += res.get(k, 0)
            for k, v in trial.counts.items():
                faults[k] = faults.get(k, 0) + v
            bad = any(res.get(k) for k in ("lost", "duplicated", "foreign", "session_changes", "server_errors", "crashes",
                                            "events_lost", "events_duplicated", "viewer_lost", "viewer_dup"))
            log(f"trial {t}: stored {res['stored']} at server {res['at_server']} lost {res['lost']} dup {res['duplicated']} "
                f"crashes {res['crashes']} auth {trial.auth} faults {dict(sorted(trial.counts.items()))}" + ("  FAILED" if bad else ""))
            for p in res.get("problems", [])[:10]:
                log(f"  trial {t}: {p}")
            if bad:
                failed_trials.append(t)

    try:
        pending = list(range(args.trials))
        workers = []
        queue_lock = threading.Lock()

        def worker():
            while True:
                with queue_lock:
                    if not pending:
                        return
                    t = pending.pop(0)
                one(t)

        for _ in range(max(1, args.jobs)):
            w = threading.Thread(target=worker)
            w.start()
            workers.append(w)
        for w in workers:
            w.join()
    finally:
        if pg is not None:
            pg.stop()
        failed_trials.sort()
        if not args.keep and not failed_trials:
            shutil.rmtree(workdir, ignore_errors=True)
        elif failed_trials:
            log(f"kept {workdir} for the failed trials {failed_trials}")

    rows = [("trials", args.trials), ("seed", args.seed), ("store", args.store), ("agents per trial", args.agents),
            ("auth", args.auth), ("parallel trials", args.jobs),
            ("elapsed (s)", f"{time.time() - started:.0f}")]
    rows += [(f"faults: {k}", faults.get(k, 0)) for k in FAULT_KINDS if k != "pg_restart" or args.store == "postgres"]
    if not shared["disk_full"]:
        rows.append(("disk_full", "off (no tmpfs)"))
    rows += [("upstream unreachable (server down)", faults.get("upstream_unreachable", 0)),
             ("fixes stored (agents)", totals["stored"]), ("fixes at server", totals["at_server"]),
             ("lost", totals["lost"]), ("duplicated", totals["duplicated"]),
             ("geofence events stored (agents)", totals["events_stored"]),
             ("geofence events at server", totals["events_at_server"]),
             ("geofence events lost", totals["events_lost"]), ("geofence events duplicated", totals["events_duplicated"]),
             ("live viewers: stored fixes never streamed", totals["viewer_lost"]),
             ("live viewers: fixes streamed twice / ids not increasing", totals["viewer_dup"]),
             ("foreign (never stored)", totals["foreign"]),
             ("session id changes", totals["session_changes"]), ("server 5xx/4xx to good batch", totals["server_errors"]),
             ("crashes", totals["crashes"])]
    width = max(len(k) for k, _ in rows)
    print("+" + "-" * (width + 2) + "+" + "-" * 12 + "+")
    for k, v in rows:
        print(f"| {k:<{width}} | {str(v):>10} |")
    print("+" + "-" * (width + 2) + "+" + "-" * 12 + "+")
    ok = not failed_trials
    print("PASS" if ok else f"FAIL (trials {failed_trials})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
