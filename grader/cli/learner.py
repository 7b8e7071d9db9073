"""The learner's commands: a workspace (init, list, reset), grading (exercise, all, watch), help when stuck
(hint, solution, explain), practice (interview, progress)."""
from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import click

from grader import history, workspace
from grader.catalog import LEVELS, load_catalog
from grader.cli.options import (DEVICE, INTERNAL, OWN_FILES, TIMEOUT, WEAK_OK, WEAK_SANDBOX, check_sandbox,
                                current_exercise, current_workspace, environment_error, fail, pack_option,
                                suggest)
from grader.params import EXERCISE


@click.command()
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@pack_option
def init(directory):
    """Create a fresh workspace in DIRECTORY with every exercise skeleton."""
    try:
        ws = workspace.create(directory, load_catalog())
    except workspace.WorkspaceError as exc:
        fail(str(exc))
    first = load_catalog().exercises[0]
    click.echo(f"Created workspace {ws.root}\nNext: cd {directory} && edit exercises/{first.file}, then run `grade exercise {first.number}`.")


@click.command("list")
@pack_option
def list_exercises():
    """List the exercises with your progress in this workspace."""
    from grader.render import console, progress_table

    ws = current_workspace()
    out = console()
    out.print(progress_table(ws, load_catalog()))
    if ws is None:
        out.print("\n(not in a workspace: `grade init DIR` makes one and tracks your progress)")


def _grade(ex, path: Path, *, device: str, timeout: float, policy_file: Path | None = None, allow_weak: bool = False,
           offer: bool = False, attention: bool = False):
    """runner.grade, with its usage, internal and weak-sandbox errors turned into one-line exits 2, 3 and 4."""
    from grader.policy import PolicyError
    from grader.runner import DeviceUnavailable, InternalError, WeakSandbox, grade
    from grader.sandbox import Limits

    try:
        return grade(exercise=ex, path=path, device=device, limits=Limits(time_s=timeout), policy_file=policy_file,
                     allow_weak_sandbox=allow_weak, capture_attention=attention)
    except (DeviceUnavailable, PolicyError) as exc:
        fail(str(exc))
    except WeakSandbox as exc:
        fail(str(exc) + (OWN_FILES if offer else ""), WEAK_SANDBOX)
    except InternalError as exc:
        fail(f"internal grader error, please report it: {exc}", INTERNAL)


def _record(ws, ex, verdict) -> str | None:
    """workspace.remember; the one-line problem when the workspace cannot be saved (a read-only folder)."""
    try:
        workspace.remember(ws, ex, verdict)
    except OSError as exc:
        return f"your progress was not saved: {environment_error(exc)}"
    return None


def _grade_one(ex, path: Path | None, *, as_json: bool, device: str, verbose: bool, timeout: float,
               policy_file: Path | None = None, repro: bool = False, allow_weak: bool = False, html: bool = False,
               output: Path | None = None):
    """Grade one exercise and print the verdict (with html, also write the learner's page); returns the exit code."""
    from grader.render import console, repro_text, show, verdict_text

    if output is not None and not html:
        fail("-o/--output names the HTML report: add --html")
    ws = current_workspace(required=path is None)
    path = path or ws.file_for(ex)
    if not path.is_file():
        fail(f"no such file: {path}" + (f" (run `{suggest('reset', ex.number)}` to restore it)" if ws and ws.owns(path, ex) else ""))
    if html and output is not None and output.resolve() == path.resolve():
        fail(f"-o {output} is the file being graded: name another file for the report")
    verdict = _grade(ex, path, device=device, timeout=timeout, policy_file=policy_file, allow_weak=allow_weak, offer=True,
                     attention=html)
    owned = ws is not None and ws.owns(path, ex)
    if not owned:
        workspace.remember(None, ex, verdict)  # outside a workspace only the hints, which never raise
    # a person practising, not a script (--json: CI, benchmarks, an instructor's tooling), goes into the history
    first_pass, noted = history.record_grade(ex, verdict) if not as_json else (False, None)
    if as_json:
        click.echo(json.dumps(verdict.to_json(), ensure_ascii=False))
    elif repro:
        click.echo(repro_text(verdict, ex=ex, path=path))
    else:
        out = console()
        upcoming = ws.next_exercise(load_catalog(), ex) if owned else None
        show(out, verdict_text(verdict, path=str(path), path_arg="" if owned else f" {path}", verbose=verbose,
                               upcoming=upcoming))
        if first_pass:  # once per exercise: what an interviewer would ask next
            _offer(out, ex)
    if noted:
        click.echo(f"grade: warning: {noted}", err=True)
    if html:
        from grader.learner_report import write_file_report

        report = write_file_report(ex=ex, verdict=verdict, path=path, output=output)
        click.echo(f"Report: {report}", err=as_json)
    problem = _record(ws, ex, verdict) if owned else None
    if problem:  # shown after the verdict, which was computed all the same
        fail(problem)
    return 0 if verdict.passed else 1


