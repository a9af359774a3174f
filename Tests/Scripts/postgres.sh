#!/usr/bin/env bash
# A PostgreSQL of the tests' own: installed from Debian when missing (postgresql: the
# server's initdb and pg_ctl, under /usr/lib/postgresql/N/bin), a cluster made in a
# temporary directory and started on a Unix socket there (no TCP port, no system service),
# the command run with WAYMARK_TEST_DATABASE_URL naming it, then the cluster stopped and
# removed. As root, the cluster belongs to the postgres user (initdb refuses root).
# The command also gets WAYMARK_TEST_DATABASE_CTL (stop|start), to take the server away.
# Usage: postgres.sh COMMAND [ARGUMENT...]
set -euo pipefail
cd "$(dirname "$0")/../.."
initdb=$(ls /usr/lib/postgresql/*/bin/initdb 2>/dev/null | sort -V | tail -n 1 || true)
if [ -z "$initdb" ]; then
  # A path that is never there makes install-packages.sh install the server.
  bash Tests/Scripts/install-packages.sh /usr/lib/postgresql/server-missing=postgresql
  initdb=$(ls /usr/lib/postgresql/*/bin/initdb | sort -V | tail -n 1)
fi
bin=$(dirname "$initdb")
work=$(mktemp -d /tmp/waymark-postgres-XXXXXX)
chmod 755 "$work"
as_owner=()
if [ "$(id -u)" = 0 ]; then
  id postgres >/dev/null 2>&1 || useradd --system --no-create-home postgres
  chown postgres "$work"
  as_owner=(runuser -u postgres --)
fi
stop() {
  "${as_owner[@]}" "$bin/pg_ctl" -D "$work/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap stop EXIT
"${as_owner[@]}" "$bin/initdb" -D "$work/data" -U waymark --auth=trust --encoding=UTF8 --no-instructions >"$work/initdb.log" 2>&1 \
  || { cat "$work/initdb.log"; exit 1; }
# Only the socket in the work directory; fsync off: a test cluster, thrown away after.
# $WAYMARK_TEST_DATABASE_CTL stop|start stops the server (fast: sessions cut) and starts it
# again, for the tests of a database that goes away.
cat > "$work/ctl" <<CTL
#!/usr/bin/env bash
set -euo pipefail
case "\$1" in
  stop) ${as_owner[*]} "$bin/pg_ctl" -D "$work/data" -m fast -w -t 60 stop >/dev/null ;;
  start) ${as_owner[*]} "$bin/pg_ctl" -D "$work/data" -l "$work/server.log" -w -t 60 \
    -o "-c listen_addresses='' -k $work -c fsync=off -c max_connections=200" start >/dev/null ;;
  *) echo "usage: ctl stop|start" >&2; exit 2 ;;
esac
CTL
chmod 755 "$work/ctl"
export WAYMARK_TEST_DATABASE_CTL="$work/ctl"
"$work/ctl" start || { cat "$work/server.log"; exit 1; }
"${as_owner[@]}" "$bin/createdb" -h "$work" -U waymark waymark_test
"${as_owner[@]}" "$bin/createdb" -h "$work" -U waymark waymark_empty
export WAYMARK_TEST_DATABASE_URL="postgresql:///waymark_test?host=$work&user=waymark"
# A second database, left empty for the command: a store can be moved into it.
export WAYMARK_TEST_PSQL="$bin/psql"
export WAYMARK_TEST_EMPTY_DATABASE_URL="postgresql:///waymark_empty?host=$work&user=waymark"
echo "postgres.sh: PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on $work (WAYMARK_TEST_DATABASE_URL=$WAYMARK_TEST_DATABASE_URL)"
status=0
"$@" || status=$?
exit "$status"
