#!/usr/bin/env python3
"""Ingest latency with and without an attack running, same server, same run (issue 50).

usage: attack_bench.py --binary PATH [--load PATH] [--rate 500] [--duration 15] [--warmup 3]
                       [--devices 200] [--batch 10] [--only AT1,AT2,AT3,AT4] [--quick] [--json PATH]

For each attack of issue 50's table: a fresh beekon-ingest (SQLite in a temporary folder, auth on
with an admin key; `--server-arg` adds options) and, on it, `beekon-load` uploading at a steady open-loop
rate (`--rate` uploads/s of `--batch` fixes from `--devices` enrolled devices) twice: alone, then with
the attack held. Both arms do the same uploads (same devices, rate, size, and the same fsync per
commit); the row is the ratio of the two p99s (and p50s). Attacks:

  AT1 200 idle command long-polls (GET /v1/devices/{id}/commands?wait=60) held by ONE device credential.
     Two arms: the server's defaults (a credential holds 4; the rest get 429), and the cap lifted
     (--max-long-polls-per-credential 1000) so that all 200 are held: their idle cost is what is
     measured (server CPU over 10 s with nothing else running; target < 20 % of one core).
  AT2 400 live streams (GET /v1/live) on one share that never read, plus 200 idle long-polls of one
     credential, caps lifted so all are held; target: ingest p99 within 1.5× of the same rate without
     them, and the server's RSS growth per held stream or long-poll within the documented budget
     (SECURITY.md, "Connections": 128 KiB). Defaults arm too: the caps refuse all but 32 streams and 4 long-polls.
  AT3 one client address (127.0.0.2) holding as many connections as it can (server at nofile 256:
     cap 192, per-address cap 168), renewing them; a second client (127.0.0.1) opens fresh
     connections for /healthz and an upload every 100 ms: target every answer 200 within 1 s.
  AT4 a flood of bad enrolment codes, bad refresh tokens and bad share tokens from one address
     (127.0.0.3, 4 connections, as fast as answered): ingest p99 ratio, and how many got 429.

Prints one line per arm:

  <id> <label>: alone p50 <ms> p99 <ms> | attacked p50 <ms> p99 <ms> | ratio p50 <x> p99 <x> [extra]

and `target ... met|MISSED` lines. Exit 1 when beekon-load fails (an upload lost or refused).
"""
import argparse, http.client, json, os, re, resource, shutil, signal, socket, subprocess, sys, tempfile, threading, time


def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"): return int(line.split()[1]) / 1024
    return 0.0


