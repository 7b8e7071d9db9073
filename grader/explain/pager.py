"""The pager for explainers (`grade explain`, `e` in watch), with git's defaults.

$PAGER when set, else `less`. When LESS is unset it is set to FRX, as git does: R shows the colours,
F quits at once when the text fits on one screen, X leaves the text on the screen afterwards. A
user's own PAGER and LESS are kept as they are; colour is sent only to a pager that can show it.
"""
from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from dataclasses import dataclass, field


@dataclass
class Pager:
    argv: list[str]
    env: dict = field(default_factory=dict)
    color: bool = True  # whether the pager shows ANSI colours (less only with -R/-r)


def less_shows_colour(less_env: str, params: list[str]) -> bool:
    """Whether less runs with -R/-r (raw control characters): from LESS (whose options need no dash:
    LESS=FRX) or from its own arguments."""
    try:
        env_tokens = shlex.split(less_env)
    except ValueError:
        env_tokens = less_env.split()
    clusters = [t for t in env_tokens if not t.startswith("--")] + [t for t in params if t[:1] == "-" and t[:2] != "--"]
    longs = [t.lower() for t in env_tokens + params if t.startswith("--")]
    return "--raw-control-chars" in longs or any("r" in t.lstrip("-").lower() for t in clusters)


def find_pager(environ=None) -> Pager | None:
    """What runs the explainers, or None where nothing should page (no pager, a dumb terminal)."""
    environ = os.environ if environ is None else environ
    env = dict(environ)
    env.setdefault("LESS", "FRX")  # git's default: a user's LESS wins
    env.setdefault("LV", "-c")
    try:
        argv = shlex.split(environ.get("PAGER", ""))
    except ValueError:
        argv = []
    if not argv:
        if environ.get("TERM") in ("dumb", "emacs"):
            return None
        argv = ["less"]
    program = shutil.which(argv[0], path=environ.get("PATH"))
    if program is None:
        return None
    if os.path.basename(argv[0]) == "less":
        return Pager([program, *argv[1:]], env, less_shows_colour(env["LESS"], argv[1:]))
    return Pager([program, *argv[1:]], env, True)


def page(text: str, pager: Pager | None) -> None:
    """Send text through the pager (waiting for it to end), or print it where there is none."""
    if pager is None:
        print(text, flush=True)
        return
    proc = subprocess.Popen(pager.argv, stdin=subprocess.PIPE, env=pager.env, text=True, errors="replace")
    try:
        proc.stdin.write(text if text.endswith("\n") else text + "\n")
        proc.stdin.close()
    except BrokenPipeError:  # the learner quit before reading it all
        pass
    while True:
        try:
            proc.wait()
            break
        except KeyboardInterrupt:  # less handles Ctrl-C itself: wait for it to end
            pass
