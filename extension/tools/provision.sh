#!/usr/bin/env bash
# Installs everything agent_memory needs on Debian 12 and changes nothing when it is all there:
# PostgreSQL 15 with server headers and PL/Python, pgvector 0.8 built from Debian's source package,
# and the project's virtualenv (.venv) with the client and the test tools. With --browser, also Debian's
# Chromium, which the inspector page's browser test drives (`make test`; `make demo` does without it).
# Works as root, or as a user with passwordless sudo; anyone else is told what to install.
set -euo pipefail
export PIP_ROOT_USER_ACTION=ignore

root=$(cd "$(dirname "$0")/../.." && pwd)
pg_major=15
pg_config=/usr/lib/postgresql/$pg_major/bin/pg_config
pgvector_version=0.8
# prometheus-postgres-exporter: the metrics test scrapes docs/prometheus-queries.yaml through it.
debs=(postgresql-$pg_major postgresql-server-dev-$pg_major postgresql-plpython3-$pg_major postgresql-$pg_major-cron
      prometheus-postgres-exporter
      dpkg-dev make gcc python3-pip python3-venv ca-certificates)
if [ "${1-}" = --browser ]; then
  debs+=(chromium)
fi
venv=$root/.venv
cache=$root/.cache

log() { printf '==> %s\n' "$*"; }

if [ "$(id -u)" = 0 ]; then
  sudo=()
elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
  sudo=(sudo)
else
  sudo=(unavailable)
fi

need_root() {  # $1: what is missing; $2: the command that fixes it
  if [ "${sudo[0]-}" = unavailable ]; then
    printf 'agent_memory needs %s, and this user can neither install it nor use sudo.\n' "$1" >&2
    printf 'Ask an administrator to run, as root:\n  %s\nthen run this command again.\n' "$2" >&2
    exit 1
  fi
}

missing_debs() {
  local pkg
  for pkg in "${debs[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || printf '%s ' "$pkg"
  done
}

install_debs() {
  local missing
  missing=$(missing_debs)
  [ -z "$missing" ] && return 0
  need_root "the Debian packages: $missing" "apt-get update && apt-get install -y $missing"
  log "installing Debian packages: $missing"
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
  # shellcheck disable=SC2086
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing
}

pgvector_installed() {
  local control
  control="$("$pg_config" --sharedir)/extension/vector.control"
  [ -f "$control" ] && grep -q "default_version = '$pgvector_version" "$control"
}

# pgvector is not packaged for Debian 12: build it from Debian's source package of the next release,
# fetched from the Debian mirror this machine already uses, with a private apt state so the
# system's own sources stay as they are.
install_pgvector() {
  pgvector_installed && return 0
  need_root "pgvector $pgvector_version" "bash $root/extension/tools/provision.sh"
  local mirror work apt_opts
  mirror=$(apt-cache policy | awk '/ bookworm\/main / {print $2; exit}')
  if [ -z "$mirror" ]; then
    echo "no Debian bookworm mirror found in this machine's apt configuration (apt-cache policy)" >&2
    exit 1
  fi
  work=$cache/pgvector
  "${sudo[@]}" rm -rf "$work" && "${sudo[@]}" mkdir -p "$work/lists/partial"
  echo "deb-src $mirror trixie main" | "${sudo[@]}" tee "$work/sources.list" >/dev/null
  apt_opts=(-o "Dir::Etc::SourceList=$work/sources.list" -o Dir::Etc::SourceParts=/dev/null
            -o "Dir::State::Lists=$work/lists" -o Debug::NoDropPrivs=true)
  log "fetching pgvector's Debian source package from $mirror (trixie)"
  "${sudo[@]}" apt-get "${apt_opts[@]}" update -q >/dev/null
  (cd "$work" && "${sudo[@]}" apt-get "${apt_opts[@]}" source --download-only -q pgvector >/dev/null 2>&1)
  "${sudo[@]}" tar -xzf "$work"/pgvector_*.orig.tar.gz -C "$work"
  local src
  src=$(find "$work" -maxdepth 1 -type d -name 'pgvector-*' | head -n 1)
  log "building pgvector in $src"
  # OPTFLAGS="" builds for any x86-64 CPU, as Debian does, instead of -march=native.
  "${sudo[@]}" make -s -C "$src" PG_CONFIG="$pg_config" OPTFLAGS="" >/dev/null
  "${sudo[@]}" make -s -C "$src" PG_CONFIG="$pg_config" OPTFLAGS="" install >/dev/null
  pgvector_installed || { echo "pgvector build did not install vector $pgvector_version" >&2; exit 1; }
}

# The virtualenv holds the thin client (editable), the in-database package's dependencies (so the
# pure-Python logic is unit-tested outside the server) and the lint and test tools.
# The client's editable install must be a plain path in a .pth file (python-client/pyproject.toml sets
# package-dir for that): an import-hook finder, as older provisions installed, hides the package from
# mypy and pyright. Such an install is redone even when the requirements have not changed.
hooked_install() {
  grep -ls '^import __editable___' "$venv"/lib/python3*/site-packages/__editable__*agent_memory*.pth
}

install_venv() {
  local reqs stamp want
  reqs=("$root/plpython/requirements.txt" "$root/plpython/requirements-no-deps.txt" "$root/tests/requirements.txt"
        "$root/python-client/pyproject.toml")
  stamp=$venv/.agent_memory-stamp
  want=$(cat "${reqs[@]}" | sha256sum | cut -d' ' -f1)
  [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && ! hooked_install >/dev/null && return 0
  log "creating the virtualenv $venv"
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check \
    -r "$root/plpython/requirements.txt" -r "$root/tests/requirements.txt" -e "$root/python-client[mcp,http,langgraph,openai-agents,pydantic-ai,llama-index]"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps \
    -r "$root/plpython/requirements-no-deps.txt"
  if hooked_install >&2; then
    echo "the editable install of python-client still uses an import hook (above): type checkers cannot see it" >&2
    exit 1
  fi
  echo "$want" > "$stamp"
}

install_debs
install_pgvector
install_venv
log "provisioned: PostgreSQL $pg_major, pgvector $pgvector_version, $venv"