def _offer(out, ex) -> None:
    """After a first pass: the follow-up questions an interviewer would ask next (in the locale's language)."""
    from grader.explain import pick_lang
    from grader.interview import offer
    from grader.render import show

    text = offer(ex, pick_lang(None))
    if text:
        show(out, "\n" + text)


@click.command()
@click.argument("exercise", type=EXERCISE)
@click.argument("path", required=False, type=click.Path(dir_okay=False, path_type=Path))
@pack_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document (schema_version 1) and nothing else.")
@DEVICE
@click.option("--verbose", "-v", is_flag=True, help="List every test and show what your code printed.")
@TIMEOUT
@click.option("--policy", "policy_file", type=click.Path(dir_okay=False, path_type=Path),
              help="An instructor's policy TOML extending the kit's (allowed imports, denied names; see SECURITY.md).")
@click.option("--repro", is_flag=True, help="Print a short runnable script reproducing the first failing check.")
@click.option("--html", is_flag=True, help="Also write an HTML report: verdict, mistake, evidence, your code with the "
                                          "line marked, heat maps, hint (default: NAME.report.html beside the file).")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Where --html writes the report.")
@WEAK_OK
def exercise(exercise, path, as_json, device, verbose, timeout, policy_file, repro, html, output, allow_weak):
    """Grade EXERCISE (number or slug). PATH defaults to the workspace's file for it."""
    sys.exit(_grade_one(exercise, path, as_json=as_json, device=device, verbose=verbose, timeout=timeout,
                        policy_file=policy_file, repro=repro, allow_weak=allow_weak, html=html, output=output))


@click.command("all")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document with every verdict.")
@DEVICE
@TIMEOUT
@pack_option
def grade_all(as_json, device, timeout):
    """Grade every exercise in this workspace and summarise."""
    from grader.render import all_lines, console

    ws = current_workspace(required=True)
    verdicts, problem = [], None
    for ex in load_catalog().exercises:
        path = ws.file_for(ex)
        if not path.is_file():
            fail(f"no such file: {path} (run `{suggest('reset', ex.number)}` to restore it)")
        v = _grade(ex, path, device=device, timeout=timeout)
        problem = _record(ws, ex, v) or problem
        noted = history.record_grade(ex, v)[1]
        if noted:
            click.echo(f"grade: warning: {noted}", err=True)
        verdicts.append(v)
    if as_json:
        click.echo(json.dumps({"schema_version": 1, "results": [v.to_json() for v in verdicts]}, ensure_ascii=False))
    else:
        out = console()
        for line in all_lines(verdicts):
            out.print(line)
    if problem:
        fail(problem)
    sys.exit(0 if all(v.passed for v in verdicts) else 1)


@click.command()
@click.argument("exercise", type=EXERCISE)
@click.option("--yes", is_flag=True, help="Do not ask before overwriting your file (needed without a terminal).")
@pack_option
def reset(exercise, yes):
    """Restore EXERCISE's file in this workspace to the original skeleton.

    Your version is first copied to .attention-kit-backups/ in the workspace. Without a terminal to
    ask on (a notebook cell, an IDE task) it refuses unless --yes: exit 2.
    """
    ws = current_workspace(required=True)
    target = ws.file_for(exercise)
    if not yes and target.exists():
        if not sys.stdin.isatty():
            fail(f"not resetting {target}: no terminal to confirm on; run `{suggest('reset', exercise.number, '--yes')}` "
                 f"(your version is backed up to {workspace.BACKUPS}/ first)")
        click.confirm(f"Overwrite {target} with the skeleton (your version is backed up first)?", abort=True)
    path, backup = workspace.reset(ws, exercise)
    kept = f" Your version is in {backup}." if backup else ""
    click.echo(f"Restored {path} to the skeleton.{kept}")


