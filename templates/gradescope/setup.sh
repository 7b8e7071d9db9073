#!/usr/bin/env bash
# Gradescope runs this once, as root, while it builds the autograder image (apt-get update has run).
# It installs Python >= 3.11, CPU-only torch and the attention-kit wheel into $ROOT/kit-venv.
set -euo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
SOURCE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

PY=""
for candidate in python3.13 python3.12 python3.11; do
    if command -v "$candidate" >/dev/null 2>&1; then PY="$candidate"; break; fi
done
if [ -z "$PY" ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3.11 python3.11-venv
    PY=python3.11
fi
"$PY" -m venv "$ROOT/kit-venv" || {
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$PY-venv"
    "$PY" -m venv "$ROOT/kit-venv"
}
"$ROOT/kit-venv/bin/python" -m pip install --quiet --upgrade pip
"$ROOT/kit-venv/bin/python" -m pip install --quiet "{{ torch_spec }}" --index-url https://download.pytorch.org/whl/cpu
"$ROOT/kit-venv/bin/python" -m pip install --quiet "$SOURCE/{{ wheel }}"
"$ROOT/kit-venv/bin/grade" --version
