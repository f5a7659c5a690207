#!/usr/bin/env bash
# Runs a command against a throwaway PostgreSQL cluster on loopback, then tears it down.
#   scripts/postgres.sh <command...>
# The cluster lives in a mktemp dir owned by the `postgres` user (the server refuses to run as
# root), listens on 127.0.0.1 only, with durability off (fsync, synchronous_commit,
# full_page_writes): test data only. The command sees
#   TASK_PROJECTION_TEST_PG_URL=postgres://tp@127.0.0.1:<port>/postgres
# (role `tp` with CREATEDB: each test creates its own database). An EXIT trap stops the cluster
# and deletes the dir whatever happens. Needs Debian's postgresql (scripts/setup.sh installs it).
set -euo pipefail

if [ "$#" -eq 0 ]; then
  echo "usage: $0 <command...>" >&2
  exit 2
fi

BIN="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)"
if [ -z "$BIN" ] || [ ! -x "$BIN/initdb" ]; then
  echo "postgres.sh: no /usr/lib/postgresql/*/bin/initdb (run scripts/setup.sh)" >&2
  exit 1
fi

as_postgres() {
  if [ "$(id -un)" = postgres ]; then "$@"; else runuser -u postgres -- "$@"; fi
}

DIR="$(mktemp -d /tmp/tp-pg.XXXXXX)"
chmod 755 "$DIR"
chown postgres:postgres "$DIR" 2>/dev/null || true
DATA="$DIR/data"
STARTED=""

cleanup() {
  local rc=$?
  if [ -n "$STARTED" ]; then
    as_postgres "$BIN/pg_ctl" -D "$DATA" -m fast -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$DIR"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

as_postgres "$BIN/initdb" -D "$DATA" -U postgres -A trust -E UTF8 --no-sync >"$DIR/initdb.log" 2>&1 || {
  cat "$DIR/initdb.log" >&2
  exit 1
}

# A taken port fails fast: try a few random ones.
PORT=""
for _ in 1 2 3 4 5 6 7 8; do
  candidate=$((20000 + RANDOM % 20000))
  if as_postgres "$BIN/pg_ctl" -D "$DATA" -l "$DIR/server.log" -w -t 30 start \
      -o "-p $candidate -k $DIR -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
      >/dev/null 2>&1; then
    PORT="$candidate"
    STARTED=1
    break
  fi
done
if [ -z "$PORT" ]; then
  echo "postgres.sh: could not start PostgreSQL" >&2
  cat "$DIR/server.log" >&2 || true
  exit 1
fi

as_postgres "$BIN/psql" -h "$DIR" -p "$PORT" -U postgres -d postgres -v ON_ERROR_STOP=1 -q \
  -c "CREATE ROLE tp LOGIN CREATEDB" >/dev/null

export TASK_PROJECTION_TEST_PG_URL="postgres://tp@127.0.0.1:$PORT/postgres"
echo "postgres.sh: PostgreSQL $("$BIN/postgres" --version | awk '{print $3}') on 127.0.0.1:$PORT ($DIR)"
"$@"