@click.command()
@click.argument("exercise", required=False, type=EXERCISE)
@click.option("--level", type=click.IntRange(1), help="Show this hint level instead of the next one.")
@pack_option
def hint(exercise, level):
    """Show the next hint for EXERCISE (hints escalate each time you ask, in a workspace or not).

    Without EXERCISE, in a workspace: the exercise you are working on (graded last, unless passed)."""
    from rich.markup import escape

    from grader.render import console, hint_text, show

    ex = exercise or current_exercise("hint")
    hints = workspace.Hints(current_workspace())
    mistake = None if level else hints.pending(ex)
    if mistake is not None:  # the last grade named the mistake: its own hint first
        from grader.diagnosis import make
        from grader.pack import exercise_module

        exercise_module(ex)  # a pack's own mistakes are named by its DIAGNOSES
        d = make(mistake)
        show(console(), escape(f"Your last grade of exercise {ex.number} found: {d.title} ({d.id}).\n  {d.hint}\n"
                               f"Run `{suggest('hint', ex.number)}` again for the exercise's own hints."))
        try:
            hints.shown(ex)
        except OSError as exc:
            fail(f"the hint was not recorded: {environment_error(exc)}")
        return
    level = level or hints.next(ex)
    if level > len(ex.hints):
        fail(f"exercise {ex.number} has {len(ex.hints)} hints")
    more = f"\nRun `{suggest('hint', ex.number)}` again for a more specific one." if level < len(ex.hints) else ""
    show(console(), escape(hint_text(ex, level) + more))
    try:
        hints.mark(ex, level)
    except OSError as exc:
        fail(f"the hint was not recorded: {environment_error(exc)}")


