"""The `grade` command line. Each command is a thin wrapper around a library function.

Exit codes: 0 all passed · 1 something failed · 2 usage error · 3 internal grader error ·
4 refused: the sandbox here cannot keep a submission from the reference or from other submissions.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import click

from grader import __version__, history, workspace
from grader.catalog import LEVELS, UnknownExercise, load_catalog
from grader.pack import PackError
from grader.params import EXERCISE, Failure, InternalFailure, WeakSandboxFailure

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


def _use_pack(ctx, param, value):
    """--pack DIR (or ATTENTION_KIT_PACK): make DIR the default pack, checked now (exit 2 if it is wrong)."""
    from grader.catalog import CatalogError
    from grader.pack import PackError, use_pack

    try:
        if value is not None:
            use_pack(value)
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


def lookup(key: str):
    try:
        return load_catalog().get(key)
    except UnknownExercise as exc:
        fail(str(exc))


def environment_error(exc: OSError) -> str:
    """One line for an OSError the learner's machine caused (permissions, a read-only or full disk)."""
    where = f" {exc.filename}" if exc.filename else ""
    return f"cannot write{where}: {exc.strerror or exc} (check the folder's permissions and free space)"


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


def main() -> None:
    """Entry point: run the CLI, then leave without tearing down torch (which takes ~0.5 s)."""
    os._exit(run())


def run(args: list[str] | None = None) -> int:
    """Run the CLI on args (default: the command line) and return its exit code; every error is one line."""
    code = 0
    try:
        returned = cli.main(args, prog_name="grade", standalone_mode=False)
        code = returned if isinstance(returned, int) else 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if not isinstance(exc.code, (int, type(None))):
            click.echo(exc.code, err=True)
    except getattr(click.exceptions, "NoArgsIsHelpError", ()) as exc:  # a bare `grade`: its help (click >= 8.2)
        click.echo(exc.format_message(), err=True)
        code = exc.exit_code
    except click.ClickException as exc:  # usage (2) and internal (3) errors: one line
        hint = f" (see `{exc.ctx.command_path} --help`)" if isinstance(exc, click.UsageError) and exc.ctx else ""
        click.echo(f"grade: {exc.format_message()}{hint}", err=True)
        code = exc.exit_code
    except click.exceptions.Abort:
        click.echo("grade: aborted", err=True)
        code = 1
    except OSError as exc:  # the machine, not the grader: permissions, a read-only or full disk
        click.echo(f"grade: {environment_error(exc)}", err=True)
        code = USAGE
    except PackError as exc:  # a pack's metadata or its own check code: its author's to fix (file and line), exit 2
        click.echo(f"grade: {exc}", err=True)
        code = USAGE
    except Exception as exc:  # a bug in the grader: one line, exit 3, never a traceback
        click.echo(f"grade: internal grader error, please report it: {type(exc).__name__}: {exc}", err=True)
        code = INTERNAL
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
    return code


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="attention-kit")
def cli():
    """attention-kit: learn, drill and grade the attention mechanism of Transformers.

    Start with `grade init my-attention && cd my-attention`, edit exercises/01_self_attention.py,
    then run `grade exercise 1`.
    """


@cli.command()
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


@cli.command("list")
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
    """Save the outcome in the workspace; the one-line problem when it cannot be saved (a read-only folder)."""
    try:
        ws.record(ex, verdict.passed)
        hints = workspace.Hints(ws)
        if verdict.state == "not_started":
            hints.mark(ex, 1)  # the not-started screen shows hint 1
        hints.note(ex, workspace.named_mistake(verdict))
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
        fail(f"no such file: {path}" + (" (run `grade reset %d` to restore it)" % ex.number if ws and ws.owns(path, ex) else ""))
    if html and output is not None and output.resolve() == path.resolve():
        fail(f"-o {output} is the file being graded: name another file for the report")
    verdict = _grade(ex, path, device=device, timeout=timeout, policy_file=policy_file, allow_weak=allow_weak, offer=True,
                     attention=html)
    owned = ws is not None and ws.owns(path, ex)
    if not owned:
        hints = workspace.Hints(None)
        if verdict.state == "not_started":
            hints.mark(ex, 1)
        hints.note(ex, workspace.named_mistake(verdict))
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
        report = _write_report(ex, verdict, path, output)
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


