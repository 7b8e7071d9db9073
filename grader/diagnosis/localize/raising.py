"""An exception raised only for some inputs (2-D input, a length the traced call does not use): the traced forward
does not raise, so the alignment finds nothing; the line that raised is the one the worker reported for that call."""
from __future__ import annotations

import ast

from grader.diagnosis.localize.model import Localization
from grader.diagnosis.localize.source import (aliases, assigned_lines, built_elsewhere, function_at, in_called_function,
                                              names_read_at, parse, passed_unshaped, size_chosen_elsewhere, statement_at)


def raising_line(verdict, source: str, codes: tuple[str, ...]) -> Localization | None:
    """The submission's own line that raised, for a verdict named runtime_error, when the failures that raised (codes)
    agree on one line and that line reads no other name for an argument (`src = x`) and is not in a helper (which
    works on what a caller passed) unless its one caller passes its arguments unshaped (passed_unshaped), and reads no
    size of another tensor (sized_by_another): else None. A size the line reads that one other line chose (size_chosen_elsewhere:
    `T = x.size(1) if cache is None else 1`) is where the shape comes from: that line."""
    if not verdict.diagnoses or verdict.diagnoses[0].id != "runtime_error":
        return None
    raised = [t for t in verdict.failures() if t.code in codes and t.line is not None]
    lines = {t.line for t in raised}
    if len(lines) != 1:
        return None
    (line,) = lines
    tree = parse(source)
    if tree is not None and len(chosen := set(size_chosen_elsewhere(source, line).values())) == 1:
        a = chosen.pop()
        return Localization(a, "output", None, f"it raised at line {line} (in {raised[0].name}), on inputs other than "
                                               f"the traced call's, on a size chosen at line {a}")
    if tree is None or statement_at(tree, line) is None \
            or in_called_function(source, line) and not passed_unshaped(source, line) \
            or any(aliases(source, a) for a in built_elsewhere(source, line).values()) or sized_by_another(source, line):
        return None
    return Localization(line, "output", None, f"it raised at line {line} (in {raised[0].name}), on inputs other than "
                                              f"the traced call's")


def shape_of(value) -> str | None:
    """The name whose shape a value reads: `x` of `x.shape` or `x.size()`."""
    if isinstance(value, ast.Attribute) and value.attr == "shape":
        value = value.value
    elif isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "size":
        value = value.func.value
    else:
        return None
    return value.id if isinstance(value, ast.Name) else None


def sized_by_another(source: str, line: int) -> bool:
    """The statement on `line` reads a size unpacked from the shape of a tensor it does not read (`B, H, T, D =
    query.shape`, then `key_padding_mask.view(B, 1, 1, T)`): when it raises on other inputs, the size may be taken from
    the wrong tensor there as well as used wrongly here."""
    tree = parse(source)
    func = function_at(tree, line) if tree is not None else None
    if func is None:
        return False
    read = set(names_read_at(tree, line, bases=True))
    for name in read:
        where = assigned_lines(func, name)
        stmt = statement_at(tree, where.pop()) if len(where) == 1 else None
        if isinstance(stmt, ast.Assign) and (base := shape_of(stmt.value)) is not None and base not in read:
            return True
    return False
