"""Grades a folder of submissions in parallel processes into a gradebook, a cache and HTML reports.

Each pool process imports torch once and grades whole submissions with grader.runner.grade
(the submission code itself runs in grade's sandbox workers, never in the pool). A pool that
breaks is replaced, and the submissions it held are retried one at a time in fresh processes,
so a culprit can only spoil its own row. Re-running skips submissions whose files, the kit and
the options are unchanged (a content hash kept in a JSON cache beside the gradebook). What the batch keeps and
writes (rows, the gradebook's CSV and JSON, shards, the cache) is shaped in grader/instructor/gradebook.py.
"""
from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import re
import tempfile
import time
import unicodedata
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path

from grader.catalog import load_catalog
from grader.instructor import UsageError, select_exercises
from grader.instructor.anonymize import anonymize, pseudonym
from grader.instructor.grading import ExerciseResult, grade_submission, max_points
from grader.instructor.lms import canvas_csv
from grader.instructor.roster import match
from grader.instructor.outputs import OutputDir, OutputError
from grader.instructor.gradebook import (Gradebook, Row, cache_key, cache_name, cache_text, check_name, in_shard,
                                         load_cache)
from grader.instructor.rubric import Rubric, apply, load_rubric
from grader.sandbox.textsafe import visible
from grader.instructor.submissions import (discover, flat_groups, looks_like_one_submission, names_for, open_flat,
                                           open_stray, open_submission, shared_names)

# -- the pool -----------------------------------------------------------------------------------
_VITALS = None  # this pool process's limits and scheduling when it started


def _warm() -> None:
    """Pool initializer: pay for torch and the grader's imports once per process; the fork server that every
    worker of this process is forked from boots meanwhile."""
    from grader.runner import fork_from_now_on

    record_vitals()
    fork_from_now_on()
    import grader.diagnosis  # noqa: F401
    import grader.harness  # noqa: F401


def record_vitals() -> None:
    from grader.runner import vitals

    global _VITALS
    _VITALS = vitals(os.getpid())


def exit_if_tampered() -> None:
    """A pool process whose limits or scheduling were changed from outside (an earlier submission's worker
    sharing its uid) ends before its next task: the pool is replaced and that task retried in a fresh process."""
    from grader.runner import vitals

    if _VITALS is not None and vitals(os.getpid()) != _VITALS:
        os._exit(75)


def grade_task(task: dict) -> list[dict]:
    """Runs in a pool process: one whole submission, returned as plain data."""
    exit_if_tampered()
    started = time.perf_counter()
    results = grade_submission(numbers=task["numbers"], files={int(k): v for k, v in task["files"].items()},
                               located={int(k): v for k, v in task["located"].items()},
                               rejected={int(k): v for k, v in task["rejected"].items()}, timeout=task["timeout"],
                               near={int(k): v for k, v in task.get("near", {}).items()})
    return [{**r.to_dict(), "_duration_s": time.perf_counter() - started} for r in results]


def _error_results(task: dict, exc: BaseException) -> list[dict]:
    catalog = load_catalog()
    note = f"the grading process failed: {type(exc).__name__}: {exc}"[:500]
    return [ExerciseResult(n, catalog.get(n).slug, "error", 0, 0, note=note).to_dict() for n in task["numbers"]]


def check_bans() -> None:
    """Every exercise's forbidden names resolve (CatalogError otherwise): a misspelt ban would grade everyone
    without it. It imports torch, so a batch asks a pool process, which has imported it already."""
    load_catalog().check_forbidden()


