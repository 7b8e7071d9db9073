"""Grades a folder of submissions in parallel processes into a gradebook, a cache and HTML reports.

Each pool process imports torch once and grades whole submissions with grader.runner.grade
(the submission code itself runs in grade's sandbox workers, never in the pool). A pool that
breaks is replaced, and the submissions it held are retried one at a time in fresh processes,
so a culprit can only spoil its own row. Re-running skips submissions whose files, the kit and
the options are unchanged (a content hash kept in a JSON cache beside the gradebook).
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
import multiprocessing
import re
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path

from grader import __version__
from grader.catalog import PACKAGE_DIR, kit_dir, load_catalog
from grader.instructor import UsageError, select_exercises
from grader.instructor.grading import ExerciseResult, grade_submission
from grader.instructor.submissions import discover, names_for, open_submission

CACHE_SCHEMA = 1
GRADEBOOK_SUFFIXES = (".csv", ".json")


@dataclass
class Row:
    submission: str
    digest: str
    exercises: list[ExerciseResult]
    problem: str = ""  # the submission as a whole could not be read
    report: str = ""  # path of its HTML report
    cached: bool = False  # taken from the cache, not graded in this run
    duration_s: float = 0.0

    @property
    def total(self) -> int:
        return sum(e.score for e in self.exercises)

    @property
    def max_total(self) -> int:
        return sum(e.max_score for e in self.exercises)

    def to_dict(self) -> dict:
        return {"submission": self.submission, "total": self.total, "max_total": self.max_total,
                "problem": self.problem, "report": self.report, "digest": self.digest,
                "duration_s": round(self.duration_s, 3), "exercises": [e.to_dict() for e in self.exercises]}

    @classmethod
    def from_dict(cls, data: dict) -> "Row":
        return cls(data["submission"], data["digest"], [ExerciseResult.from_dict(e) for e in data["exercises"]],
                   problem=data.get("problem", ""), duration_s=data.get("duration_s", 0.0))


VERDICT_PARTS = ("runner.py", "policy.py", "results.py", "catalog.py", "pack.py", "failures.py", "harness.py", "probes.py",
                 "sandbox", "suites", "checks", "diagnosis")


def kit_fingerprint() -> str:
    """The kit version plus a hash of what decides a verdict: runner, policy, sandbox, suites, diagnosis, references."""
    h = hashlib.sha256(__version__.encode())
    paths: list[Path] = []
    for part in VERDICT_PARTS:
        top = PACKAGE_DIR / part
        paths += [top] if top.is_file() else sorted(p for p in top.rglob("*") if p.suffix in (".py", ".toml"))
    paths += sorted(kit_dir("solutions").glob("*.py")) + [kit_dir("exercises") / "info.toml"]
    paths += sorted((kit_dir("exercises").parent / "checks").glob("*.py"))  # a pack's own exercise modules
    for path in paths:
        h.update(str(path.relative_to(path.parents[1])).encode())
        h.update(path.read_bytes())
    return f"{__version__}+{h.hexdigest()[:16]}"


# -- the pool -----------------------------------------------------------------------------------
def _warm() -> None:
    """Pool initializer: pay for torch and the grader's imports once per process."""
    import grader.diagnosis  # noqa: F401
    import grader.runner  # noqa: F401
    import grader.suites.harness  # noqa: F401


def grade_task(task: dict) -> list[dict]:
    """Runs in a pool process: one whole submission, returned as plain data."""
    started = time.perf_counter()
    results = grade_submission(numbers=task["numbers"], files={int(k): v for k, v in task["files"].items()},
                               located={int(k): v for k, v in task["located"].items()},
                               rejected={int(k): v for k, v in task["rejected"].items()}, timeout=task["timeout"])
    return [{**r.to_dict(), "_duration_s": time.perf_counter() - started} for r in results]


def _error_results(task: dict, exc: BaseException) -> list[dict]:
    catalog = load_catalog()
    note = f"the grading process failed: {type(exc).__name__}: {exc}"[:500]
    return [ExerciseResult(n, catalog.get(n).slug, "error", 0, 0, note=note).to_dict() for n in task["numbers"]]


def run_pool(tasks: list[dict], jobs: int, on_done, *, worker=grade_task, initializer=_warm) -> None:
    """Calls on_done(task, worker(task)) for every task, whatever happens to the processes."""
    spawn = multiprocessing.get_context("spawn")
    suspects = []
    if tasks:
        with ProcessPoolExecutor(max_workers=max(1, min(jobs, len(tasks))), mp_context=spawn,
                                 initializer=initializer) as pool:
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


# -- gradebook and cache -------------------------------------------------------------------------
def _cell(value) -> str:
    """CSV cells that a spreadsheet would run as a formula get a leading apostrophe."""
    text = str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def gradebook_csv(rows: list[Row], numbers: list[int]) -> str:
    head = ["submission", "total", "max_total"]
    for n in numbers:
        head += [f"ex{n}_status", f"ex{n}_score", f"ex{n}_max", f"ex{n}_diagnoses"]
    head += ["problem", "report"]
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(head)
    for row in rows:
        by_number = {e.number: e for e in row.exercises}
        cells = [row.submission, row.total, row.max_total]
        for n in numbers:
            e = by_number[n]
            cells += [e.status, e.score, e.max_score, " ".join(e.diagnoses[:3])]
        cells += [row.problem, row.report]
        writer.writerow([_cell(c) for c in cells])
    return buf.getvalue()


