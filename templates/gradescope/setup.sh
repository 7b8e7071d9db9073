#!/usr/bin/env bash
# Gradescope runs this once, as root, while it builds the autograder image (apt-get update has run).
# It installs Python >= 3.11, CPU-only torch and the attention-kit wheel into $ROOT/kit-venv.
# `setup.sh --print-python` only prints the interpreter it would use.
set -euo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
SOURCE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TORCH_INDEX="${ATTENTION_KIT_TORCH_INDEX:-https://download.pytorch.org/whl/cpu}"

runs() {  # the interpreter starts, is >= 3.11 and can make a venv (a pyenv shim or a stub cannot)
    "$1" -c 'import sys, venv; sys.exit(sys.version_info < (3, 11))' >/dev/null 2>&1
}

PY=""
for candidate in python3.13 python3.12 python3.11 python3; do
    if command -v "$candidate" >/dev/null 2>&1 && runs "$candidate"; then PY="$(command -v "$candidate")"; break; fi
done
if [ "${1:-}" = "--print-python" ]; then echo "${PY:-none}"; exit 0; fi
if [ -z "$PY" ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3.11 python3.11-venv
    PY=python3.11
    runs "$PY" || { echo "setup.sh: no working Python >= 3.11, even after apt-get install" >&2; exit 1; }
fi
"$PY" -m venv "$ROOT/kit-venv" || {
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$(basename "$PY")-venv"
    "$PY" -m venv "$ROOT/kit-venv"
}
"$ROOT/kit-venv/bin/python" -m pip install --quiet "{{ torch_spec }}" --index-url "$TORCH_INDEX"
"$ROOT/kit-venv/bin/python" -m pip install --quiet "$SOURCE/{{ wheel }}"
# SECURITY.md, tier 2 (root without CAP_SYS_ADMIN): libseccomp for the worker's filter; Python readable by the
# workers' own uids (they import lazily after dropping theirs); readable by root only, a second wall behind
# Landlock: the whole installed package (suites, checks, grader/_kit with the reference solutions) and this
# bundle's folder (the kit's wheel, which holds the solutions too, the exercise pack if any, the settings).
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libseccomp2 >/dev/null 2>&1 || echo "setup.sh: could not install libseccomp2" >&2
chmod -R a+rX "$ROOT/kit-venv"  # (a system Python under /usr is readable already; the self-check below says if not)
# -I: the installed package, never a grader/ folder in the directory setup.sh happens to be run from
kit="$("$ROOT/kit-venv/bin/python" -I -c 'import grader, pathlib; print(pathlib.Path(grader.__file__).resolve().parent)')"
chmod -R go-rwx "$kit" "$SOURCE"
"$ROOT/kit-venv/bin/grade" --version
# The build fails unless the sandbox holds here as SECURITY.md's table says for this platform (tier 1 or 2).
check="$("$ROOT/kit-venv/bin/python" -m grader.sandbox)" || { echo "$check" >&2; echo "setup.sh: the sandbox self-check failed" >&2; exit 1; }
echo "$check" | grep -Eq "tier [12]\b" || { echo "$check" >&2; echo "setup.sh: the sandbox is weaker than tier 2 here" >&2; exit 1; }
