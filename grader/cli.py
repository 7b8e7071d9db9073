"""The `grade` command line. Each command is a thin wrapper around a library function.

Exit codes: 0 all passed · 1 something failed · 2 usage error · 3 internal grader error.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click

from grader import __version__, workspace
from grader.catalog import UnknownExercise, load_catalog

USAGE, INTERNAL = 2, 3


def fail(message: str, code: int = USAGE):
    click.echo(f"grade: {message}", err=True)
    sys.exit(code)


def lookup(key: str):
    try:
        return load_catalog().get(key)
    except UnknownExercise as exc:
        fail(str(exc))


def current_workspace(required: bool = False):
    try:
        ws = workspace.find()
    except workspace.WorkspaceError as exc:
        fail(str(exc))
    if ws is None and required:
        fail("not inside an attention-kit workspace: create one with `grade init my-attention && cd my-attention`, "
             "or grade a file directly with `grade exercise N path/to/file.py`")
    return ws


def main() -> None:
    """Entry point: run the CLI, then leave without tearing down torch (which takes ~0.5 s)."""
    code = 0
    try:
        cli.main(prog_name="grade")
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if not isinstance(exc.code, (int, type(None))):
            click.echo(exc.code, err=True)
    except Exception as exc:  # a bug in the grader: one line, exit 3, never a traceback
        click.echo(f"grade: internal grader error, please report it: {type(exc).__name__}: {exc}", err=True)
        code = INTERNAL
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="attention-kit")
def cli():
    """attention-kit: learn, drill and grade the attention mechanism of Transformers.

    Start with `grade init my-attention && cd my-attention`, edit exercises/01_self_attention.py,
    then run `grade exercise 1`.
    """


@cli.command()
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
def init(directory):
    """Create a fresh workspace in DIRECTORY with every exercise skeleton."""
    try:
        ws = workspace.create(directory, load_catalog())
    except workspace.WorkspaceError as exc:
        fail(str(exc))
    first = load_catalog().exercises[0]
    click.echo(f"Created workspace {ws.root}\nNext: cd {directory} && edit exercises/{first.file}, then run `grade exercise {first.number}`.")


@cli.command("list")
def list_exercises():
    """List the exercises with your progress in this workspace."""
    from rich.table import Table

    from grader.render import console

    ws = current_workspace()
    table = Table("#", "slug", "title", "status", box=None, pad_edge=False)
    for ex in load_catalog().exercises:
        if ws is None:
            status = "-"
        elif ex.number in ws.passed:
            status = "[green]✓ passed[/]"
        elif ws.file_for(ex).exists() and ws.file_for(ex).read_text(encoding="utf-8").split() != ex.skeleton_path.read_text(encoding="utf-8").split():
            status = "[yellow]in progress[/]"
        else:
            status = "not started"
        table.add_row(str(ex.number), ex.slug, ex.title, status)
    out = console()
    out.print(table)
    if ws is None:
        out.print("\n(not in a workspace: `grade init DIR` makes one and tracks your progress)")


def _grade_one(ex, path: Path | None, *, as_json: bool, device: str, verbose: bool, timeout: float):
    """Grade one exercise and print the verdict; returns the exit code."""
    from grader.render import console, verdict_text
    from grader.runner import DeviceUnavailable, InternalError, grade
    from grader.sandbox import Limits

    ws = current_workspace(required=path is None)
    path = path or ws.file_for(ex)
    if not path.is_file():
        fail(f"no such file: {path}" + (" (run `grade reset %d` to restore it)" % ex.number if ws and ws.owns(path, ex) else ""))
    try:
        verdict = grade(exercise=ex, path=path, device=device, limits=Limits(wall_s=timeout))
    except DeviceUnavailable as exc:
        fail(str(exc))
    except InternalError as exc:
        fail(f"internal grader error, please report it: {exc}", INTERNAL)
    if ws is not None and ws.owns(path, ex):
        ws.record(ex, verdict.passed)
    if as_json:
        click.echo(json.dumps(verdict.to_json(), ensure_ascii=False))
    else:
        shown = str(path)
        arg = "" if ws is not None and ws.owns(path, ex) else f" {shown}"
        console().print(verdict_text(verdict, path=shown, path_arg=arg, verbose=verbose))
    return 0 if verdict.passed else 1


@cli.command()
@click.argument("exercise")
@click.argument("path", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document (schema_version 1) and nothing else.")
@click.option("--device", type=click.Choice(["auto", "cpu", "cuda"]), default="auto", show_default=True,
              help="Where to run the suites; auto uses CUDA when PyTorch sees a GPU.")
@click.option("--verbose", "-v", is_flag=True, help="List every test and show what your code printed.")
@click.option("--timeout", type=click.FloatRange(1, 3600), default=30.0, show_default=True,
              help="Wall-clock seconds the submission may use in all.")
def exercise(exercise, path, as_json, device, verbose, timeout):
    """Grade EXERCISE (number or slug). PATH defaults to the workspace's file for it."""
    ex = lookup(exercise)
    sys.exit(_grade_one(ex, path, as_json=as_json, device=device, verbose=verbose, timeout=timeout))


