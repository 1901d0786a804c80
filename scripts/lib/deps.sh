# Shared by scripts/serve and scripts/test: install what is missing, nothing more.
# Sourced, not run. Debian packages only, with a lock timeout so parallel installs wait.

panes_root() { cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd; }

apt_install() {
  local missing=()
  for package in "$@"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "==> installing ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get -o DPkg::Lock::Timeout=300 update -qq || true
  DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=300 install -y -qq "${missing[@]}"
}

require_swift() {
  if ! command -v swift >/dev/null 2>&1; then
    [ -x /opt/swift/usr/bin/swift ] && export PATH="/opt/swift/usr/bin:$PATH"
  fi
  command -v swift >/dev/null 2>&1 || { echo "Swift 6 is required (https://swift.org/install); not found on PATH" >&2; exit 1; }
}

# What building and running the server needs.
server_dependencies() {
  # libwebsockets-evlib-ev: lws's libev plugin, the default event loop (libev-dev for its header).
  # libpq-dev: the PostgreSQL client library, for --store postgres://… (built in either way).
  # libcurl4-openssl-dev: libcurl on OpenSSL, which delivers webhooks (PanesWebhooks).
  apt_install libwebsockets-dev libwebsockets-evlib-ev libev-dev libjansson-dev libsqlite3-dev libssl-dev libjwt-dev \
    libpq-dev libcurl4-openssl-dev pkg-config curl
  require_swift
}

# What `scripts/test lint` needs: swift-format comes with the Swift toolchain; eslint is
# Debian's (6.4, which parses with Debian's espree 9; node-v8-compile-cache is a dependency its
# package leaves out); ruff is not in Debian (bookworm), so it comes from PyPI.
lint_dependencies() {
  apt_install eslint node-v8-compile-cache
  command -v ruff >/dev/null 2>&1 && return 0
  echo "==> installing ruff from PyPI (not packaged in Debian bookworm)"
  python3 -m pip install -q --disable-pip-version-check ruff 2>&1 \
    || python3 -m pip install -q --disable-pip-version-check --break-system-packages ruff
}