def run_pool(tasks: list[dict], jobs: int, on_done, *, worker=grade_task, initializer=_warm, preflight=None) -> None:
    """Calls on_done(task, worker(task)) for every task, whatever happens to the processes.

    jobs=0 grades in this process, one task after another (the kit's tests: one warm fork server).
    preflight: called once (in a pool process) before any task is given out; what it raises is raised here.
    """
    if preflight is not None and tasks and jobs == 0:
        preflight()
    if jobs == 0:
        for task in tasks:
            try:
                on_done(task, worker(task))
            except Exception as exc:
                on_done(task, _error_results(task, exc))
        return
    spawn = multiprocessing.get_context("spawn")
    suspects = []
    if tasks:
        with ProcessPoolExecutor(max_workers=max(1, min(jobs, len(tasks))), mp_context=spawn,
                                 initializer=initializer) as pool:
            if preflight is not None:
                pool.submit(preflight).result()
            futures = {pool.submit(worker, task): task for task in tasks}
            for future in as_completed(futures):
                task = futures[future]
                try:
                    on_done(task, future.result())
                except BrokenProcessPool:
                    suspects.append(task)
                except Exception as exc:
                    on_done(task, _error_results(task, exc))
    for task in suspects:  # alone in a fresh process each: only the culprit fails again
        with ProcessPoolExecutor(max_workers=1, mp_context=spawn, initializer=initializer) as pool:
            try:
                on_done(task, pool.submit(worker, task).result())
            except Exception as exc:
                on_done(task, _error_results(task, exc))


# -- the batch's outputs ------------------------------------------------------------------------
def report_name(submission: str) -> str:
    """A readable slug plus a short hash of the exact name: "José Ñúñez" -> jose-nunez-1a2b3c4d.html."""
    plain = unicodedata.normalize("NFKD", submission).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", plain.lower()).strip("-")[:48].strip("-") or "submission"
    return f"{slug}-{hashlib.sha256(submission.encode('utf-8')).hexdigest()[:8]}.html"


# -- the batch -----------------------------------------------------------------------------------
@dataclass
class BatchResult:
    rows: list[Row]
    graded: int  # graded in this run
    cached: int  # reused from the cache
    gradebook: Path | None = None
    reports: list[Path] = field(default_factory=list)
    elapsed_s: float = 0.0
    index: Path | None = None  # the cohort page
    problems: list[str] = field(default_factory=list)  # outputs that could not be written, overrides not applied
    rubric: Rubric | None = None
    unapplied: list[str] = field(default_factory=list)  # overrides naming no submission or exercise of the batch


class Outputs:
    """The batch's output folders, opened before grading: the gradebook's (with the cache) and the reports'."""

    def __init__(self, output: Path | None, report_dir: Path | None):
        self.output, self.gradebook_dir, self.report_dir = output, None, None
        try:
            if output is not None:
                self.gradebook_dir = OutputDir(output.parent)
            if report_dir is not None:
                self.report_dir = OutputDir(report_dir)
        except OutputError as exc:
            self.close()
            raise UsageError(str(exc)) from None
        self.cache_dir = self.gradebook_dir or self.report_dir

    def cache(self, problems: list[str]):
        """The previous run's cache entries (gradebook.CacheEntry by name); what is malformed is said in problems."""
        if self.cache_dir is None:
            return {}
        name = cache_name(self.output)
        return load_cache(self.cache_dir.read(name), str(self.cache_dir.path / name), problems)

    def close(self) -> None:
        for d in (self.gradebook_dir, self.report_dir):
            if d is not None:
                d.close()


def _write(folder: OutputDir, name: str, text: str, problems: list[str]) -> Path | None:
    try:
        return folder.write(name, text)
    except OSError as exc:
        problems.append(f"could not write {folder.path / name}: {exc.strerror or exc}")
        return None


def batch_rubric(*, exercises: str | None = None, weights: str | None = None, rubric: Path | None = None,
                 overrides: Path | None = None) -> Rubric | None:
    """The weights and overrides the options give, checked against the exercises graded (a UsageError if wrong)."""
    course = load_rubric(weights=weights, rubric=rubric, overrides=overrides)
    if course is not None:
        course.check([ex.number for ex in select_exercises(exercises)])
    return course