def _write_report(ex, verdict, path: Path, output: Path | None) -> Path:
    from grader.learner_report import write_report
    from grader.source import Unreadable, read_source

    try:
        source = read_source(path)  # a notebook's lines numbered by cell and line
    except Unreadable:
        source = None
    return write_report(ex=ex, verdict=verdict, source=source, path=path, output=output,
                        following=load_catalog().next_after(ex))


DEVICE = click.option("--device", type=click.Choice(["auto", "cpu", "cuda"]), default="auto", show_default=True,
                      help="Where to run the suites; auto uses CUDA when PyTorch sees a GPU.")
WEAK_OK = click.option("--allow-weak-sandbox", "allow_weak", is_flag=True,
                       help="Grade even where the sandbox cannot keep a submission from the reference or the grader "
                            "(exit 4 otherwise): for your own files only, never someone else's (SECURITY.md).")
TIMEOUT = click.option("--timeout", type=click.FloatRange(1, 3600), default=30.0, show_default=True,
                       help="CPU seconds the submission's own code may use in all, however busy the machine (starting "
                            "the worker is not counted; the wall clock stops it only at 3x this + 10 s).")


@cli.command()
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


@cli.command("all")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document with every verdict.")
@DEVICE
@TIMEOUT
@pack_option
def grade_all(as_json, device, timeout):
    """Grade every exercise in this workspace and summarise."""
    from grader.render import console

    ws = current_workspace(required=True)
    verdicts, problem = [], None
    for ex in load_catalog().exercises:
        path = ws.file_for(ex)
        if not path.is_file():
            fail(f"no such file: {path} (run `grade reset {ex.number}` to restore it)")
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
        for v in verdicts:
            mark = "[green]✓[/]" if v.passed else ("[yellow]○[/]" if v.state == "not_started" else "[red]✗[/]")
            why = "" if v.passed or not v.diagnoses else f"  {v.diagnoses[0].title}"
            out.print(f"{mark} {v.exercise} {v.slug:<22} {v.score:>3}/{v.max_score:<3}{why}")
        out.print(f"\n{sum(v.passed for v in verdicts)} of {len(verdicts)} exercises passed.")
    if problem:
        fail(problem)
    sys.exit(0 if all(v.passed for v in verdicts) else 1)


@cli.command()
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
            fail(f"not resetting {target}: no terminal to confirm on; run `grade reset {exercise.number} --yes` "
                 f"(your version is backed up to {workspace.BACKUPS}/ first)")
        click.confirm(f"Overwrite {target} with the skeleton (your version is backed up first)?", abort=True)
    path, backup = workspace.reset(ws, exercise)
    kept = f" Your version is in {backup}." if backup else ""
    click.echo(f"Restored {path} to the skeleton.{kept}")


@cli.command()
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

        d = make(mistake)
        show(console(), escape(f"Your last grade of exercise {ex.number} found: {d.title} ({d.id}).\n  {d.hint}\n"
                               f"Run `grade hint {ex.number}` again for the exercise's own hints."))
        try:
            hints.shown(ex)
        except OSError as exc:
            fail(f"the hint was not recorded: {environment_error(exc)}")
        return
    level = level or hints.next(ex)
    if level > len(ex.hints):
        fail(f"exercise {ex.number} has {len(ex.hints)} hints")
    more = f"\nRun `grade hint {ex.number}` again for a more specific one." if level < len(ex.hints) else ""
    show(console(), escape(hint_text(ex, level) + more))
    try:
        hints.mark(ex, level)
    except OSError as exc:
        fail(f"the hint was not recorded: {environment_error(exc)}")


@cli.command()
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
    from grader.diffview import render_diff
    from grader.source import Unreadable, read_submission

    if path is None:
        fail(f"which file? `grade solution {ex.number} PATH --diff` (or run it in your workspace)")
    if not path.is_file():
        fail(f"no such file: {path}")
    try:
        mine = read_submission(path)
    except Unreadable as exc:
        fail(str(exc))
    terminal = sys.stdout.isatty()
    return render_diff(mine, workspace.solution_text(ex), mine_name=f"{path} (yours)",
                       ref_name=f"{ex.file} (reference)", width=shutil.get_terminal_size((80, 24)).columns if terminal else None,
                       color=terminal and "NO_COLOR" not in os.environ)


@cli.command()
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


@cli.command()
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


@cli.command()
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


@cli.command()
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


# -- instructors and hiring teams (grader/instructor/) ---------------------------------------------
@cli.command("release")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@pack_option
@click.option("--audience", type=click.Choice(["learners", "candidates"]), default="learners", show_default=True,
              help="learners: a workspace and how to grade themselves; candidates: a take-home without the grader.")
