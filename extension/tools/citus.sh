#!/usr/bin/env bash
# Builds and installs Citus 12.1.12 for PostgreSQL 15 from its source tarball, for `make test-citus`, and
# changes nothing when that version is installed already. Citus is packaged neither for Debian 12 nor on
# PyPI; 12.1.12 is the last release that supports PostgreSQL 15 and builds against 15.20 (13.x does not
# compile there). Real deployments install Citus from its own packages or use a managed Citus service.
# The tarball: $CITUS_TARBALL, else ../shared/vendor/citus-12.1.12.tar.gz beside the project.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
version=12.1.12
sha256=c66b8c6544a6f7e55fbbcca55258c6f9ad91d3486bb7404bb883b689f39ecc86
tarball=${CITUS_TARBALL:-$root/../shared/vendor/citus-$version.tar.gz}
pg_config=/usr/lib/postgresql/15/bin/pg_config
debs=(libcurl4-openssl-dev liblz4-dev libzstd-dev libkrb5-dev libssl-dev libselinux1-dev libxslt1-dev
      libpam0g-dev libreadline-dev)
stamp="$("$pg_config" --pkglibdir)/citus-$version.built"
build=$root/.cache/citus-$version

log() { printf '==> %s\n' "$*"; }

[ -f "$stamp" ] && [ -f "$("$pg_config" --pkglibdir)/citus.so" ] && exit 0

if [ "$(id -u)" != 0 ]; then
  echo "building Citus installs into PostgreSQL's directories: run this as root (or with sudo)" >&2
  exit 1
fi
if [ ! -f "$tarball" ]; then
  cat >&2 <<EOF
Citus $version's source is not at $tarball.
Get it from https://github.com/citusdata/citus (tag v$version):
  git clone --branch v$version https://github.com/citusdata/citus && cd citus &&
  git archive --prefix=citus-$version/ v$version | gzip -9n > citus-$version.tar.gz
and set CITUS_TARBALL to its path.
EOF
  exit 1
fi
echo "$sha256  $tarball" | sha256sum --check --quiet ||
  { echo "$tarball is not Citus $version's source (sha256 differs)" >&2; exit 1; }

missing=
for deb in "${debs[@]}"; do
  dpkg-query -W -f='${Status}' "$deb" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $deb"
done
if [ -n "$missing" ]; then
  log "installing Citus's build dependencies:$missing"
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing
fi

log "building Citus $version (about two minutes, once)"
rm -rf "$build" && mkdir -p "$build"
tar xzf "$tarball" -C "$build" --strip-components=1
(cd "$build" && ./configure -q PG_CONFIG="$pg_config" --without-libcurl >/dev/null &&
  make -s -j"$(nproc)" >/dev/null && make -s install >/dev/null)
touch "$stamp"
log "installed Citus $version into $("$pg_config" --pkglibdir)"