@click.command()
@click.argument("exercise", required=False, type=EXERCISE)
@click.argument("path", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--force", is_flag=True, help="Show it even though you have not passed the exercise.")
@click.option("--diff", is_flag=True, help="Your code (PATH, else the workspace's file) beside the reference: side by "
                                          "side when the terminal is wide enough, else a unified diff.")
@pack_option
def solution(exercise, path, force, diff):
    """Show the reference solution for EXERCISE once you have passed it.

    Without EXERCISE, in a workspace: the exercise you graded last. With --diff, your code beside it
    (coloured on a terminal; a plain unified diff when piped)."""
    if path is not None and not diff:
        fail("PATH is the file to compare with the reference: add --diff")
    ex = exercise or current_exercise("solution", graded_last=True)
    ws = current_workspace()
    if not force and (ws is None or ex.number not in ws.passed):
        fail(f"pass exercise {ex.number} first (or use --force): solutions are more useful after your own attempt")
    if not diff:
        click.echo(workspace.solution_text(ex), nl=False)
        return
    click.echo(_solution_diff(ex, path or (ws.file_for(ex) if ws else None)), nl=False)


def _solution_diff(ex, path: Path | None) -> str:
    from grader.diffview import diff_file
    from grader.source import Unreadable

    if path is None:
        fail(f"which file? `grade solution {ex.number} PATH --diff` (or run it in your workspace)")
    if not path.is_file():
        fail(f"no such file: {path}")
    terminal = sys.stdout.isatty()
    try:
        return diff_file(path, ex, width=shutil.get_terminal_size((80, 24)).columns if terminal else None,
                         color=terminal and "NO_COLOR" not in os.environ)
    except Unreadable as exc:
        fail(str(exc))


@click.command()
@click.argument("target", required=False)
@click.option("--lang", help="en or zh; default from the locale (LANG=zh_CN.UTF-8 gives zh).")
@click.option("--format", "fmt", type=click.Choice(["term", "md", "html"]), default="term", show_default=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Write to FILE instead of stdout.")
@click.option("--list", "list_only", is_flag=True, help="List the topics.")
@click.option("--pager/--no-pager", default=None, help="Page long output (default: when stdout is a terminal).")
@pack_option
def explain(target, lang, fmt, output, list_only, pager):
    """Q&A explainers for exercise N (all its topics) or one TOPIC, with live numbers and heat maps.

    Without a TARGET: in a workspace, the exercise you are working on; elsewhere, the list of topics."""
    from grader.explain import ExplainError, list_topics, render_explainer
    from grader.explain.pager import find_pager, page as page_text

    if target is None and not list_only and (ws := current_workspace()) is not None:
        target = str(ws.current(load_catalog()).number)
    try:
        if list_only or target is None:
            for topic, title in list_topics(lang):
                click.echo(f"{topic:<16} {title}")
            return
        paging = output is None and (pager if pager is not None else (fmt == "term" and sys.stdout.isatty()))
        through = find_pager() if paging and sys.stdout.isatty() else None
        color = (fmt == "term" and output is None and sys.stdout.isatty() and "NO_COLOR" not in os.environ
                 and (through is None or through.color))
        columns = shutil.get_terminal_size((80, 24)).columns if output is None else 78
        text = render_explainer(target, lang=lang, fmt=fmt, color=color, width=min(columns, 100))
    except ExplainError as exc:
        fail(str(exc))
    if output is not None:
        output.write_text(text, encoding="utf-8")
        click.echo(f"Wrote {output}")
    elif through is not None:
        sys.stdout.flush()
        page_text(text, through)
    else:
        click.echo(text)


@click.command()
@click.argument("exercise", required=False, type=EXERCISE)
@TIMEOUT
@WEAK_OK
@pack_option
def watch(exercise, timeout, allow_weak):
    """Re-grade on every save (EXERCISE, else the one you are working on); keys h e n l q."""
    from grader import watch as watching
    from grader.render import console

    ws = current_workspace(required=True)
    if not allow_weak:
        check_sandbox(offer=True)
    watching.run(ws=ws, exercise=exercise, console=console(), timeout=timeout, allow_weak=allow_weak)


@click.command()
@click.argument("exercise", required=False, type=EXERCISE)
@pack_option
@click.option("--topic", help="Draw among the exercises with this explainer topic (`grade explain --list`).")
@click.option("--level", type=click.Choice(LEVELS), help="Draw among the exercises of this level (info.toml's level).")
@click.option("--seed", type=int, help="Draw with this seed (the same options and seed draw the same exercise).")
@click.option("--minutes", type=click.FloatRange(0.1, 600), default=30, show_default=True, help="The time limit.")
@click.option("--hints", is_flag=True, help="Allow hints during the interview (h); each costs points, said up front.")
@click.option("--dir", "directory", type=click.Path(file_okay=False, path_type=Path),
              help="Write the page here (default: interview/ in the workspace).")
@click.option("--questions", "questions_only", is_flag=True,
              help="Only the follow-up questions of EXERCISE, answers one key at a time (no interview).")
@click.option("--reveal", is_flag=True, help="Print the follow-up questions' answers at once.")
@click.option("--lang", help="Language of the follow-up questions: en or zh (default from the locale).")
@TIMEOUT
@WEAK_OK
def interview(exercise, topic, level, seed, minutes, hints, directory, questions_only, reveal, lang, timeout, allow_weak):
    """A timed mock interview: EXERCISE (else one drawn, by --topic/--level) on a blank page with its
    contract, graded on every save, no hints (or --hints at a cost); ends on a pass, at the time
    limit or on q with a scorecard, then the follow-up questions an interviewer asks.

    Exit codes: 0 passed (or --questions) · 1 not passed · 2 usage error · 4 refused: weak sandbox.
    """
    from grader.explain import ExplainError, pick_lang
    from grader.interview import PickError, follow_ups, run
    from grader.render import console

    try:
        language = pick_lang(lang)
    except ExplainError as exc:
        fail(str(exc))
    out = console()
    if questions_only:
        if exercise is None:
            fail("which exercise? e.g. `grade interview 3 --questions`")
        follow_ups(ex=exercise, lang=language, console=out, stdin=sys.stdin, reveal=reveal)
        return
    ws = current_workspace(required=directory is None)
    folder = directory or ws.root / "interview"
    if not allow_weak:
        check_sandbox(offer=True)
    try:
        passed, problem = run(catalog=load_catalog(), exercise=exercise, topic=topic, level=level, seed=seed,
                              folder=folder, backups=(ws.root if directory is None else folder) / workspace.BACKUPS,
                              minutes=minutes, hints=hints, timeout=timeout, allow_weak=allow_weak, lang=language,
                              reveal=reveal, console=out, stdin=sys.stdin)
    except PickError as exc:
        fail(str(exc))
    if problem:
        click.echo(f"grade: warning: {problem}", err=True)
    sys.exit(0 if passed else 1)


@click.command()
@pack_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document (schema_version 1).")
def progress(as_json):
    """Your history across sessions: per exercise first graded, time to pass, attempts, days practised,
    interview scores; your streak of days in a row. Kept in your data directory ($ATTENTION_KIT_DATA_DIR)."""
    import datetime as dt

    from grader.render import console, environment, show

    store = history.Store()
    past, problem = store.load()
    if problem:
        click.echo(f"grade: warning: {problem}", err=True)
    data = history.summary(past, load_catalog(), dt.date.today())
    if as_json:
        click.echo(json.dumps(data, ensure_ascii=False))
        return
    show(console(), environment().get_template("interview/progress.term.j2").render(d=data, where=str(store.path),
                                                                                     duration=history.duration))


COMMANDS = [init, list_exercises, exercise, grade_all, reset, hint, solution, explain, watch, interview, progress]
