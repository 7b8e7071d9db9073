"""What the commands share: their common options (--pack, --device, --timeout, --allow-weak-sandbox), the
workspace and exercise a command is about, and the one-line failures with their exit codes."""
from __future__ import annotations

from pathlib import Path

import click

from grader import workspace
from grader.catalog import load_catalog
from grader.params import Failure, InternalFailure, WeakSandboxFailure

USAGE, INTERNAL, WEAK_SANDBOX = 2, 3, 4
OWN_FILES = " To grade your own files here anyway: --allow-weak-sandbox."


def fail(message: str, code: int = USAGE):
    """One line on stderr and exit code 2 (usage, environment), 3 (internal) or 4 (a weak sandbox), through click."""
    raise {INTERNAL: InternalFailure, WEAK_SANDBOX: WeakSandboxFailure}.get(code, Failure)(message)


def check_sandbox(offer: bool = False) -> None:
    """Exit 4 with the reason and the fix if workers cannot be isolated here (before anything is graded)."""
    from grader.runner import WeakSandbox, check_sandbox as check

    try:
        check()
    except WeakSandbox as exc:
        fail(str(exc) + (OWN_FILES if offer else ""), WEAK_SANDBOX)


def environment_error(exc: OSError) -> str:
    """One line for an OSError the learner's machine caused (permissions, a read-only or full disk)."""
    where = f" {exc.filename}" if exc.filename else ""
    return f"cannot write{where}: {exc.strerror or exc} (check the folder's permissions and free space)"


PACK_GIVEN = "attention_kit.pack"  # the --pack a command was given, for the commands it suggests next


def suggest(*words) -> str:
    """A command to suggest to the user, carrying the --pack they gave (the environment variable and a workspace's
    pack carry themselves): `grade hint 2 --pack ../relpos-pack`, not the kit's exercise 2."""
    import shlex

    ctx = click.get_current_context(silent=True)
    pack = ctx.meta.get(PACK_GIVEN) if ctx is not None else None
    return " ".join(["grade", *map(str, words), *(["--pack", shlex.quote(str(pack))] if pack else [])])


def _use_pack(ctx, param, value):
    """--pack DIR (or ATTENTION_KIT_PACK): make DIR the default pack, checked now (exit 2 if it is wrong)."""
    from grader.catalog import CatalogError
    from grader.pack import PackError, use_pack

    try:
        if value is not None:
            use_pack(value)
            ctx.meta[PACK_GIVEN] = value
        else:  # in a workspace made from a pack, its pack
            ws = _quiet_workspace()
            if ws is not None and ws.pack is not None:
                where = ws.root / ws.pack  # a handout's pack is relative to it; `grade init --pack`'s absolute
                if not (where / "exercises" / "info.toml").is_file():
                    raise PackError(f"this workspace was made from the pack {where}, which is no longer there: "
                                    "put it back, or give --pack DIR")
                use_pack(where)
        load_catalog()
    except (CatalogError, PackError) as exc:
        raise click.BadParameter(str(exc), ctx=ctx, param=param) from None
    return value


def _quiet_workspace():
    """The workspace here, or None (a damaged one is reported by the command that uses it)."""
    try:
        return workspace.find()
    except workspace.WorkspaceError:
        return None


pack_option = click.option("--pack", type=click.Path(file_okay=False, path_type=Path), envvar="ATTENTION_KIT_PACK",
                           callback=_use_pack, expose_value=False, is_eager=True,
                           help="An exercise pack folder laid out like the kit (default: $ATTENTION_KIT_PACK, else the kit).")
DEVICE = click.option("--device", type=click.Choice(["auto", "cpu", "cuda"]), default="auto", show_default=True,
                      help="Where to run the suites; auto uses CUDA when PyTorch sees a GPU.")
WEAK_OK = click.option("--allow-weak-sandbox", "allow_weak", is_flag=True,
                       help="Grade even where the sandbox cannot keep a submission from the reference or the grader "
                            "(exit 4 otherwise): for your own files only, never someone else's (SECURITY.md).")
TIMEOUT = click.option("--timeout", type=click.FloatRange(1, 3600), default=30.0, show_default=True,
                       help="CPU seconds the submission's own code may use in all, however busy the machine (starting "
                            "the worker is not counted; the wall clock stops it only at 3x this + 10 s).")


def current_workspace(required: bool = False):
    try:
        ws = workspace.find()
    except workspace.WorkspaceError as exc:
        fail(str(exc))
    if ws is None and required:
        fail("not inside an attention-kit workspace: create one with `grade init my-attention && cd my-attention`, "
             "or grade a file directly with `grade exercise N path/to/file.py`")
    return ws


def current_exercise(command: str, *, graded_last: bool = False):
    """The exercise a command without a number is about: the workspace's current one (workspace.Workspace.current),
    or with graded_last the one graded last even if it passed (its solution is what a learner wants next)."""
    ws = current_workspace()
    if ws is None:
        fail(f"which exercise? Give its number, e.g. `grade {command} 1` (without a number, {command} needs a "
             "workspace: it uses the exercise you are working on)")
    catalog = load_catalog()
    last = next((e for e in catalog.exercises if e.number == ws.last), None) if graded_last else None
    return last or ws.current(catalog)