def attach_roster(rows: list[Row], roster: dict, names: list[str], numbers: list[int]) -> list[Row]:
    """Give each row its person (or a note); returns a row for each roster entry that no name matched."""
    found, notes = match(names, roster)
    for row in rows:
        row.person = roster[found[row.submission]] if row.submission in found else {}
        if row.submission in notes:
            row.notes = row.notes + [notes[row.submission]]
    catalog = load_catalog()
    return [Row(key, "", [ExerciseResult(n, catalog.get(n).slug, "missing", 0, max_points(n), note="no submission")
                          for n in numbers], problem="in the roster, but no submission was found", person=person)
            for key, person in roster.items() if key not in found.values()]


def check_canvas(canvas: Path | None, roster: dict | None, shard) -> None:
    if canvas is None:
        return
    if canvas.suffix.lower() != ".csv":
        raise UsageError(f"--canvas writes a CSV file, not {canvas.name!r}")
    if roster is None:
        raise UsageError("--canvas needs --roster: Canvas matches students by their Canvas or SIS IDs")
    if shard is not None:
        raise UsageError("--canvas is for the whole cohort: pass it to `grade merge`")


def write_canvas(canvas: Path, rows: list[Row], assignment: str) -> list[str]:
    """Canvas's import CSV; returns what went wrong or was left out, for stderr."""
    text, left_out = canvas_csv(rows, assignment)
    problems = [f"{name}: no Canvas, SIS or institution ID in the roster; left out of {canvas.name}" for name in left_out]
    try:
        with OutputDir(canvas.parent) as folder:
            folder.write(canvas.name, text)
    except (OutputError, OSError) as exc:
        problems.append(f"could not write {canvas}: {exc}")
    return problems


