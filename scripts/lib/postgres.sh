# A private PostgreSQL 15 cluster for tests and benchmarks: in a folder of its own, its own
# Unix socket directory, a free TCP port on 127.0.0.1, no system service involved.
# Sourced, not run (after deps.sh). Usage:
#   postgres_dependencies                  # Debian's postgresql (15 on bookworm) and libpq-dev
#   dir=$(mktemp -d); url=$(postgres_start "$dir")   # prints postgres://postgres@127.0.0.1:PORT/postgres
#   postgres_stop "$dir"                   # stops it and removes its folders
# DIR may be anywhere (inside a root-only folder too): as root, the cluster itself lives in a
# /tmp folder of the postgres user's, which DIR records.
# fsync stays on (the default): acknowledged means committed, in tests as in production.

postgres_dependencies() {
  apt_install postgresql libpq-dev
}

# The newest installed server's bin folder (initdb, pg_ctl are not on PATH on Debian).
postgres_bindir() {
  local dir
  dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
  [ -n "$dir" ] || { echo "PostgreSQL server binaries not found (apt install postgresql)" >&2; return 1; }
  echo "$dir"
}

# Runs a server command as the folder's owner: initdb and postgres refuse to run as root.
_postgres_as_owner() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

postgres_free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Where the cluster of DIR lives: DIR itself, or (as root) a folder of the postgres user's
# that DIR names, since a DIR inside a root-only folder (mktemp -d, 0700) is out of its reach.
_postgres_home() {
  local dir=$1
  if [ -f "$dir/cluster-home" ]; then cat "$dir/cluster-home"; else echo "$dir"; fi
}

# Starts a new cluster for DIR (created if missing) and prints its URL.
postgres_start() {
  local dir=$1 bin port home
  bin=$(postgres_bindir) || return 1
  mkdir -p "$dir"
  home=$dir
  if [ "$(id -u)" -eq 0 ]; then
    # initdb and postgres run as the postgres user, which must reach every folder above the
    # data. DIR is handed to it when it can (a mktemp -d folder in /tmp), so DIR/data,
    # DIR/socket and DIR/server.log are where callers expect them; a DIR it cannot reach (in a
    # root-only folder) gets a folder of its own in /tmp instead, recorded in DIR.
    if runuser -u postgres -- test -x "$(dirname "$dir")"; then
      chown postgres:postgres "$dir"
    else
      home=$(mktemp -d /tmp/panes-pg.XXXXXX)
      echo "$home" >"$dir/cluster-home"
      chown postgres:postgres "$home"
    fi
  fi
  chmod 700 "$home"
  mkdir -p "$home/socket"
  if [ "$(id -u)" -eq 0 ]; then chown postgres:postgres "$home/socket"; fi
  _postgres_as_owner "$bin/initdb" -D "$home/data" -U postgres --auth=trust -E UTF8 --no-locale >"$dir/initdb.log" 2>&1 \
    || { cat "$dir/initdb.log" >&2; return 1; }
  port=$(postgres_free_port)
  _postgres_as_owner "$bin/pg_ctl" -D "$home/data" -l "$home/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $home/socket -c max_connections=300 -c fsync=on" start >/dev/null \
    || { cat "$home/server.log" >&2; return 1; }
  echo "postgres://postgres@127.0.0.1:$port/postgres"
}

# Stops the cluster of DIR (fast shutdown) and removes its folders.
postgres_stop() {
  local dir=$1 bin home
  home=$(_postgres_home "$dir")
  if [ -d "$home/data" ]; then
    bin=$(postgres_bindir) || return 1
    _postgres_as_owner "$bin/pg_ctl" -D "$home/data" -m fast -w stop >/dev/null 2>&1 || true
  fi
  [ "$home" != "$dir" ] && rm -rf "$home"
  rm -rf "$dir"
}