@click.option("--kit-spec", help="What learners pip-install instead of the wheel put into the handout: a wheel URL, "
                                 "git+https URL or 'attention-kit @ URL' (checked: PyPI has no attention-kit).")
@click.option("--wheel", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="Put this attention-kit wheel into the handout (default: one built from the running kit).")
@click.option("--exercises", help="Which exercises, e.g. 1,3-5 (default: all).")
@click.option("--force", is_flag=True, help="Write into a folder that is not empty.")
@click.option("--time-limit", metavar="DURATION", help="Printed at the top of the README, e.g. 3h, 90m, 2h30m, 2 days.")
@click.option("--notes", type=click.Path(dir_okay=False, path_type=Path),
              help="A Markdown file (a tools or AI policy, how to hand in...) put into the README as written.")
def release_command(directory, audience, kit_spec, wheel, exercises, force, time_limit, notes):
    """Write the handout into DIRECTORY: the skeletons, a README and exercises/info.toml.

    Learners also get the kit as a wheel in wheels/ (or install --kit-spec) and a CPU-only torch
    line. Candidates get no grader, no hints, no test configuration, but a setup section with the Python
    and torch versions they are graded with and each exercise's points. No reference solutions and no
    hidden suites in the handout's files. Exit codes: 0 written · 2 usage error.
    """
    from grader.instructor import UsageError
    from grader.instructor.release import release

    try:
        written = release(directory=directory, audience=audience, kit_spec=kit_spec, wheel=wheel,
                          exercises=exercises, force=force, time_limit=time_limit, notes=notes)
    except UsageError as exc:
        fail(str(exc))
    click.echo(f"Wrote the {audience}' handout to {directory} ({len(written)} files). Submissions keep the file names "
               f"of exercises/; grade them with `grade batch`.")


def rubric_options(command):
    """--weights, --rubric and --overrides, shared by `grade batch` and `grade merge`."""
    for option in reversed([
        click.option("--weights", metavar="N=POINTS,...",
                     help="Points each exercise is worth, e.g. 1=10,3=20 (every graded exercise): points = weight x "
                          "passed/total checks, rounded to 2 decimals."),
        click.option("--rubric", type=click.Path(dir_okay=False, path_type=Path),
                     help="A TOML file with a [weights] table (exercise = points); --weights entries win."),
        click.option("--overrides", type=click.Path(dir_okay=False, path_type=Path),
                     help="Manual points, applied on every run: TOML [[override]] tables or CSV with the columns "
                          "submission, exercise, points or delta, comment."),
    ]):
        command = option(command)
    return command


def lms_options(command):
    """--canvas and --canvas-assignment, shared by `grade batch` and `grade merge`."""
    command = click.option("--canvas-assignment", default="attention-kit", show_default=True,
                           help="The Canvas assignment (column) the totals go to.")(command)
    return click.option("--canvas", type=click.Path(dir_okay=False, path_type=Path),
                        help="Also write Canvas's grade-import CSV here (needs a roster with Canvas or SIS IDs).")(command)


@cli.command("batch")
@click.argument("submissions", type=click.Path(file_okay=False, path_type=Path))
@pack_option
@click.option("--jobs", "-j", type=click.IntRange(1, 64), default=2, show_default=True,
              help="Submissions graded at once, each in its own process.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the gradebook here: .csv (UTF-8 with a BOM, for Excel) or .json "
                   "(the cache goes beside it as NAME.cache.json).")
@click.option("--report-dir", type=click.Path(file_okay=False, path_type=Path),
              help="Write one self-contained HTML report per submission here, and the cohort page index.html.")
@click.option("--exercises", help="Which exercises, e.g. 1,3-5 (default: all).")
@click.option("--timeout", type=click.FloatRange(1, 3600), default=30.0, show_default=True,
              help="CPU seconds each exercise file may use in all, however busy the machine (wall-clock "
                   "backstop: 3x this + 10 s).")