def run_batch(*, submissions_dir: Path, jobs: int = 2, output: Path | None = None, report_dir: Path | None = None,
              exercises: str | None = None, timeout: float = 30.0, progress: bool = True,
              shard: tuple[int, int] | None = None, course: Rubric | None = None, roster: dict | None = None,
              canvas: Path | None = None, assignment: str = "attention-kit", key: bytes | None = None
              ) -> BatchResult:
    """Grade every submission in submissions_dir (or one shard of them); write gradebook, cache, reports.

    course (weights and overrides, from batch_rubric) is applied to every row, cached or not; roster
    (roster.read_roster) adds each person's IDs, and a row for each person without a submission; canvas
    gets Canvas's grade-import CSV, the total under the column assignment. With key (anonymize.load_key) every
    submission is named by its pseudonym, before anything is graded, cached or written.

    Output folders are opened before grading; afterwards the gradebook and the cache are written
    first, then the reports and the cohort page, each on its own (one that fails loses nothing else).
    """
    started = time.perf_counter()
    root = Path(submissions_dir)
    if not root.is_dir():
        raise UsageError(f"no such folder: {submissions_dir}")
    if output is not None:
        check_name(output)
    if shard is not None and (output is None or output.suffix.lower() != ".json"):
        raise UsageError("a shard writes a partial gradebook for `grade merge`: pass -o part_I.json")
    check_canvas(canvas, roster, shard)
    if key is not None and (roster is not None or canvas is not None):
        raise UsageError("--anonymize is for blind review: run without it for the roster and the LMS export")
    selected = select_exercises(exercises)
    numbers = [ex.number for ex in selected]
    if course is not None:
        course.check(numbers)
    own = looks_like_one_submission(root, selected)
    if own is not None:
        raise UsageError(f"{root} looks like one submission (it holds {own}); pass the folder that holds "
                         f"every submission, one folder or .zip each")
    sources = discover(root)
    groups, strays = flat_groups(root, set(names_for(sources)))
    warned = [s.why for s in strays if not s.row]
    strays = [s for s in strays if s.row]
    if not sources and not groups and not strays:
        raise UsageError(f"no submissions in {submissions_dir}: expected one folder or .zip per submission, or an "
                         f"LMS download (lastfirst_userid_submissionid_file.py)")
    named = list(zip(sources, names_for(sources)))
    elsewhere = set()
    if shard is not None:
        elsewhere = {name for _, name in named if not in_shard(name, shard)} | \
            {g.name for g in groups if not in_shard(g.name, shard)}
        named = [(src, name) for src, name in named if in_shard(name, shard)]
        groups = [g for g in groups if in_shard(g.name, shard)]
        elsewhere |= {s.name for s in strays if not in_shard(s.name, shard)}
        strays = [s for s in strays if in_shard(s.name, shard)]
    salt = json.dumps([cache_key(timeout), numbers])
    outputs = Outputs(output, report_dir)
    try:
        unreadable = []
        previous = outputs.cache(unreadable)
        with tempfile.TemporaryDirectory(prefix="attention-kit-batch-") as scratch:
            subs = [open_submission(src, name, Path(scratch) / str(i), selected) for i, (src, name) in enumerate(named)]
            shared = shared_names(sources)
            for sub in subs:
                sub.notes[:0] = [shared[sub.source]] if sub.source in shared else []
            hidden = [[visible(src.name), visible(src.stem)] for src, _ in named]
            subs += [open_flat(g, root, Path(scratch) / f"flat-{i}", selected) for i, g in enumerate(groups)]
            hidden += [[g.student, g.user] for g in groups]
            subs += [open_stray(s) for s in strays]
            hidden += [[visible(s.path.stem)] for s in strays]
            if key is not None:
                for sub, secrets in zip(subs, hidden):
                    anonymize(sub, key, secrets)
                elsewhere = {pseudonym(key, name) for name in elsewhere}
            rows, tasks = _grade(subs, previous, numbers, salt, jobs, timeout, progress)
            ordered = sorted(rows.values(), key=lambda r: r.submission)
            by_name = {sub.name: sub for sub in subs}
            for row in ordered:
                row.notes = by_name[row.submission].notes
            if roster is not None:
                absent = attach_roster(ordered, roster, [sub.name for sub in subs] + sorted(elsewhere), numbers)
                ordered = sorted(ordered + [r for r in absent if shard is None or in_shard(r.submission, shard)],
                                 key=lambda r: r.submission)
            if outputs.report_dir is not None:
                for row in ordered:
                    row.report = str(Path(report_dir) / report_name(row.submission))
            result = BatchResult(ordered, len(tasks), len(subs) - len(tasks), output, rubric=course)
            result.problems += unreadable + warned
            result.unapplied = apply(course, ordered, numbers, elsewhere)
            result.problems += result.unapplied
            _save(outputs, result, previous, numbers, shard)
            if canvas is not None:
                result.problems += write_canvas(canvas, ordered, assignment)
            if outputs.report_dir is not None:
                _write_reports(result, {s.name: s for s in subs}, outputs, numbers, shard)
        if outputs.report_dir is not None and shard is None:
            _write_cohort_page(result, numbers, outputs, subs)
    finally:
        outputs.close()
    result.elapsed_s = time.perf_counter() - started
    return result


def _grade(subs, previous, numbers, salt, jobs, timeout, progress) -> tuple[dict[str, Row], list[dict]]:
    rows: dict[str, Row] = {}
    tasks = []
    for sub in subs:
        digest = sub.digest(salt)
        old = previous.get(sub.name)
        if old is not None and old.digest == digest:
            rows[sub.name] = old.row()
            rows[sub.name].cached = True
            continue
        rejected = {n: sub.problem for n in numbers} if sub.problem else sub.rejected
        tasks.append({"name": sub.name, "digest": digest, "problem": sub.problem, "numbers": numbers,
                      "files": {str(n): str(p) for n, p in sub.files.items()},
                      "located": {str(n): s for n, s in sub.located.items()},
                      "near": {str(n): s for n, s in sub.near.items()},
                      "rejected": {str(n): why for n, why in rejected.items()}, "timeout": timeout})
    with _progress(progress, len(subs), len(subs) - len(tasks)) as advance:
        def done(task: dict, results: list[dict]) -> None:
            duration = max((r.pop("_duration_s", 0.0) for r in results), default=0.0)
            rows[task["name"]] = Row(task["name"], task["digest"], [ExerciseResult.from_dict(r) for r in results],
                                     problem=task["problem"], duration_s=duration)
            advance(task["name"])

        run_pool(tasks, jobs, done, preflight=check_bans)
    return rows, tasks


