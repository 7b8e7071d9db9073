"""`grade merge`: partial gradebooks from `grade batch --shard I/N` back into the gradebook an unsharded run writes.

gradebook.merge reads the parts (typed: a malformed one is refused naming the file and the key) and checks that
exactly the shards 1..N are there, once each, graded alike. The weights and overrides recorded in the parts are
applied again (or those given to `grade merge`, which replace them). A shell glob such as part_*.json also finds
the batch caches written beside the parts (part_I.cache.json): those are skipped and named; any other file that is
not a partial gradebook is refused with what it is.
"""
from __future__ import annotations

from pathlib import Path

from grader.instructor import UsageError
from grader.instructor.batch import check_canvas, write_canvas
from grader.instructor.gradebook import Merged, check_name, merge  # noqa: F401 (merge: the parts read and checked)
from grader.instructor.rubric import Rubric, apply, load_rubric
from grader.instructor.outputs import OutputDir, OutputError


def merge_gradebooks(*, parts: list[Path], output: Path, weights: str | None = None, rubric: Path | None = None,
                     overrides: Path | None = None, canvas: Path | None = None, assignment: str = "attention-kit"
                     ) -> Merged:
    """Merge partial gradebooks into output (.json: exactly an unsharded run's gradebook; .csv likewise).

    Weights and overrides: those the parts record, each replaced by the options given here.
    """
    output = Path(output)
    check_name(output)
    if any(Path(p).resolve() == output.resolve() for p in parts):
        raise UsageError(f"{output} is one of the parts; write the merged gradebook elsewhere")
    given = load_rubric(weights=weights, rubric=rubric, overrides=overrides)
    merged = merge(parts)
    if given is not None:
        recorded = merged.rubric or Rubric()
        merged.rubric = Rubric(given.weights if weights is not None or rubric is not None else recorded.weights,
                               given.overrides if overrides is not None else recorded.overrides)
    if merged.rubric is not None:
        merged.rubric.check(merged.numbers)
    merged.unapplied = apply(merged.rubric, merged.rows, merged.numbers)
    if canvas is not None:
        check_canvas(Path(canvas), {} if any(r.person is not None for r in merged.rows) else None, None)
    try:
        with OutputDir(output.parent) as folder:
            folder.write(output.name, merged.text(output.name))
    except (OutputError, OSError) as exc:
        raise UsageError(f"cannot write {output}: {exc}") from None
    if canvas is not None:
        merged.unapplied = list(merged.unapplied) + write_canvas(Path(canvas), merged.rows, assignment)
    return merged