class Server:
    def __init__(self, binary, args, nofile=None):
        self.dir = tempfile.mkdtemp(prefix="attack-bench-")
        self.port = free_port()
        self.key = "attack-admin-" + os.urandom(8).hex()
        def limits():
            if nofile: resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))
        cmd = [binary, "serve", "--port", str(self.port), "--database", f"sqlite:{self.dir}/db.sqlite", "--auth", "required",
               "--api-key", self.key, "--log-level", "error"] + args
        self.log = open(os.path.join(self.dir, "server.log"), "w")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT, preexec_fn=limits)
        for _ in range(600):
            try:
                self.request("GET", "/healthz"); break
            except OSError:
                if self.proc.poll() is not None: sys.exit(f"attack_bench: the server exited: {open(self.log.name).read()}")
                time.sleep(0.1)
        self.base = f"http://127.0.0.1:{self.port}"

    def request(self, method, path, body=None, headers=None, source=None):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10, source_address=(source, 0) if source else None)
        h = {"Authorization": "Bearer " + self.key}
        h.update(headers or {})
        c.request(method, path, body=body, headers=h)
        r = c.getresponse(); data = r.read(); c.close()
        return r.status, data

    def admin_json(self, method, path, obj):
        status, data = self.request(method, path, json.dumps(obj).encode(), {"Content-Type": "application/json"})
        if status // 100 != 2: sys.exit(f"attack_bench: {method} {path} answered {status}: {data[:200]!r}")
        return json.loads(data)

    def device_token(self, install):
        code = self.admin_json("POST", "/v1/enrollments", {"uses": 1, "ttl_seconds": 3600, "label": "attack-bench"})["code"]
        status, data = self.request("POST", "/oauth/token", f"grant_type=enrollment_code&code={code}&install_id={install}".encode(),
                                    {"Content-Type": "application/x-www-form-urlencoded", "Authorization": ""})
        if status != 200: sys.exit(f"attack_bench: enrolment answered {status}: {data[:200]!r}")
        return json.loads(data)["access_token"]

    def share_token(self):
        return self.admin_json("POST", "/v1/shares", {"all": True, "expires_in_seconds": 3600, "label": "attack-bench"})["token"]

    def stop(self):
        self.proc.terminate()
        try: self.proc.wait(10)
        except subprocess.TimeoutExpired: self.proc.kill(); self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def run_load(opts, server, label, connections=32):
    cmd = [opts.load, "--url", server.base, "--admin-key", server.key, "--devices", str(opts.devices), "--batch", str(opts.batch),
           "--rate", str(opts.rate), "--duration", str(opts.duration), "--warmup", str(opts.warmup), "--connections", str(connections),
           "--server-pid", str(server.proc.pid)]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.stderr.write(out.stdout + out.stderr)
        sys.exit(f"attack_bench: beekon-load failed ({label})")
    m, cpu = None, None
    for line in out.stdout.splitlines():
        m = re.match(r"rate [\d.]+ req/s × .*?\((\d+) ok, (\d+) failed\); latency ms p50 ([\d.]+) p90 [\d.]+ p99 ([\d.]+)", line) or m
        c = re.match(r"\s*CPU: servers ([\d.]+) cores, ([\d.]+) ms per upload", line)
        if c: cpu = float(c.group(2))
    if not m: sys.exit(f"attack_bench: no latency line from beekon-load:\n{out.stdout}")
    return float(m.group(3)), float(m.group(4)), cpu


def median(values):
    v = sorted(values); n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def interleaved(opts, server, label, start, stop, connections=32):
    """`opts.rounds` rounds of (alone, attacked) on one server, the attack started before and stopped
    after each attacked run; the median p50 and p99 of each arm. Interleaving keeps a change in the
    machine's load (another process) from landing on one arm only."""
    alone, attacked, notes = [], [], []
    for _ in range(opts.rounds):
        alone.append(run_load(opts, server, label + " alone", connections))
        handle = start()
        attacked.append(run_load(opts, server, label + " attacked", connections))
        notes.append(stop(handle))
    arm = lambda runs: (median([r[0] for r in runs]), median([r[1] for r in runs]),
                        median([r[2] for r in runs]) if all(r[2] is not None for r in runs) else float("nan"))
    return arm(alone), arm(attacked), notes