def _save(outputs: Outputs, result: BatchResult, previous, numbers: list[int], shard) -> None:
    """The gradebook, then the cache: both before any report."""
    if outputs.gradebook_dir is not None:
        text = Gradebook(result.rows, numbers, shard, result.rubric, result.unapplied).text(outputs.output.name)
        result.gradebook = _write(outputs.gradebook_dir, outputs.output.name, text, result.problems)
    if outputs.cache_dir is not None:
        _write(outputs.cache_dir, cache_name(outputs.output), cache_text(result.rows, previous), result.problems)


def _write_reports(result: BatchResult, subs: dict, outputs: Outputs, numbers: list[int], shard) -> None:
    """One report per row; one that cannot be rendered or written loses only itself (and its link)."""
    from grader.instructor.report import render_report
    from grader.source import shown_source

    lost = []
    for row in result.rows:
        files = subs[row.submission].files if row.submission in subs else {}  # none for a roster-only row
        try:
            sources = {n: shown_source(p) for n, p in files.items()}
            path = _write(outputs.report_dir, report_name(row.submission), render_report(row, sources),
                          result.problems)
        except Exception as exc:  # a report is a view: its failure must not cost the others
            result.problems.append(f"could not render the report of {row.submission}: {type(exc).__name__}")
            path = None
        if path is None:
            row.report = ""
            lost.append(row)
        else:
            result.reports.append(path)
    if lost and outputs.gradebook_dir is not None and result.gradebook is not None:  # no links to missing reports
        text = Gradebook(result.rows, numbers, shard, result.rubric, result.unapplied).text(outputs.output.name)
        _write(outputs.gradebook_dir, outputs.output.name, text, result.problems)


def _write_cohort_page(result: BatchResult, numbers: list[int], outputs: Outputs, subs) -> None:
    """index.html; like a report, a page that cannot be rendered costs nothing but itself."""
    from grader.instructor.cohort import cohort_page
    from grader.instructor.similarity import integrity_flags

    try:
        selected = [e for e in load_catalog().exercises if e.number in numbers]
        integrity = integrity_flags(subs, selected)
    except Exception as exc:  # the comparison is a view too: the page goes out without it
        result.problems.append(f"could not compare the submissions for the cohort page: {type(exc).__name__}")
        integrity = []
    try:
        page = cohort_page(result.rows, numbers, integrity)
    except Exception as exc:
        result.problems.append(f"could not render the cohort page: {type(exc).__name__}")
        return
    result.index = _write(outputs.report_dir, "index.html", page, result.problems)


class _progress:
    """A rich progress bar on stderr (or nothing): `with _progress(on, total, done) as advance: advance(name)`."""

    def __init__(self, enabled: bool, total: int, already: int):
        self.enabled, self.total, self.already = enabled, total, already
        self.bar = None

    def __enter__(self):
        if self.enabled:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self.bar = Progress(TextColumn("grading"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                                TextColumn("{task.description}"), console=Console(stderr=True))
            self.bar.start()
            skipped = f"{self.already} unchanged, skipped" if self.already else ""
            self.task = self.bar.add_task(skipped, total=self.total, completed=self.already)
        return self.advance

    def advance(self, name: str) -> None:
        if self.bar is not None:
            self.bar.update(self.task, advance=1, description=name)

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.stop()
        return False
