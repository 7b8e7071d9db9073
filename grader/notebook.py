"""`%load_ext grader`, then a cell starting with `%%grade 3` grades the cell's code and shows the verdict inline.

The kernel only writes the cell to a private temporary file and asks its grading process (`python -m
grader.notebook`, started on the first %%grade and kept warm: torch loaded, workers forked) to grade it
exactly as `grade exercise` does (the same one-text read, policy check and sandboxed worker). Nothing of the
cell runs in the kernel, and the grader's own torch settings never touch it. The verdict comes back as HTML
(named mistake, the cell's line marked, heat maps, hint on request) and as plain text for front ends that
show no HTML. IPython is needed only here, when the extension is loaded.
"""
from __future__ import annotations

import json
import os
import select
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

USAGE = "usage: %%grade N [--hint] [--timeout SECONDS] [--allow-weak-sandbox]   (N: the exercise's number or slug)"


@dataclass(frozen=True)
class Options:
    exercise: str
    hint: bool = False
    timeout: float = 30.0
    allow_weak: bool = False

    def flags(self) -> list[str]:
        return [f"--timeout={self.timeout:g}"] + ["--hint"] * self.hint + ["--allow-weak-sandbox"] * self.allow_weak


def parse(line: str) -> Options:
    """The magic's line; ValueError with the usage for anything else."""
    try:
        words = shlex.split(line)
    except ValueError:
        raise ValueError(USAGE) from None
    numbers = [w for w in words if not w.startswith("-")]
    flags = [w for w in words if w.startswith("-")]
    timeout, hint, weak = 30.0, False, False
    for flag in flags:
        name, _, value = flag.partition("=")
        if name == "--hint" and not value:
            hint = True
        elif name == "--allow-weak-sandbox" and not value:
            weak = True
        elif name == "--timeout":
            try:
                timeout = float(value)
            except ValueError:
                raise ValueError(f"--timeout needs a number of seconds, e.g. --timeout=60; {USAGE}") from None
            if not 1 <= timeout <= 3600:
                raise ValueError("--timeout must be between 1 and 3600 seconds")
        else:
            raise ValueError(f"unknown option {flag}; {USAGE}")
    if len(numbers) != 1:
        raise ValueError(USAGE)
    return Options(numbers[0], hint, timeout, weak)


class CellVerdict:
    """What the cell shows: HTML in Jupyter, VS Code and Colab, the plain text in a terminal IPython."""

    def __init__(self, passed: bool, html: str, text: str):
        self.passed, self.html, self.text = passed, html, text

    def _repr_html_(self) -> str:
        return self.html

    def _repr_pretty_(self, printer, cycle) -> None:
        printer.text(self.text)

    def __repr__(self) -> str:
        return self.text


def grade_cell(line: str, cell: str) -> CellVerdict:
    """The %%grade cell magic: a bad line or a grade that could not run is one line (IPython's UsageError)."""
    from IPython.core.error import UsageError

    from grader.catalog import UnknownExercise, load_catalog
    from grader.source import cell_code

    try:
        options = parse(line)
        ex = load_catalog().get(options.exercise)
    except (ValueError, UnknownExercise) as exc:
        raise UsageError(str(exc)) from None
    with tempfile.TemporaryDirectory(prefix="attention-kit-cell-") as folder:
        path, result = Path(folder) / ex.file, Path(folder) / "verdict.json"
        path.write_text(cell_code(f"%%grade {line}".rstrip(), cell), encoding="utf-8")
        code, message = GRADER.ask([str(ex.number), str(path), str(result), *options.flags()],
                                   timeout=3 * options.timeout + 120)
        if code not in (0, 1) or not result.is_file():
            raise UsageError(message or f"the grader ended with status {code}")
        data = json.loads(result.read_text(encoding="utf-8"))
    return CellVerdict(data["passed"], data["html"], data["text"])


class GradingProcess:
    """The kernel's grading process: one request (a JSON line) in, one reply line out. Started when first
    needed and once more if it has ended; stopped (with its workers) on a timeout or an interrupt."""

    def __init__(self):
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        """Running from now on (it warms up while the learner writes the cell)."""
        if self.proc is None or self.proc.poll() is not None:
            self.proc = subprocess.Popen([sys.executable, "-m", "grader.notebook"], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, text=True, encoding="utf-8")

    def ask(self, request: list[str], *, timeout: float) -> tuple[int, str]:
        for _ in range(2):  # a process that ended since the last cell is replaced once
            self.start()
            try:
                self.proc.stdin.write(json.dumps(request) + "\n")
                self.proc.stdin.flush()
                if not select.select([self.proc.stdout], [], [], timeout)[0]:
                    self.stop()
                    return 1, f"the grade did not finish within {timeout:.0f} s; the grading process was restarted"
                line = self.proc.stdout.readline()
            except BrokenPipeError:
                line = ""
            except BaseException:  # an interrupted cell: the grade stops with its process
                self.stop()
                raise
            if line:
                reply = json.loads(line)
                return reply["code"], reply["message"]
            self.stop()
        return 3, "the grading process ended unexpectedly (run the cell again; `python -m grader.sandbox` checks the machine)"

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None


