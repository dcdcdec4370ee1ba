#!/usr/bin/env bash
# Open-loop load against beekon-ingest (issue 32): builds beekon-ingest and beekon-load, starts
# the servers (auth on, an admin key, devices enrolled with an enrollment code), runs
# beekon-load against them and stops them. Exit status is beekon-load's: non-zero when anything
# sent was not stored exactly once, or not delivered to every viewer.
#
#   scripts/load.sh [--debug] [--postgres] [--instances N] [--server-arg ARG]... [beekon-load options]
#
#   scripts/load.sh --devices 1000 --rate 1000 --duration 30            # one SQLite instance
#   scripts/load.sh --devices 1000 --rate 1000 --step 250 --duration 10  # step to saturation
#   scripts/load.sh --server-arg --no-group-commit --devices 1000 --rate 500 --step 250
#   scripts/load.sh --postgres --devices 1000 --rate 1000 --step 250
#   scripts/load.sh --postgres --instances 2 --viewers 10000 --devices 10 --batch 1 --rate 20 --duration 30
#
# beekon-load options (see `beekon-load --help`): --devices N --batch B --rate R --duration S
# [--gzip] [--warmup S] [--step S --max-rate M --p99-limit MS] [--viewers N]. Given --url, no server is
# started: the options go to beekon-load unchanged (pass --admin-key for servers with auth on).
# --postgres starts a throw-away PostgreSQL cluster (fsync on; /usr/lib/postgresql/15/bin or
# $BEEKON_PG_BIN); --database URL uses an existing one instead. Release build unless --debug.
set -euo pipefail
cd "$(dirname "$0")/.."
config=release; backend=sqlite; instances=1; database=""; server_args=(); load_args=(); external=0
while [ $# -gt 0 ]; do
  case "$1" in
    --debug) config=debug ;;
    --postgres) backend=postgres ;;
    --instances) instances=$2; shift ;;
    --database) database=$2; backend=postgres; shift ;;
    --server-arg) server_args+=("$2"); shift ;;
    --url) external=1; load_args+=("$1" "$2"); shift ;;
    *) load_args+=("$1") ;;
  esac
  shift
done
for product in beekon-ingest beekon-load; do
  swift build --package-path Server --scratch-path .build -c "$config" --product "$product" >/tmp/beekon-load-build.log 2>&1 ||
    { cat /tmp/beekon-load-build.log >&2; exit 1; }
done
bin=$(swift build --package-path Server --scratch-path .build -c "$config" --show-bin-path)
if [ "$external" = 1 ]; then exec "$bin/beekon-load" "${load_args[@]}"; fi
if [ "$backend" = sqlite ] && [ "$instances" != 1 ]; then echo "load.sh: SQLite runs one instance; use --postgres for several" >&2; exit 2; fi

# Descriptors: the servers and beekon-load raise their soft limit to the hard one themselves.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
work=$(mktemp -d /tmp/beekon-load.XXXXXX)
pids=(); pg_stop=""
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  if [ -n "$pg_stop" ]; then eval "$pg_stop" >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

if [ "$backend" = sqlite ]; then
  db="sqlite:$work/load.sqlite"
elif [ -n "$database" ]; then
  db=$database
else
  pgbin=${BEEKON_PG_BIN:-/usr/lib/postgresql/15/bin}
  pgport=$(free_port)
  as_pg=(); if [ "$(id -u)" = 0 ]; then chown postgres "$work"; as_pg=(runuser -u postgres --); fi
  "${as_pg[@]}" "$pgbin/initdb" -D "$work/pg" -A trust -U beekon --no-sync >/dev/null
  "${as_pg[@]}" "$pgbin/pg_ctl" -D "$work/pg" -w -t 60 -l "$work/pg.log" \
    -o "-p $pgport -k $work -c listen_addresses=127.0.0.1 -c fsync=on -c max_connections=500" start >/dev/null
  pg_stop="${as_pg[*]} $pgbin/pg_ctl -D $work/pg -m fast -w stop"
  "$pgbin/createdb" -h 127.0.0.1 -p "$pgport" -U beekon load
  db="postgres://beekon@127.0.0.1:$pgport/load?sslmode=disable"
fi

key="load-admin-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
urls=(); pid_args=(); shown=()
for i in $(seq 1 "$instances"); do
  port=$(free_port)
  "$bin/beekon-ingest" serve --port "$port" --database "$db" --auth required --api-key "$key" --log-level error \
    "${server_args[@]}" >"$work/server$i.log" 2>&1 &
  pids+=($!); pid_args+=(--server-pid $!)
  urls+=(--url "http://127.0.0.1:$port"); shown+=("http://127.0.0.1:$port")
  for _ in $(seq 1 600); do
    python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=1)' \
      "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
    kill -0 "${pids[-1]}" 2>/dev/null || { cat "$work/server$i.log" >&2; exit 1; }
    sleep 0.1
  done
done
echo "load.sh: $instances beekon-ingest ($config, $backend${server_args[*]:+, ${server_args[*]}}) at ${shown[*]}"
status=0
"$bin/beekon-load" "${urls[@]}" "${pid_args[@]}" --admin-key "$key" "${load_args[@]}" || status=$?
# A failed run shows what the servers logged (errors only), so a refused upload can be traced.
if [ "$status" != 0 ]; then
  for i in $(seq 1 "$instances"); do
    echo "load.sh: server $i log (errors, last 20 lines):" >&2
    tail -n 20 "$work/server$i.log" >&2
  done
fi
exit $status