class Holder:
    """Raw connections that send one request and then never read (or read only the status)."""

    def __init__(self):
        self.socks = []; self.statuses = {}; self.lock = threading.Lock(); self.stop = threading.Event()

    def open(self, port, request, count, source=None, rcvbuf=None, read_status=True):
        for _ in range(count):
            s = socket.socket()
            if rcvbuf: s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
            if source: s.bind((source, 0))
            s.settimeout(10); s.connect(("127.0.0.1", port)); s.sendall(request)
            self.socks.append(s)
            if read_status: threading.Thread(target=self._status, args=(s,), daemon=True).start()

    def _status(self, s):
        try:
            head = s.recv(64)
            status = head.split(b" ")[1].decode() if head.startswith(b"HTTP/") else "closed"
        except OSError:
            status = "error"
        with self.lock: self.statuses[status] = self.statuses.get(status, 0) + 1

    def wait_statuses(self, expected, timeout=5.0):
        """Waits until `expected` answers were seen (refusals come at once), or the timeout."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if sum(self.statuses.values()) >= expected: return
            time.sleep(0.05)

    def close(self):
        self.stop.set()
        for s in self.socks:
            try: s.close()
            except OSError: pass


def long_poll_request(install, token):
    return (f"GET /v1/devices/{install}/commands?wait=60 HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Authorization: Bearer {token}\r\n\r\n").encode()


def live_request(token):
    return f"GET /v1/live HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\nAccept: text/event-stream\r\n\r\n".encode()


def row(opts, rows, ident, label, alone, attacked, extra=""):
    r50, r99 = attacked[0] / max(alone[0], 1e-6), attacked[1] / max(alone[1], 1e-6)
    print(f"{ident} {label}: alone p50 {alone[0]:.2f} p99 {alone[1]:.2f} | attacked p50 {attacked[0]:.2f} p99 {attacked[1]:.2f} "
          f"| ratio p50 {r50:.2f} p99 {r99:.2f} | server cpu ms/upload {alone[2]:.2f} vs {attacked[2]:.2f}"
          f"{(' ' + extra) if extra else ''}", flush=True)
    rows.append({"id": ident, "label": label, "alone_p50_ms": alone[0], "alone_p99_ms": alone[1], "attacked_p50_ms": attacked[0],
                 "attacked_p99_ms": attacked[1], "cpu_ms_per_upload_alone": alone[2], "cpu_ms_per_upload_attacked": attacked[2], "ratio_p50": r50, "ratio_p99": r99, "extra": extra})
    return r99


def target(text, met):
    print(f"target {text}: {'met' if met else 'MISSED'}", flush=True)


def idle_cpu(pid, seconds):
    c0 = cpu_seconds(pid); time.sleep(seconds)
    return (cpu_seconds(pid) - c0) / seconds


def a1(opts, rows):
    for arm, args in (("defaults", []), ("cap lifted", ["--max-long-polls-per-credential", "1000"])):
        if opts.lifted_only and arm == "defaults": continue
        srv = Server(opts.binary, args + opts.server_arg)
        try:
            install = "0190a000-0000-7000-8000-" + os.urandom(6).hex()
            token = srv.device_token(install)
            expected_refusals = 0 if arm == "cap lifted" else max(0, opts.long_polls - 4)
            def start():
                h = Holder(); h.open(srv.port, long_poll_request(install, token), opts.long_polls)
                h.wait_statuses(expected_refusals, timeout=5)
                return h
            def stop(h):
                refused = h.statuses.get("429", 0); h.close(); return refused
            base_cpu = idle_cpu(srv.proc.pid, opts.cpu_seconds)
            h = start(); held_cpu = idle_cpu(srv.proc.pid, opts.cpu_seconds); refused = stop(h)
            alone, attacked, _ = interleaved(opts, srv, "AT1", start, stop)
            held = opts.long_polls - refused
            row(opts, rows, "AT1", f"{opts.long_polls} idle long-polls, one credential ({arm})", alone, attacked,
                f"held {held} refused429 {refused} server_cpu idle {base_cpu * 100:.1f}% with_polls {held_cpu * 100:.1f}%")
            if arm == "cap lifted":
                target(f"AT1 {held} idle long-polls cost {held_cpu * 100:.1f} % of one core (< 20 %)", held_cpu < 0.20)
        finally:
            srv.stop()


def a2(opts, rows):
    for arm, args in (("defaults", []), ("caps lifted", ["--max-long-polls-per-credential", "1000", "--max-streams-per-share", "1000"])):
        if opts.lifted_only and arm == "defaults": continue
        srv = Server(opts.binary, args + opts.server_arg)
        try:
            install = "0190a000-0000-7000-8000-" + os.urandom(6).hex()
            token = srv.device_token(install)
            share = srv.share_token()
            growth = []
            def start():
                rss0 = rss_mib(srv.proc.pid)
                viewers, polls = Holder(), Holder()
                viewers.open(srv.port, live_request(share), opts.viewers, rcvbuf=4096, read_status=False)
                polls.open(srv.port, long_poll_request(install, token), opts.long_polls)
                return rss0, viewers, polls
            def stop(handle):
                rss0, viewers, polls = handle
                growth.append(rss_mib(srv.proc.pid) - rss0)
                viewers.close(); polls.close()
            alone, attacked, _ = interleaved(opts, srv, "AT2", start, stop)
            per_viewer_kib = max(growth) * 1024 / max(opts.viewers + opts.long_polls, 1)
            ratio = row(opts, rows, "AT2", f"{opts.viewers} never-reading viewers + {opts.long_polls} idle long-polls ({arm})", alone,
                        attacked, f"rss growth max {max(growth):.1f} MiB ({per_viewer_kib:.0f} KiB per held stream or poll)")
            if arm == "caps lifted":
                target(f"AT2 ingest p99 with them {ratio:.2f}× of without (≤ 1.5×)", ratio <= 1.5)
                target(f"AT2 server RSS growth {per_viewer_kib:.0f} KiB per held stream or long-poll (budget {opts.viewer_budget_kib} KiB)",
                       per_viewer_kib <= opts.viewer_budget_kib)
        finally:
            srv.stop()


def a3(opts, rows):
    # nofile 256: a connection cap of 192, 168 of them for one address; the load uses 8 connections.
    srv = Server(opts.binary, opts.server_arg, nofile=256)
    body = json.dumps({"schema_version": 1, "batch_id": "0190a000-0000-7000-8000-000000000001",
                       "session_id": "0190a000-0000-7000-8000-000000000002", "sent_at": "2026-01-01T00:00:00.000Z",
                       "device": {"install_id": "0190a000-0000-7000-8000-000000000003", "platform": "linux", "sdk_version": "bench"},
                       "locations": [], "geofence_events": []}).encode()
    probes, bad, held = [], [], []
    def hog(stop):  # the attacker: every connection it can get, a header byte every 2 s, renewed when closed
        socks = []
        while not stop.is_set():
            while len(socks) < 400 and not stop.is_set():
                try:
                    s = socket.socket(); s.bind(("127.0.0.2", 0)); s.settimeout(0.5); s.connect(("127.0.0.1", srv.port))
                    s.sendall(b"GET /healthz HTTP/1.1\r\nX-A: ")
                    socks.append(s)
                except OSError:
                    break
            alive = []
            for s in socks:
                try: s.sendall(b"a"); alive.append(s)
                except OSError: s.close()
            socks = alive; held.append(len(socks))
            stop.wait(2)
        for s in socks: s.close()
    def probe(stop):  # a second client: fresh connections, /healthz and an upload every 100 ms
        while not stop.is_set():
            for method, path, b in (("GET", "/healthz", None), ("POST", "/v1/locations", body)):
                t = time.monotonic()
                try: status, _ = srv.request(method, path, b, {"Content-Type": "application/json"})
                except OSError as e: status = str(e)
                dt = time.monotonic() - t
                probes.append(dt)
                if status != 200 or dt > 1.0: bad.append((path, status, round(dt, 3)))
            stop.wait(0.1)
    def start():
        stop = threading.Event()
        threads = [threading.Thread(target=hog, args=(stop,), daemon=True)]
        threads[0].start(); time.sleep(2)  # the attacker first takes what it can
        threads.append(threading.Thread(target=probe, args=(stop,), daemon=True)); threads[1].start()
        return stop, threads
    def stop(handle):
        handle[0].set()
        for t in handle[1]: t.join()
    try:
        alone, attacked, _ = interleaved(opts, srv, "AT3", start, stop, connections=8)
        worst = max(probes) * 1000 if probes else float("nan")
        row(opts, rows, "AT3", "one address holding every connection it can (nofile 256)", alone, attacked,
            f"attacker_connected {max(held) if held else 0} probes {len(probes)} worst_ms {worst:.0f} bad {len(bad)}"
            + (f" (first: {bad[:3]})" if bad else ""))
        target(f"AT3 a second client's /healthz and upload: {len(probes) - len(bad)}/{len(probes)} answered 200 within 1 s",
               bool(probes) and not bad)
    finally:
        srv.stop()


def a4(opts, rows):
    srv = Server(opts.binary, opts.server_arg)
    counts = {}; lock = threading.Lock()
    requests = [("POST", "/oauth/token", b"grant_type=refresh_token&refresh_token=guess", "application/x-www-form-urlencoded"),
                ("POST", "/oauth/token", b"grant_type=enrollment_code&code=guess&install_id=0190a000-0000-7000-8000-000000000009",
                 "application/x-www-form-urlencoded"),
                ("GET", "/v1/devices?share=bks_guess", None, None)]
    def connect():
        return http.client.HTTPConnection("127.0.0.1", srv.port, timeout=10, source_address=("127.0.0.3", 0))
    def flood(i, stop):
        c = connect(); n = i
        while not stop.is_set():
            method, path, body, ctype = requests[n % len(requests)]; n += 1
            try:
                c.request(method, path, body=body, headers={"Content-Type": ctype} if ctype else {})
                r = c.getresponse(); r.read(); status = r.status
            except (OSError, http.client.HTTPException):
                c.close(); c = connect(); status = "error"
            with lock: counts[status] = counts.get(status, 0) + 1
        c.close()
    def start():
        stop = threading.Event()
        threads = [threading.Thread(target=flood, args=(i, stop), daemon=True) for i in range(4)]
        for t in threads: t.start()
        return stop, threads
    def stop(handle):
        handle[0].set()
        for t in handle[1]: t.join()
    try:
        alone, attacked, _ = interleaved(opts, srv, "AT4", start, stop)
        total = sum(counts.values())
        row(opts, rows, "AT4", "flood of bad codes, refresh and share tokens (one address)", alone, attacked,
            "flood " + " ".join(f"{k}:{v}" for k, v in sorted(counts.items(), key=lambda kv: str(kv[0]))) + f" total {total}")
    finally:
        srv.stop()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--binary", required=True)
    p.add_argument("--load", help="beekon-load (default: beside --binary)")
    p.add_argument("--rate", type=float, default=500)
    p.add_argument("--duration", type=float, default=15)
    p.add_argument("--warmup", type=float, default=3)
    p.add_argument("--devices", type=int, default=200)
    p.add_argument("--batch", type=int, default=10)
    p.add_argument("--rounds", type=int, default=3, help="alone/attacked pairs per arm (medians)")
    p.add_argument("--viewers", type=int, default=400)
    p.add_argument("--long-polls", type=int, default=200)
    p.add_argument("--cpu-seconds", type=float, default=10)
    p.add_argument("--probe-seconds", type=float, default=10)
    p.add_argument("--viewer-budget-kib", type=int, default=128, help="the documented per-viewer memory budget (SECURITY.md)")
    p.add_argument("--only", default="AT1,AT2,AT3,AT4")
    p.add_argument("--server-arg", action="append", default=[])
    p.add_argument("--lifted-only", action="store_true", help="AT1 and AT2 with the caps lifted only (no defaults arm)")
    p.add_argument("--quick", action="store_true", help="tiny sizes (the benchmark smoke run)")
    p.add_argument("--json")
    opts = p.parse_args()
    opts.load = opts.load or os.path.join(os.path.dirname(os.path.abspath(opts.binary)), "beekon-load")
    if opts.quick:
        opts.rate, opts.duration, opts.warmup, opts.devices, opts.rounds = 50, 2, 0.5, 10, 1
        opts.viewers, opts.long_polls, opts.cpu_seconds, opts.probe_seconds = 20, 20, 1, 2
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, resource.getrlimit(resource.RLIMIT_NOFILE)[1:] * 2)
    except (ValueError, OSError):
        pass
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # run the `finally`s: no server is left behind
    rows = []
    for ident in opts.only.split(","):
        {"AT1": a1, "AT2": a2, "AT3": a3, "AT4": a4}[ident.strip()](opts, rows)
    if opts.json:
        json.dump({"rows": rows}, open(opts.json, "w"), indent=2)


if __name__ == "__main__":
    main()