GRADER = GradingProcess()


def load_ipython_extension(ipython) -> None:
    ipython.register_magic_function(grade_cell, magic_kind="cell", magic_name="grade")
    GRADER.start()


def _guidance(ex, verdict, options: Options):
    """Hints as `grade exercise` and `grade hint` keep them for a file outside a workspace; shown only with --hint."""
    from grader import workspace
    from grader.catalog import load_catalog
    from grader.learner_report import Guidance

    hints, mistake = workspace.Hints(None), workspace.named_mistake(verdict)
    guide = Guidance(where="this cell", show_hints=False,
                     offer=f"Stuck? Run the cell as %%grade {ex.number} --hint for a hint.")
    hints.note(ex, mistake)  # outside a workspace the record is a convenience: Hints never raises for it
    if verdict.state == "not_started" and ex.hints:
        hints.mark(ex, 1)
        guide.hint = f"Hint 1/{len(ex.hints)}: {ex.hints[0]}"
    elif options.hint and not verdict.passed:  # the ladder of `grade hint`: the mistake's own hint, then the exercise's
        guide.show_hints = mistake is not None
        guide.offer = f"%%grade {ex.number} --hint again for another hint; grade explain {ex.number} for the ideas."
        if hints.pending(ex):
            hints.shown(ex)
        elif ex.hints:
            level = hints.next(ex)
            guide.hint = f"Hint {level}/{len(ex.hints)}: {ex.hints[level - 1]}"
            hints.mark(ex, level)
    following = load_catalog().next_after(ex)
    if verdict.passed:
        guide.next_steps = [f"Next: exercise {following.number} · {following.title} (%%grade {following.number})"
                            if following else "That was the last exercise."]
    return guide


def grade_request(argv: list[str], *, warm: bool | None = None) -> tuple[int, str]:
    """N FILE RESULT [flags]: grade FILE, write the verdict's HTML and text to RESULT. The exit code `grade
    exercise` would give (0 or 1: the verdict; 2 usage; 3 internal; 4 the sandbox is too weak) and one line."""
    from grader.catalog import load_catalog
    from grader.learner_report import learner_view, render_fragment, render_text
    from grader.policy import PolicyError
    from grader.runner import DeviceUnavailable, InternalError, WeakSandbox, grade
    from grader.sandbox import Limits
    from grader.source import Unreadable, read_submission

    number, file, result, *flags = argv
    options = parse(" ".join([number, *flags]))
    ex, path = load_catalog().get(number), Path(file)
    try:
        verdict = grade(exercise=ex, path=path, limits=Limits(time_s=options.timeout), capture_attention=True,
                        allow_weak_sandbox=options.allow_weak, warm=warm)
    except WeakSandbox as exc:
        return 4, f"{exc} To grade your own cells here anyway: %%grade {ex.number} --allow-weak-sandbox"
    except (DeviceUnavailable, PolicyError) as exc:
        return 2, str(exc)
    except InternalError as exc:
        return 3, f"internal grader error, please report it: {exc}"
    try:
        source = read_submission(path).removeprefix("# ")  # the cell as written: its first line is the magic
    except Unreadable:
        source = None
    data = verdict.to_json()
    view = learner_view(ex, data, verdict.attention, source, _guidance(ex, verdict, options))
    Path(result).write_text(json.dumps({"passed": verdict.passed, "html": render_fragment(view),
                                        "text": render_text(view, verdict.attention)}), encoding="utf-8")
    return (0 if verdict.passed else 1), ""


def _warm_up() -> bool | None:
    """Torch imported and the fork server started before the first request, as `grade watch` does: then every
    grade, the first too, forks its worker. None (spawn, then fork) where the fork server cannot start."""
    try:
        import grader.harness  # noqa: F401  (imports torch)
        from grader.runner import keep_warm

        keep_warm()
        return True
    except Exception:
        return None


def serve() -> None:
    """python -m grader.notebook: answer the kernel's requests until it closes stdin (or ends)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # an interrupted kernel stops this process itself (GradingProcess)
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # anything else printed goes to stderr, never into a reply
    warm = _warm_up()
    for line in sys.stdin:
        try:
            code, message = grade_request(json.loads(line), warm=warm)
        except Exception as exc:  # a bug in the grader: one line for the cell, exit 3
            code, message = 3, f"internal grader error, please report it: {type(exc).__name__}: {exc}"
        replies.write(json.dumps({"code": code, "message": message}) + "\n")
        replies.flush()
    sys.stderr.flush()
    os._exit(0)  # without tearing down torch (~0.5 s)


if __name__ == "__main__":
    serve()