@click.option("--shard", metavar="I/N", help="Grade only the I-th of N slices (stable by name); -o part_I.json, "
                                             "then `grade merge`.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@rubric_options
@click.option("--roster", type=click.Path(dir_okay=False, path_type=Path),
              help="CSV mapping submission names to people: submission, id, email, name (and canvas_id, "
                   "sis_user_id, sis_login_id, section for --canvas).")
@lms_options
@click.option("--anonymize", is_flag=True, help="Name every submission by a stable pseudonym (blind review).")
@click.option("--anonymize-key", type=click.Path(dir_okay=False, path_type=Path),
              help="The pseudonyms' secret key, created (0600) if absent; keep it away from the outputs "
                   "[default: anonymize.key in your data folder].")
def batch_command(submissions, jobs, output, report_dir, exercises, timeout, shard, quiet, weights, rubric, overrides,
                  roster, canvas, canvas_assignment, anonymize, anonymize_key):
    """Grade every submission in SUBMISSIONS: one folder or .zip each, files named as in the handout.

    Exercise files (01_self_attention.py, or a notebook 01_self_attention.ipynb) may sit at the top
    of a submission or one folder down (the handout's exercises/); a nearly right name gets a "did
    you mean". A flat LMS download (Canvas's lastfirst_userid_submissionid_file.py) is grouped by
    student. Submissions already graded and unchanged are skipped; what is ambiguous, refused or empty
    is in the gradebook's note column.
    Exit codes: 0 the batch ran and its gradebook was written (whatever the scores; a report or the cohort
    page that could not be written is a warning on stderr) · 2 usage error · 3 internal error, or the gradebook
    could not be written · 4 refused: the sandbox here cannot keep submissions from the reference and from each
    other (nothing graded).
    """
    from grader.instructor import UsageError
    from grader.instructor.batch import batch_rubric, parse_shard, run_batch
    from grader.instructor.anonymize import load_key
    from grader.instructor.roster import read_roster
    from grader.instructor.summary import LEGEND, summary_table
    from grader.render import console

    try:  # a mistake in the options is a usage error before the sandbox is probed
        course = batch_rubric(exercises=exercises, weights=weights, rubric=rubric, overrides=overrides)
        people = read_roster(roster) if roster is not None else None
        key = load_key(anonymize_key) if anonymize or anonymize_key else None
    except UsageError as exc:
        fail(str(exc))
    if key is not None and key[2]:
        click.echo(f"grade: created the pseudonym key {key[1]}; keep it apart from the gradebook and reports", err=True)
    check_sandbox()
    load_catalog().check_forbidden()  # a misspelt ban would grade everyone without it: exit 2 before grading
    try:
        result = run_batch(submissions_dir=submissions, jobs=jobs, output=output, report_dir=report_dir,
                           exercises=exercises, timeout=timeout, progress=not quiet, shard=parse_shard(shard),
                           course=course, roster=people, canvas=canvas, assignment=canvas_assignment,
                           key=key[0] if key else None)
    except UsageError as exc:
        fail(str(exc))
    out = console()
    if result.rows:
        out.print(summary_table(result.rows, [e.number for e in result.rows[0].exercises]))
        out.print(LEGEND, style="dim")
    from grader.instructor.markup import clean

    noted = sum(1 for row in result.rows if row.notes)
    if noted:
        out.print(f"{noted} submission{'s have' if noted != 1 else ' has'} notes (ambiguous, refused or empty files): "
                  f"see the note column.", markup=False, highlight=False)
    for problem in result.problems:
        click.echo(f"grade: warning: {clean(problem, 500)}", err=True)
    absent = sum(1 for row in result.rows if not row.digest)  # roster entries without a submission
    count = f"{len(result.rows) - absent} submission{'s' if len(result.rows) - absent != 1 else ''}"
    absent_text = f", {absent} in the roster without a submission" if absent else ""
    out.print(f"\n{count}{f' in shard {shard}' if shard else ''}: {result.graded} graded, {result.cached} unchanged "
              f"since the last run{absent_text}, in {result.elapsed_s:.1f} s.", markup=False, highlight=False)
    for label, path in (("gradebook", result.gradebook), ("reports", report_dir if result.reports else None),
                        ("cohort page", result.index)):
        if path:
            out.print(f"{label + ':':<13}{path}", markup=False, highlight=False)
    if output is not None and result.gradebook is None:
        fail(f"the gradebook {output} could not be written (the warning above says why); grade again once it can",
             INTERNAL)


@cli.command("merge")
@click.argument("parts", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The merged gradebook: .json (exactly what an unsharded run writes) or .csv.")
@rubric_options
@lms_options
def merge_command(parts, output, weights, rubric, overrides, canvas, canvas_assignment):
    """Merge the partial gradebooks of `grade batch --shard I/N` (every shard 1..N, once each).

    The parts' weights and overrides are applied again; --weights, --rubric or --overrides replace them.
    Batch caches among PARTS (part_I.cache.json, which part_*.json also matches) are skipped and named.

    Exit codes: 0 merged · 2 usage error (a missing, repeated or mismatched shard, a file that is not a part).
    """
    from grader.instructor import UsageError
    from grader.instructor.merge import merge_gradebooks

    try:
        merged = merge_gradebooks(parts=list(parts), output=output, weights=weights, rubric=rubric,
                                  overrides=overrides, canvas=canvas, assignment=canvas_assignment)
    except UsageError as exc:
        fail(str(exc))
    if merged.skipped:
        from grader.instructor.markup import clean

        names = ", ".join(clean(str(p), 200) for p in merged.skipped)
        click.echo(f"grade: skipped {len(merged.skipped)} batch cache{'s' if len(merged.skipped) != 1 else ''} "
                   f"(not partial gradebooks): {names}", err=True)
    for problem in merged.unapplied:
        click.echo(f"grade: {problem}", err=True)
    click.echo(f"Merged {merged.shards} shard{'s' if merged.shards != 1 else ''} "
               f"({len(merged.rows)} submissions) into {output}.")


@cli.command("similarity")
@click.argument("submissions", type=click.Path(file_okay=False, path_type=Path))
@click.option("--threshold", type=click.FloatRange(0, 1), default=0.8, show_default=True,
              help="Report files at least this similar to each other, to the reference or to public code "
                   "(mean Jaccard similarity of token and statement fingerprints of the normalised code).")
@click.option("--exercises", help="Which exercises, e.g. 1,3-5 (default: all).")
@click.option("--top", type=click.IntRange(1, 10000), default=20, show_default=True,
              help="Pairs the text summary lists (and five clusters per exercise); --json lists all.")
@click.option("--html", "html_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Write index.html and a side-by-side page per flagged pair to this folder.")
@click.option("--jobs", type=click.IntRange(1, 64), default=2, show_default=True,
              help="Processes that fingerprint the files (used from 200 distinct files on).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
@pack_option
def similarity_command(submissions, threshold, exercises, top, html_dir, jobs, as_json):
    """Submissions whose code is alike, exercise by exercise: copies of the reference and of well-known
    public implementations, clusters of look-alikes, and the pairs that link them.

    Renaming, comments, reformatting, reordering independent lines, inlining a helper and equivalent
    spellings (@ or matmul, x.softmax or F.softmax) do not hide a copy; the skeleton's code never counts.
    A high score is a reason to read the files, not a verdict.
    Exit codes: 0 the comparison ran (whatever it found) · 2 usage error.
    """
    from grader.instructor import UsageError
    from grader.instructor.outputs import OutputError
    from grader.instructor.similarity import similarity_report
    from grader.instructor.similarity_view import json_document, summary_text, write_html

    try:
        report = similarity_report(submissions_dir=submissions, threshold=threshold, exercises=exercises, jobs=jobs)
        pages = write_html(report, html_dir) if html_dir is not None else None
    except (UsageError, OutputError) as exc:
        fail(str(exc))
    if as_json:
        click.echo(json.dumps(json_document(report)))
        return
    click.echo(summary_text(report, top=top))
    if pages is not None:
        click.echo(f"{len(pages)} side-by-side page(s) and index.html in {html_dir}")


@cli.group("gradescope")
def gradescope_group():
    """Gradescope autograder: `build` the bundle to upload; `run` is what the bundle runs."""


@gradescope_group.command("build")
@click.argument("out", type=click.Path(dir_okay=False, path_type=Path))
@pack_option
@click.option("--exercises", help="Which exercises the assignment has, e.g. 1,3-5 (default: all).")
@click.option("--timeout", type=click.FloatRange(1, 3600), default=30.0, show_default=True,
              help="CPU seconds each exercise file may use in all, however busy the machine (wall-clock "
                   "backstop: 3x this + 10 s).")
@click.option("--visibility", type=click.Choice(["visible", "after_due_date", "after_published", "hidden"]),
              default="visible", show_default=True, help="When students see the per-exercise tests and score.")
@click.option("--stdout-visibility", type=click.Choice(["visible", "after_due_date", "after_published", "hidden"]),
              default="hidden", show_default=True, help="When students see the autograder's own log.")
@click.option("--wheel", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="The attention-kit wheel to bundle (default: built from the running kit, installed or a checkout).")
@click.option("--source", type=click.Path(file_okay=False, path_type=Path),
              help="Build the wheel from this attention-kit checkout instead.")
@click.option("--torch", "torch_spec", help="The torch requirement setup.sh installs (CPU build; default: "
                                           "torch==VERSION, the torch this kit runs with).")
def gradescope_build(out, exercises, timeout, visibility, stdout_visibility, wheel, source, torch_spec):
    """Write OUT.zip: setup.sh, run_autograder, the kit as a wheel and its settings.

    Exit codes: 0 written · 2 usage error · 3 the wheel could not be built.
    """
    from grader.instructor import UsageError
    from grader.instructor.gradescope import BundleError, build_bundle

    try:
        path = build_bundle(out=out, source=source, wheel=wheel, exercises=exercises, timeout=timeout,
                            visibility=visibility, stdout_visibility=stdout_visibility, torch_spec=torch_spec)
    except UsageError as exc:
        fail(str(exc))
    except BundleError as exc:
        fail(str(exc), INTERNAL)
    click.echo(f"Wrote {path}: upload it as the assignment's autograder (Configure Autograder > Zip file upload).")


@gradescope_group.command("run")
@click.option("--root", type=click.Path(file_okay=False, path_type=Path), default=Path("/autograder"),
              show_default=True, help="The autograder tree: submission/ is graded, results/results.json written.")
@click.option("--config", type=click.Path(dir_okay=False, path_type=Path), help="The bundle's attention-kit.json.")
def gradescope_run(root, config):
    """Grade ROOT/submission and write ROOT/results/results.json (run_autograder calls this).

    Exit codes: 0 results.json written (whatever the scores, and even when grading failed:
    the document says so) · 3 it could not be written.
    """
    from grader.instructor.gradescope import run
    from grader.instructor.outputs import OutputError

    try:
        path = run(root=root, config=config)
    except (OutputError, OSError) as exc:
        fail(f"could not write {root}/results/results.json: {exc}", INTERNAL)
    click.echo(f"Wrote {path}")


@cli.command("classroom")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.option("--kit-spec", help="What the workflow pip-installs instead of the wheel put into the repository: "
                                 "a wheel URL, git+https URL or 'attention-kit @ URL' (checked).")
@click.option("--wheel", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="Put this attention-kit wheel into the repository (default: one built from the running kit).")
@click.option("--exercises", help="Which exercises, e.g. 1,3-5 (default: all).")
@click.option("--timeout", type=click.FloatRange(1, 3600), default=30.0, show_default=True,
              help="CPU seconds each exercise file may use in all, however busy the machine (wall-clock "
                   "backstop: 3x this + 10 s).")
@pack_option
def classroom_command(directory, kit_spec, wheel, exercises, timeout):
    """Make DIRECTORY a GitHub Classroom template: the handout plus .github/workflows/classroom.yml.

    Every push grades each exercise once and reports its points to Classroom; pip's cache keeps
    torch and the kit between pushes. Students can read what their workflow installs: for
    learning, not for exams. Exit codes: 0 written · 2 usage error.
    """
    from grader.instructor import UsageError
    from grader.instructor.classroom import write_classroom

    try:
        written = write_classroom(directory=directory, exercises=exercises, kit_spec=kit_spec, wheel=wheel,
                                  timeout=timeout)
    except UsageError as exc:
        fail(str(exc))
    click.echo(f"Wrote {written[-1]}" + (f" and the handout ({len(written) - 1} files)" if len(written) > 1 else "")
               + f". Push {directory} as the assignment's template repository.")


@cli.group("dev")
def dev_group():
    """Tools for exercise authors: lint a pack, regenerate the README's exercise table."""


@dev_group.command("check")
@pack_option
@click.option("--no-grading", is_flag=True, help="Only the metadata, the files and the modules; grade nothing.")
@click.option("--no-corpus", is_flag=True, help="Grade skeletons and solutions, not the labelled corpus.")
def dev_check(no_grading, no_corpus):
    """Lint the kit (or --pack DIR): metadata, files, modules, skeletons, solutions, corpus labels."""
    from grader.devcheck import check
    from grader.pack import default_pack

    problems = check(default_pack(), grading=not no_grading, corpus=not no_corpus)
    for line in problems:
        click.echo(line)
    click.echo(f"grade dev check: {len(problems)} problem(s)" if problems else "grade dev check: ok", err=True)
    sys.exit(1 if problems else 0)


@dev_group.command("readme-table")
@pack_option
def dev_readme_table():
    """Print the exercise table (markdown) generated from info.toml, as the README shows it."""
    from grader.devcheck import readme_table

    click.echo(readme_table(load_catalog()), nl=False)
