# A private PostgreSQL 15 cluster for tests and benchmarks: in a folder of its own, its own
# Unix socket directory, a free TCP port on 127.0.0.1, no system service involved.
# Sourced, not run (after deps.sh). Usage:
#   postgres_dependencies                  # Debian's postgresql (15 on bookworm) and libpq-dev
#   dir=$(mktemp -d); url=$(postgres_start "$dir")   # prints postgres://postgres@127.0.0.1:PORT/postgres
#   postgres_stop "$dir"                   # stops it and removes the folder
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

# Starts a new cluster in DIR (created if missing; must be empty) and prints its URL.
postgres_start() {
  local dir=$1 bin port
  bin=$(postgres_bindir) || return 1
  mkdir -p "$dir/socket"
  # The postgres user must reach the folder: a mktemp folder is 0700 and root's.
  [ "$(id -u)" -eq 0 ] && chown -R postgres:postgres "$dir"
  chmod 700 "$dir"
  _postgres_as_owner "$bin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --no-locale >"$dir/initdb.log" 2>&1 \
    || { cat "$dir/initdb.log" >&2; return 1; }
  port=$(postgres_free_port)
  _postgres_as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $dir/socket -c max_connections=300 -c fsync=on" start >/dev/null \
    || { cat "$dir/server.log" >&2; return 1; }
  echo "postgres://postgres@127.0.0.1:$port/postgres"
}

# Stops the cluster in DIR (fast shutdown) and removes the folder.
postgres_stop() {
  local dir=$1 bin
  [ -d "$dir/data" ] || { rm -rf "$dir"; return 0; }
  bin=$(postgres_bindir) || return 1
  _postgres_as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
  rm -rf "$dir"
}
