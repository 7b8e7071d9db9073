"""The batch summary on the terminal: one line per submission that fits 80 columns, whatever the names."""
from __future__ import annotations

from rich.table import Table
from rich.text import Text

from grader.instructor.markup import clean
from grader.instructor.rubric import fmt

MARKS = {"passed": ("✓", "green"), "failed": ("✗", "red"), "not_started": ("·", "yellow"), "missing": ("–", "yellow"),
         "rejected": ("!", "red"), "error": ("!", "red")}
LEGEND = "✓ passed  ✗ failed  · not started  – missing  ! rejected or grader error"


def marks(row) -> Text:
    text = Text()
    for e in row.exercises:
        mark, style = MARKS.get(e.status, ("?", ""))
        text.append(mark, style=style)
    return text


def one_line(text: str) -> str:
    """A cell of the summary: a name with a newline must not start a row of its own (a fake "24/24")."""
    return clean(text, 200).replace("\n", "␤").replace("\t", " ")


def summary_table(rows, numbers: list[int]) -> Table:
    """submission · total · one mark per exercise · the first diagnosis; long cells end in an ellipsis."""
    span = f"{numbers[0]}–{numbers[-1]}" if numbers == list(range(numbers[0], numbers[-1] + 1)) and len(numbers) > 1 \
        else ",".join(map(str, numbers))
    table = Table(box=None, pad_edge=False, collapse_padding=True)
    table.add_column("submission", no_wrap=True, overflow="ellipsis", max_width=28, ratio=2)
    table.add_column("total", no_wrap=True, justify="right", min_width=7)
    table.add_column(f"ex {span}" if len(span) <= len(numbers) + 3 else "exercises", no_wrap=True,
                     min_width=len(numbers))
    table.add_column("top diagnosis", no_wrap=True, overflow="ellipsis", ratio=3)
    for row in rows:
        top = next((d for e in row.exercises for d in e.diagnoses[:1]), "")
        table.add_row(Text(one_line(row.submission)), f"{fmt(row.points)}/{fmt(row.max_points)}", marks(row),
                      Text(one_line(row.problem or top)))
    return table


def notes_line(rows) -> str | None:
    """How many submissions have notes (ambiguous, refused or empty files), if any."""
    noted = sum(1 for row in rows if row.notes)
    if not noted:
        return None
    return (f"{noted} submission{'s have' if noted != 1 else ' has'} notes (ambiguous, refused or empty files): "
            f"see the note column.")


def closing_lines(result, *, shard: str | None, report_dir) -> list[str]:
    """After the table: what was graded, cached or absent (roster entries without a submission) and how long it
    took, then where the gradebook, the reports and the cohort page went."""
    absent = sum(1 for row in result.rows if not row.digest)
    count = f"{len(result.rows) - absent} submission{'s' if len(result.rows) - absent != 1 else ''}"
    absent_text = f", {absent} in the roster without a submission" if absent else ""
    lines = [f"\n{count}{f' in shard {shard}' if shard else ''}: {result.graded} graded, {result.cached} unchanged "
             f"since the last run{absent_text}, in {result.elapsed_s:.1f} s."]
    for label, path in (("gradebook", result.gradebook), ("reports", report_dir if result.reports else None),
                        ("cohort page", result.index)):
        if path:
            lines.append(f"{label + ':':<13}{path}")
    return lines
