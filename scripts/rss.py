#!/usr/bin/env python3
"""Runs a command and reports its peak resident memory (VmHWM from /proc, sampled
until the process exits), for the P7 rows of scripts/bench.sh.

usage: rss.py [--for SECONDS] [--load URL N] -- COMMAND...
  --for SECONDS  stop the command (SIGTERM) after this long (an idle server).
  --load URL N   while the command runs, POST N gzipped schema-v1 batches (100 fixes
                 each) to URL from 4 threads once the URL answers (server under load).
Prints one JSON object: {"peak_kib": …, "exit": …, "seconds": …}.
"""
import gzip, json, os, subprocess, sys, threading, time, uuid, urllib.request

def vm_hwm(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None

def batch(install, session, n, base_ms):
    def ts(ms):
        t = time.gmtime(ms // 1000)
        return time.strftime("%Y-%m-%dT%H:%M:%S", t) + ".%03dZ" % (ms % 1000)
    locs = [{"id": str(uuid.uuid4()), "timestamp": ts(base_ms + i * 1000), "trigger": "interval",
             "motion": "moving", "is_mock": False, "latitude": 48.1 + i * 1e-5, "longitude": 11.5,
             "accuracy": 5} for i in range(n)]
    env = {"schema_version": 1, "batch_id": str(uuid.uuid4()), "session_id": session, "sent_at": ts(base_ms),
           "device": {"install_id": install, "platform": "linux", "sdk_version": "bench"},
           "locations": locs, "geofence_events": []}
    return gzip.compress(json.dumps(env).encode())

def load(url, count):
    install, session = str(uuid.uuid4()), str(uuid.uuid4())
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            urllib.request.urlopen(url.rsplit("/", 2)[0] + "/healthz", timeout=1); break
        except Exception:
            time.sleep(0.1)
    bodies = [batch(install, session, 100, 1_700_000_000_000 + i * 100_000) for i in range(count)]
    def worker(part):
        for b in part:
            req = urllib.request.Request(url, data=b, method="POST",
                                         headers={"Content-Type": "application/json", "Content-Encoding": "gzip"})
            urllib.request.urlopen(req, timeout=30).read()
    threads = [threading.Thread(target=worker, args=(bodies[i::4],)) for i in range(4)]
    for t in threads: t.start()
    for t in threads: t.join()

def main():
    args = sys.argv[1:]
    load_url, load_n, run_for = None, 0, None
    if args[:1] == ["--for"]:
        run_for, args = float(args[1]), args[2:]
    if args[:1] == ["--load"]:
        load_url, load_n, args = args[1], int(args[2]), args[3:]
    if args[:1] == ["--"]:
        args = args[1:]
    start = time.time()
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak = 0
    loader = None
    if load_url:
        loader = threading.Thread(target=load, args=(load_url, load_n)); loader.start()
    while proc.poll() is None:
        v = vm_hwm(proc.pid)
        if v: peak = max(peak, v)
        if (loader and not loader.is_alive()) or (run_for and time.time() - start > run_for):
            proc.terminate()
        time.sleep(0.05)
    if loader: loader.join()
    print(json.dumps({"peak_kib": peak, "exit": proc.returncode, "seconds": round(time.time() - start, 2)}))

main()