@cli.command("all")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document with every verdict.")
@click.option("--device", type=click.Choice(["auto", "cpu", "cuda"]), default="auto", show_default=True)
@click.option("--timeout", type=click.FloatRange(1, 3600), default=30.0, show_default=True)
def grade_all(as_json, device, timeout):
    """Grade every exercise in this workspace and summarise."""
    from grader.render import console
    from grader.runner import DeviceUnavailable, InternalError, grade
    from grader.sandbox import Limits

    ws = current_workspace(required=True)
    verdicts = []
    for ex in load_catalog().exercises:
        path = ws.file_for(ex)
        if not path.is_file():
            fail(f"no such file: {path} (run `grade reset {ex.number}` to restore it)")
        try:
            v = grade(exercise=ex, path=path, device=device, limits=Limits(wall_s=timeout))
        except DeviceUnavailable as exc:
            fail(str(exc))
        except InternalError as exc:
            fail(f"internal grader error, please report it: {exc}", INTERNAL)
        ws.record(ex, v.passed)
        verdicts.append(v)
    if as_json:
        click.echo(json.dumps({"schema_version": 1, "results": [v.to_json() for v in verdicts]}, ensure_ascii=False))
    else:
        out = console()
        for v in verdicts:
            mark = "[green]✓[/]" if v.passed else ("[yellow]○[/]" if v.state == "not_started" else "[red]✗[/]")
            why = "" if v.passed or not v.diagnoses else f"  {v.diagnoses[0].title}"
            out.print(f"{mark} {v.exercise} {v.slug:<22} {v.score:>3}/{v.max_score:<3}{why}")
        out.print(f"\n{sum(v.passed for v in verdicts)} of {len(verdicts)} exercises passed.")
    sys.exit(0 if all(v.passed for v in verdicts) else 1)


@cli.command()
@click.argument("exercise")
@click.option("--yes", is_flag=True, help="Do not ask before overwriting your file.")
def reset(exercise, yes):
    """Restore EXERCISE's file in this workspace to the original skeleton."""
    ex = lookup(exercise)
    ws = current_workspace(required=True)
    if not yes and ws.file_for(ex).exists() and sys.stdin.isatty():
        click.confirm(f"Overwrite {ws.file_for(ex)} with the skeleton?", abort=True)
    path = workspace.reset(ws, ex)
    click.echo(f"Restored {path} to the skeleton.")


@cli.command()
@click.argument("exercise")
@click.option("--level", type=click.IntRange(1), help="Show this hint level instead of the next one.")
def hint(exercise, level):
    """Show the next hint for EXERCISE (hints escalate each time you ask)."""
    ex = lookup(exercise)
    ws = current_workspace()
    if level is None:
        level = min((ws.hint_level.get(ex.number, 0) if ws else 0) + 1, len(ex.hints))
    if level > len(ex.hints):
        fail(f"exercise {ex.number} has {len(ex.hints)} hints")
    if ws is not None:
        ws.hint_level[ex.number] = max(level, ws.hint_level.get(ex.number, 0))
        ws.save()
    click.echo(f"Hint {level}/{len(ex.hints)} for exercise {ex.number} ({ex.slug}):\n  {ex.hints[level - 1]}")
    if level < len(ex.hints):
        click.echo(f"Run `grade hint {ex.number}` again for a more specific one.")


@cli.command()
@click.argument("exercise")
@click.option("--force", is_flag=True, help="Show it even though you have not passed the exercise.")
def solution(exercise, force):
    """Show the reference solution for EXERCISE once you have passed it."""
    ex = lookup(exercise)
    ws = current_workspace()
    if not force and (ws is None or ex.number not in ws.passed):
        fail(f"pass exercise {ex.number} first (or use --force): solutions are more useful after your own attempt")
    click.echo(ex.solution_path.read_text(encoding="utf-8"), nl=False)


@cli.command()
@click.argument("target", required=False)
@click.option("--lang", help="en or zh; default from the locale (LANG=zh_CN.UTF-8 gives zh).")
@click.option("--format", "fmt", type=click.Choice(["term", "md", "html"]), default="term", show_default=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Write to FILE instead of stdout.")
@click.option("--list", "list_only", is_flag=True, help="List the topics.")
def explain(target, lang, fmt, output, list_only):
    """Q&A explainers for exercise N (all its topics) or one TOPIC, with live numbers and heat maps."""
    from grader.explain import ExplainError, list_topics, render_explainer

    try:
        if list_only or target is None:
            for topic, title in list_topics(lang):
                click.echo(f"{topic:<16} {title}")
            return
        color = fmt == "term" and output is None and sys.stdout.isatty() and "NO_COLOR" not in os.environ
        text = render_explainer(target, lang=lang, fmt=fmt, color=color)
    except ExplainError as exc:
        fail(str(exc))
    if output is None:
        click.echo(text)
    else:
        output.write_text(text, encoding="utf-8")
        click.echo(f"Wrote {output}")


@cli.command()
@click.argument("exercise", required=False)
@click.option("--timeout", type=click.FloatRange(1, 3600), default=30.0, show_default=True)
def watch(exercise, timeout):
    """Re-grade on every save (the first unfinished exercise, or EXERCISE); keys h e n l q."""
    from grader import watch as watching
    from grader.render import console

    ws = current_workspace(required=True)
    watching.run(ws=ws, exercise=lookup(exercise) if exercise else None, console=console(), timeout=timeout)
