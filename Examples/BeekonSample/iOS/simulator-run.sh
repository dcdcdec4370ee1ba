#!/usr/bin/env bash
# The sample's behaviour on an iOS simulator, checked from the server (.github/workflows/apple.yml):
#
#   simulator-run.sh UDID APP_PATH BEEKON_INGEST OUT_DIR
#
# 1. starts `beekon-ingest` on loopback (SQLite, auth required, one admin API key) and creates
#    an enrollment code with that key (POST /v1/enrollments);
# 2. installs the app, grants it Always location (`simctl privacy … grant location-always`),
#    launches it with BEEKON_SERVER, BEEKON_ENROLLMENT_CODE and BEEKON_AUTOSTART=1 (passed as
#    SIMCTL_CHILD_ variables): it enrols, turns uploads on and starts tracking;
# 3. drives the simulator along a 14 km route at 15 m/s (`simctl location … start`) and waits
#    until the server lists the device with a fix (the foreground works);
# 4. backgrounds the app by launching Settings, asks the server for a locate (POST
#    /v1/devices/{id}/locate: the request reaches the app in the answer to its next upload),
#    and waits until the server holds at least MIN_BACKGROUND_FIXES fixes taken after the app
#    went to the background and the locate request is answered.
#
# A script rather than an XCUITest: every step is outside the app (a server process on the
# runner, simctl's privacy, location and launch commands, reading the server's API), and the
# app needs no tapping: it reads its enrolment from the environment. Runs on a Mac only.
set -euo pipefail
udid=$1 app=$2 ingest=$3 out=$4
bundle=dev.beekon.sample
min_background_fixes=${MIN_BACKGROUND_FIXES:-3}
mkdir -p "$out"

key=$(openssl rand -hex 24)
# A locate request lives 10 minutes here (120 s by default): it waits for the app's next upload.
"$ingest" serve --host 127.0.0.1 --port 0 --database "sqlite:$out/ingest.sqlite" --auth required --api-key "$key" \
  --locate-expiry 600 >"$out/ingest.log" 2>&1 &
server=$!
driver=""
cleanup() {
  [ -z "$driver" ] || kill "$driver" 2>/dev/null || true
  xcrun simctl location "$udid" clear >/dev/null 2>&1 || true
  kill "$server" 2>/dev/null || true
}
trap cleanup EXIT

# Polls `check` (a shell function) every 5 s until it succeeds or `seconds` pass.
wait_for() {
  local what=$1 seconds=$2 check=$3 waited=0
  until "$check"; do
    if [ "$waited" -ge "$seconds" ]; then
      echo "FAILED: $what within ${seconds}s" >&2
      return 1
    fi
    sleep 5
    waited=$((waited + 5))
  done
  echo "ok: $what (after ~${waited}s)"
}

listening() { grep -qE '^listening on ' "$out/ingest.log"; }
wait_for "beekon-ingest listening" 60 listening
base="http://$(grep -m1 -E '^listening on ' "$out/ingest.log" | sed 's/^listening on //')"
echo "server: $base"
api() { curl -fsS -H "Authorization: Bearer $key" "$@"; }

code=$(api -X POST -H 'Content-Type: application/json' -d '{"uses":1,"ttl_seconds":3600,"label":"apple-ci"}' \
  "$base/v1/enrollments" | python3 -c 'import json,sys; print(json.load(sys.stdin)["code"])')

xcrun simctl boot "$udid" 2>/dev/null || true
xcrun simctl bootstatus "$udid" -b
xcrun simctl install "$udid" "$app"
xcrun simctl privacy "$udid" grant location-always "$bundle"
xcrun simctl location "$udid" set 37.3300,-122.0300
SIMCTL_CHILD_BEEKON_SERVER="$base" SIMCTL_CHILD_BEEKON_ENROLLMENT_CODE="$code" SIMCTL_CHILD_BEEKON_AUTOSTART=1 \
  xcrun simctl launch --terminate-running-process "$udid" "$bundle"

# A zigzag north through Cupertino: eight legs of about 1.8 km, about 16 minutes at 15 m/s.
route=()
for i in 0 1 2 3 4 5 6 7 8; do
  lat=$(printf '37.%04d' $((3300 + i * 50)))
  if [ $((i % 2)) = 0 ]; then lon=-122.0300; else lon=-122.0100; fi
  route+=("$lat,$lon")
done
# In the background of this script, in case simctl waits for the route's end.
xcrun simctl location "$udid" start --speed=15 --interval=1 "${route[@]}" &
driver=$!

install_id=""
enrolled() {
  install_id=$(api "$base/v1/devices" | python3 -c '
import json, sys
devices = [d for d in json.load(sys.stdin)["devices"] if d.get("last_fix")]
print(devices[0]["install_id"] if devices else "")')
  [ -n "$install_id" ]
}
wait_for "the app enrolled and uploaded a fix in the foreground" 300 enrolled
echo "device: $install_id"
xcrun simctl io "$udid" screenshot "$out/foreground.png" || true

# Backgrounded: Settings comes to the front; the sample keeps running for its location mode.
xcrun simctl launch "$udid" com.apple.Preferences
backgrounded=$(date -u +%Y-%m-%dT%H:%M:%SZ)
echo "app in the background since $backgrounded"
locate=$(api -X POST "$base/v1/devices/$install_id/locate" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
echo "locate request: $locate"

background_fixes() {
  local n
  n=$(api "$base/v1/devices/$install_id/fixes?from=$backgrounded&limit=5000" | python3 -c '
import json, sys
from datetime import datetime
def at(text):
    return datetime.fromisoformat(text.replace("Z", "+00:00"))
since = at(sys.argv[1])
fixes = [f for f in json.load(sys.stdin)["fixes"] if at(f["timestamp"]) > since and f["trigger"] != "manual"]
print(len(fixes))' "$backgrounded")
  echo "  fixes taken in the background so far: $n"
  [ "$n" -ge "$min_background_fixes" ]
}
wait_for "$min_background_fixes fixes taken in the background reached the server" 480 background_fixes

locate_answered() {
  local state
  state=$(api "$base/v1/devices/$install_id/locate/$locate" | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])')
  echo "  locate request: $state"
  [ "$state" = answered ]
}
wait_for "the locate request answered from the background" 180 locate_answered
xcrun simctl io "$udid" screenshot "$out/background.png" || true
api "$base/v1/devices/$install_id/fixes?limit=5000" >"$out/fixes.json"
echo "PASSED: the sample tracked in the background and answered a locate; fixes in $out/fixes.json"
