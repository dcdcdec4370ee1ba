#!/usr/bin/env bash
# Creates an iPhone simulator on the iOS runtime that matches the selected Xcode's simulator
# SDK (same major.minor, versions compared as numbers) and prints its UDID. Downloads that
# runtime with `xcodebuild -downloadPlatform iOS` when the runner does not have it.
# Used by .github/workflows/apple.yml; runs on a Mac only.
set -euo pipefail
sdk=$(xcrun --sdk iphonesimulator --show-sdk-version)
pick() {
  xcrun simctl list runtimes available -j | python3 -c '
import json, sys
def version(text):
    return tuple(int(part) for part in text.split("."))
want = version(sys.argv[1])[:2]
runtimes = [r for r in json.load(sys.stdin)["runtimes"] if r.get("platform") == "iOS" and r.get("isAvailable", True)]
matching = sorted((r for r in runtimes if version(r["version"])[:2] == want), key=lambda r: version(r["version"]))
if not matching:
    sys.exit(1)
runtime = matching[-1]
phones = [d for d in runtime.get("supportedDeviceTypes", []) if d.get("productFamily") == "iPhone"]
if not phones:
    sys.exit(1)
print(runtime["identifier"], phones[-1]["identifier"])
' "$sdk"
}
if ! found=$(pick); then
  echo "no iOS $sdk simulator runtime on this runner; downloading it" >&2
  xcodebuild -downloadPlatform iOS >&2
  if ! found=$(pick); then
    echo "still no iOS $sdk simulator runtime; the runner has:" >&2
    xcrun simctl list runtimes >&2
    exit 1
  fi
fi
read -r runtime devicetype <<<"$found"
echo "iOS simulator SDK $sdk: runtime $runtime, device type $devicetype" >&2
xcrun simctl create "Beekon CI iPhone" "$devicetype" "$runtime"
