#!/usr/bin/env bash
# Installs the in-database Python package (plpython/agent_memory_db) and its pinned dependencies for
# Debian's /usr/bin/python3, the interpreter PL/Python runs, into one versioned directory that the
# extension's functions put on sys.path. The system's site-packages is not touched.
# Dependencies are reinstalled only when the requirement files change; the package itself is
# replaced on every run. Each step writes beside the target and renames, so a failure leaves the
# previous install whole.
set -euo pipefail
export PIP_ROOT_USER_ACTION=ignore

target=${1:?usage: install_python.sh TARGET_DIR}
root=$(cd "$(dirname "$0")/../.." && pwd)
python=/usr/bin/python3
reqs=("$root/plpython/requirements.txt" "$root/plpython/requirements-no-deps.txt")
want=$(cat "${reqs[@]}" | sha256sum | cut -d' ' -f1)
stamp=$target/.requirements-sha256

if ! [ -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "==> installing the in-database Python dependencies into $target"
  fresh=$target.new.$$
  rm -rf "$fresh"
  "$python" -m pip install -q --disable-pip-version-check --no-warn-script-location \
    --target "$fresh" -r "$root/plpython/requirements.txt"
  "$python" -m pip install -q --disable-pip-version-check --no-warn-script-location \
    --target "$fresh" --no-deps -r "$root/plpython/requirements-no-deps.txt"
  echo "$want" > "$fresh/.requirements-sha256"
  rm -rf "$target.old"
  [ -d "$target" ] && mv "$target" "$target.old"
  mv "$fresh" "$target"
  rm -rf "$target.old"
fi

package=$target/agent_memory_db
rm -rf "$package.new"
cp -r "$root/plpython/agent_memory_db" "$package.new"
find "$package.new" -name __pycache__ -prune -exec rm -rf {} +
rm -rf "$package.old"
[ -d "$package" ] && mv "$package" "$package.old"
mv "$package.new" "$package"
rm -rf "$package.old"
chmod -R a+rX "$target"
# The model files must be there and intact before the server uses them.
PYTHONPATH=$target "$python" -c 'from agent_memory_db.embedder import model_files; model_files()'
