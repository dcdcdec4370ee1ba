#!/usr/bin/env python3
"""`/healthz` latency and server memory while slow connections are held (XR-3), for
scripts/bench.sh (1,000 connections) and scripts/bench-smoke.sh (a few).

usage: slow_conns.py --binary PATH [--connections 1000] [--probes 200] [--exhaust 400] [--json PATH]

Starts `beekon-ingest` on a free loopback port with a fresh SQLite database (auth off, as
auto decides on loopback). Baseline, in the same run: `probes` GET /healthz, each on a new
connection (the accept path is what an attack fills), and the server's resident memory
(VmRSS). Then it opens `connections` connections that each send a request line and one
header byte, and keeps trickling a header byte on every one of them about once a second —
the slow-head attack, held for less than the server's whole-head timeout (10 s by default).
While they are held it measures the same probes and memory again. Prints:

  slow-conns idle: healthz p50 <ms> p99 <ms> rss_mib <MiB>
  slow-conns held <N> (open <n>): healthz p50 <ms> p99 <ms> rss_mib <MiB>

Then descriptor exhaustion (the bound on recovery, as a timing): a second server started
under `prlimit --nofile=256`, `exhaust` connections opened against it (half trickling a
request head, half silent) and held for about 2 s, then all closed; the time from the close
until `/healthz` and a good upload both answer 200 (target: within 2 s):

  slow-conns exhaust <N> at nofile 256: recovered_ms <ms> (target 2000 ms: met|MISSED)

The held figures are compared with the idle ones in scripts/bench.sh. A probe that is not
answered 200 within 5 s fails the script (exit 1): the server must keep answering.
"""
import http.client, os, resource, socket, subprocess, sys, tempfile, threading, time, uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ingest_rate import body  # one schema-v1 envelope writer for the bench scripts


def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def answered(port, upload=False, timeout=2):
    """The status of one request on a new connection, or 0 when none came within `timeout` s."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        if upload:
            now = int(time.time() * 1000)
            c.request("POST", "/v1/locations", body=body(str(uuid.uuid4()), str(uuid.uuid4()), 2, now - 60_000),
                      headers={"Content-Type": "application/json"})
        else:
            c.request("GET", "/healthz")
        r = c.getresponse(); r.read(); return r.status
    except OSError:
        return 0
    finally:
        c.close()


def start(cmd, port):
    srv = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while answered(port) != 200:
        if time.monotonic() > deadline or srv.poll() is not None: raise SystemExit("beekon-ingest did not start")
        time.sleep(0.1)  # waiting for the server to listen, bounded by the deadline
    return srv


def exhaust(binary, tmp, n):
    port = free_port()
    srv = start(["prlimit", "--nofile=256:256", binary, "--port", str(port), "--database", f"sqlite:{tmp}/exhaust.sqlite",
                 "--log-level", "error"], port)
    socks = []
    try:
        for i in range(n):
            try: s = socket.create_connection(("127.0.0.1", port), timeout=5)
            except OSError: continue
            if i % 2 == 0:
                try: s.sendall(b"POST /v1/locations HTTP/1.1\r\nHost: localhost\r\n")
                except OSError: pass
            socks.append(s)
        for _ in range(4):
            for i, s in enumerate(socks):
                if i % 2 == 0:
                    try: s.send(b"X")
                    except OSError: pass
            time.sleep(0.5)  # the attack's own pace
        if srv.poll() is not None: raise SystemExit("beekon-ingest died under descriptor exhaustion")
        for s in socks: s.close()
        stopped = time.monotonic()
        health = upload = 0
        while time.monotonic() - stopped < 30 and (health != 200 or upload != 200):
            if health != 200: health = answered(port)
            if health == 200: upload = answered(port, upload=True)
        if health != 200 or upload != 200: raise SystemExit(f"no recovery within 30 s: healthz {health}, upload {upload}")
        return (time.monotonic() - stopped) * 1000
    finally:
        for s in socks: s.close()
        srv.terminate(); srv.wait(30)


def probe(port):
    """Milliseconds for one GET /healthz on a new connection; anything but 200 within 5 s fails the script."""
    start = time.monotonic()
    status = answered(port, timeout=5)
    if status != 200: raise SystemExit(f"/healthz answered {status or 'nothing'} within 5 s")
    return (time.monotonic() - start) * 1000


def percentile(xs, p):
    xs = sorted(xs); return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def measure(port, pid, probes):
    lat = [probe(port) for _ in range(probes)]
    return percentile(lat, 50), percentile(lat, 99), rss_mib(pid)


def main():
    args = {"binary": None, "connections": 1000, "probes": 200, "exhaust": 400, "json": None}
    it = iter(sys.argv[1:])
    for k in it:
        v = next(it, None)
        if k == "--binary": args["binary"] = v
        elif k in ("--connections", "--probes", "--exhaust"): args[k[2:]] = int(v)
        elif k == "--json": args["json"] = v
        else: raise SystemExit(__doc__)
    if not args["binary"]: raise SystemExit("give --binary PATH")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)  # room for the attack's sockets
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    if hard < args["connections"] + 64: raise SystemExit(f"descriptor limit {hard} is too low for the attack")
    tmp = tempfile.mkdtemp(prefix="slow-conns-")
    port = free_port()
    srv = start([args["binary"], "--port", str(port), "--database", f"sqlite:{tmp}/ingest.sqlite", "--log-level", "error"], port)
    socks, stop = [], threading.Event()
    try:
        for _ in range(20): probe(port)  # warm-up
        idle = measure(port, srv.pid, args["probes"])
        for _ in range(args["connections"]):
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
            s.sendall(b"GET /healthz HTTP/1.1\r\nX-Slow: a"); socks.append(s)
        def trickle():
            while not stop.wait(1.0):
                for s in list(socks):
                    try: s.send(b"a")
                    except OSError: socks.remove(s)
        t = threading.Thread(target=trickle, daemon=True); t.start()
        held = measure(port, srv.pid, args["probes"])
        still_open = len(socks)
        if srv.poll() is not None: raise SystemExit("beekon-ingest died under the attack")
    finally:
        stop.set()
        for s in socks: s.close()
        srv.terminate(); srv.wait(30)
    print("slow-conns idle: healthz p50 %.2f p99 %.2f rss_mib %.1f" % idle)
    print("slow-conns held %d (open %d): healthz p50 %.2f p99 %.2f rss_mib %.1f" % ((args["connections"], still_open) + held))
    recovered = exhaust(args["binary"], tmp, args["exhaust"])
    print("slow-conns exhaust %d at nofile 256: recovered_ms %.0f (target 2000 ms: %s)"
          % (args["exhaust"], recovered, "met" if recovered <= 2000 else "MISSED"))
    if args["json"]:
        import json
        json.dump({"idle": dict(zip(["p50_ms", "p99_ms", "rss_mib"], idle)),
                   "held": dict(zip(["p50_ms", "p99_ms", "rss_mib"], held)), "connections": args["connections"],
                   "open": still_open,
                   "exhaust": {"connections": args["exhaust"], "recovered_ms": recovered}}, open(args["json"], "w"), indent=2)


if __name__ == "__main__":
    main()
