#!/usr/bin/env bash
# Install the wheels kept in .whl/ (gitignored) into TARGET_DIR, offline, without dependency
# resolution: for the GPU machine, which reaches no registry and lacks kernel_tuner, optuna and
# openai (and their dependencies that its image does not already have).
#
#   bash tools/install_wheels.sh /tmp/site && export PYTHONPATH=/tmp/site:$PWD
#
# .whl/ holds binary or pure wheels for CPython 3.12, manylinux x86_64, fetched on a machine with
# a registry by `pip download --no-deps --only-binary=:all: --python-version 3.12 --platform
# manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64
# --implementation cp -d .whl NAME==VERSION`.
set -euo pipefail
target=${1:?usage: tools/install_wheels.sh TARGET_DIR}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
shopt -s nullglob
wheels=("$root"/.whl/*.whl)
if [ ${#wheels[@]} -eq 0 ]; then
    echo "install_wheels: no wheels in $root/.whl" >&2
    exit 1
fi
mkdir -p "$target"
if python3 -m pip --version >/dev/null 2>&1; then
    python3 -m pip install --quiet --disable-pip-version-check --no-index --no-deps \
        --upgrade --target "$target" "${wheels[@]}"
else  # no pip: a wheel is a zip archive laid out for site-packages
    python3 -c 'import sys, zipfile; [zipfile.ZipFile(w).extractall(sys.argv[1]) for w in sys.argv[2:]]' \
        "$target" "${wheels[@]}"
fi
echo "install_wheels: ${#wheels[@]} wheels into $target:"
for dist in "$target"/*.dist-info; do
    name=$(basename "$dist" .dist-info)
    echo "  ${name%-*} ${name##*-}"
done
