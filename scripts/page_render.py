#!/usr/bin/env python3
"""The dashboard's own time to first render, in headless chromium (BY-3).

Opens URL in a fresh headless chromium (1200x800) driven over --remote-debugging-pipe,
waits until the page sets data-first-render on <body> (performance.now() when the track
was first drawn after the history answer: navigation, page, /v1/devices, the history
request, JSON parsing and drawing), and prints one line: every run's figure in ms, the
median, and the points drawn. Usage: page_render.py [--runs N] [--screenshot PNG] URL
"""
import json, os, shutil, subprocess, sys, tempfile, time

def run_once(url, screenshot=None):
    profile = tempfile.mkdtemp(prefix="beekon-render-")
    to_r, to_w = os.pipe()
    from_r, from_w = os.pipe()
    # The browser reads commands on fd 3 and writes answers on fd 4.
    def child():
        # Through fresh copies: dup2 onto the same number would keep close-on-exec.
        a, b = os.dup(to_r), os.dup(from_w)
        os.dup2(a, 3)
        os.dup2(b, 4)
    proc = subprocess.Popen(
        ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe", "--no-first-run",
         "--disable-extensions", "--disable-background-networking", f"--user-data-dir={profile}",
         "--window-size=1200,800", "about:blank"],
        preexec_fn=child, close_fds=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(to_r); os.close(from_w)
    buf = b""; next_id = [0]
    def call(method, params, session=None):
        nonlocal buf
        next_id[0] += 1
        msg = {"id": next_id[0], "method": method, "params": params}
        if session: msg["sessionId"] = session
        os.write(to_w, json.dumps(msg).encode() + b"\0")
        while True:
            while b"\0" not in buf:
                chunk = os.read(from_r, 65536)
                if not chunk: raise RuntimeError("chromium closed its pipe")
                buf += chunk
            raw, buf = buf.split(b"\0", 1)
            reply = json.loads(raw)
            if reply.get("id") == next_id[0]:
                if "error" in reply: raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
    try:
        target = call("Target.createTarget", {"url": url})["targetId"]
        session = call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        deadline = time.time() + 120
        while time.time() < deadline:
            r = call("Runtime.evaluate", {"expression": "[document.body && document.body.dataset.firstRender, document.body && document.body.dataset.firstRenderPoints]", "returnByValue": True}, session)
            value = r.get("result", {}).get("value") or [None, None]
            if value[0]:
                if screenshot:
                    time.sleep(1)
                    shot = call("Page.captureScreenshot", {"format": "png"}, session)["data"]
                    import base64
                    open(screenshot, "wb").write(base64.b64decode(shot))
                return float(value[0]), int(value[1] or 0)
            time.sleep(0.02)
        raise RuntimeError("the page never drew its track")
    finally:
        proc.kill(); proc.wait()
        os.close(to_w); os.close(from_r)
        shutil.rmtree(profile, ignore_errors=True)

def main():
    args = sys.argv[1:]
    runs, screenshot = 3, None
    while args[:1] in (["--runs"], ["--screenshot"]):
        if args[0] == "--runs": runs = int(args[1])
        else: screenshot = args[1]
        args = args[2:]
    if len(args) != 1 or not shutil.which("chromium"):
        print("usage: page_render.py [--runs N] [--screenshot PNG] URL (needs chromium)", file=sys.stderr); sys.exit(2)
    results = [run_once(args[0], screenshot if i == runs - 1 else None) for i in range(runs)]
    times = sorted(t for t, _ in results)
    print("first render %s ms; median %.0f ms; %d points drawn" % (", ".join("%.0f" % t for t, _ in results), times[len(times) // 2], results[-1][1]))

if __name__ == "__main__":
    main()