def gradebook_json(rows: list[Row], numbers: list[int]) -> str:
    doc = {"schema_version": 1, "kit": __version__, "exercises": numbers, "rows": []}
    for row in rows:
        doc["rows"].append({
            "submission": row.submission, "total": row.total, "max_total": row.max_total, "problem": row.problem,
            "report": row.report,
            "exercises": [{"number": e.number, "slug": e.slug, "status": e.status, "score": e.score,
                           "max_score": e.max_score, "diagnoses": e.diagnoses, "note": e.note, "file": e.file}
                          for e in row.exercises],
        })
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def cache_path(output: Path | None, report_dir: Path | None) -> Path | None:
    if output is not None:
        return output.with_name(output.stem + ".cache.json")
    if report_dir is not None:
        return report_dir / "cache.json"
    return None


def load_cache(path: Path | None) -> dict[str, dict]:
    if path is None or not path.is_file():
        return {}
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return doc.get("rows", {}) if doc.get("schema") == CACHE_SCHEMA else {}


def save_cache(path: Path | None, rows: list[Row], previous: dict[str, dict]) -> None:
    if path is None:
        return
    keep = dict(previous)
    for row in rows:
        if all(e.status != "error" for e in row.exercises):  # an internal failure is worth another try
            keep[row.submission] = row.to_dict()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"schema": CACHE_SCHEMA, "rows": keep}, ensure_ascii=False), encoding="utf-8")


def report_name(submission: str, taken: set[str]) -> str:
    base = re.sub(r"[^A-Za-z0-9._-]+", "_", submission).strip("._") or "submission"
    name, i = f"{base}.html", 2
    while name in taken:
        name, i = f"{base}-{i}.html", i + 1
    taken.add(name)
    return name


# -- the batch -----------------------------------------------------------------------------------
@dataclass
class BatchResult:
    rows: list[Row]
    graded: int  # graded in this run
    cached: int  # reused from the cache
    gradebook: Path | None = None
    reports: list[Path] = field(default_factory=list)
    elapsed_s: float = 0.0


def run_batch(*, submissions_dir: Path, jobs: int = 2, output: Path | None = None, report_dir: Path | None = None,
              exercises: str | None = None, timeout: float = 30.0, progress: bool = True) -> BatchResult:
    """Grade every submission in submissions_dir; write the gradebook, the cache and the reports."""
    started = time.perf_counter()
    if not Path(submissions_dir).is_dir():
        raise UsageError(f"no such folder: {submissions_dir}")
    if output is not None and output.suffix.lower() not in GRADEBOOK_SUFFIXES:
        raise UsageError(f"the gradebook must end in .csv or .json, not {output.name!r}")
    selected = select_exercises(exercises)
    numbers = [ex.number for ex in selected]
    sources = discover(Path(submissions_dir))
    if not sources:
        raise UsageError(f"no submissions in {submissions_dir}: expected one folder or .zip per submission")
    salt = json.dumps([kit_fingerprint(), numbers, timeout])
    cache_file = cache_path(output, report_dir)
    previous = load_cache(cache_file)
    rows: dict[str, Row] = {}
    with tempfile.TemporaryDirectory(prefix="attention-kit-batch-") as scratch:
        subs = [open_submission(src, name, Path(scratch) / str(i), selected)
                for i, (src, name) in enumerate(zip(sources, names_for(sources)))]
        tasks = []
        for sub in subs:
            digest = sub.digest(salt)
            old = previous.get(sub.name)
            if old is not None and old.get("digest") == digest:
                rows[sub.name] = Row.from_dict(old)
                rows[sub.name].cached = True
                continue
            rejected = {n: sub.problem for n in numbers} if sub.problem else sub.rejected
            tasks.append({"name": sub.name, "digest": digest, "problem": sub.problem, "numbers": numbers,
                          "files": {str(n): str(p) for n, p in sub.files.items()},
                          "located": {str(n): s for n, s in sub.located.items()},
                          "rejected": {str(n): why for n, why in rejected.items()}, "timeout": timeout})
        with _progress(progress, len(subs), len(subs) - len(tasks)) as advance:
            def done(task: dict, results: list[dict]) -> None:
                duration = max((r.pop("_duration_s", 0.0) for r in results), default=0.0)
                rows[task["name"]] = Row(task["name"], task["digest"], [ExerciseResult.from_dict(r) for r in results],
                                         problem=task["problem"], duration_s=duration)
                advance(task["name"])

            run_pool(tasks, jobs, done)
        ordered = [rows[sub.name] for sub in subs]
        reports = _write_reports(ordered, subs, report_dir) if report_dir is not None else []
    save_cache(cache_file, ordered, previous)
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        text = gradebook_csv(ordered, numbers) if output.suffix.lower() == ".csv" else gradebook_json(ordered, numbers)
        output.write_text(text, encoding="utf-8")
    return BatchResult(ordered, len(tasks), len(subs) - len(tasks), output, reports, time.perf_counter() - started)


def _write_reports(rows: list[Row], subs, report_dir: Path) -> list[Path]:
    from grader.instructor.report import render_report

    report_dir.mkdir(parents=True, exist_ok=True)
    taken: set[str] = set()
    written = []
    for row, sub in zip(rows, subs):
        sources = {n: p.read_text(encoding="utf-8", errors="replace") for n, p in sub.files.items()}
        path = report_dir / report_name(row.submission, taken)
        path.write_text(render_report(row, sources), encoding="utf-8")
        row.report = str(path)
        written.append(path)
    return written


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
