"""The rule for a call traced after one that reproduced every stage: another setting of a switch the suites sweep
(flash=True), another path through the same weights."""
from __future__ import annotations

import ast

from grader.diagnosis.localize.alignment import Alignment
from grader.diagnosis.localize.source import (assigned_lines, attributes_read_at, buffers, function_at, names_read_at,
                                              in_called_function, parse, reads_size, statement_at)
from grader.diagnosis.localize.model import Localization
from grader.diagnosis.localize.rules.abstain import ABSTAIN
from grader.diagnosis.localize.rules.kinds import FUSED


def reads_setting(source: str, line: int, traced: set[int]) -> bool:
    """The statement on `line` reads a value that may be wrong where it is made: a parameter of a helper (what a
    caller passed; the entry point's are the inputs), a local name assigned on a line no traced tensor comes from (`drop = ...`, then
    `dropout_p=drop`; not a size, `q * hs ** -0.5`, unless passed as a setting), or a buffer or mask of self
    (built in __init__, maybe the other way round)."""
    tree = parse(source)
    func = function_at(tree, line) if tree is not None else None
    stmt = statement_at(tree, line) if func is not None else None
    if stmt is None:
        return True
    params = {a.arg for a in ast.walk(func.args) if isinstance(a, ast.arg)} - {"self"} if in_called_function(source, line) else set()
    keyed = {n.id for k in ast.walk(stmt) if isinstance(k, ast.keyword) for n in ast.walk(k.value) if isinstance(n, ast.Name)}
    for name in names_read_at(tree, line):
        where = assigned_lines(func, name)
        size = name not in keyed and all(reads_size(source, a) for a in where)
        if name in params or not where and name not in params_of(func) or where and not where <= traced and not size:
            return True
    held = buffers(tree)
    return any(a in held or "mask" in a.lower() for a in attributes_read_at(source, line))


def params_of(func) -> set[str]:
    return {a.arg for a in ast.walk(func.args) if isinstance(a, ast.arg)}


def spans_lines(source: str, line: int) -> bool:
    """The statement on `line` is written over several lines: the argument that differs may be on any of them."""
    tree = parse(source)
    stmt = statement_at(tree, line) if tree is not None else None
    return stmt is None or (stmt.end_lineno or stmt.lineno) != stmt.lineno


ARITH = {"div", "mul", "add", "sub", "true_divide", "multiply", "__truediv__", "__mul__", "__rmul__", "__add__",
         "__radd__", "__sub__", "__rsub__"}


def operator_on_line(source: str, line: int, op: str) -> bool:
    """An arithmetic op the statement on `line` writes whole on that line (`q / math.sqrt(d)` as the first argument of a
    call spanning several lines): the traced op is that expression, not an argument written on another line."""
    tree = parse(source)
    stmt = statement_at(tree, line) if tree is not None else None
    return stmt is not None and op in ARITH and any(
        isinstance(n, ast.BinOp) and n.lineno == line == (n.end_lineno or n.lineno) for n in ast.walk(stmt))


def other_path(al: Alignment):
    """The traced call before this one ran every stage right (the same weights and input with the switch off), so the
    lines it ran compute right values. The first entry that differs on this path is on a line only this path runs:
    that line, unless it reads a value made elsewhere (a setting, a helper's argument, a buffer) or spans several
    lines (which of its arguments differs is not known, unless the entry is an arithmetic op written whole on its line). An entry that
    differs on a line both paths run (`q = q * scale` before the branch, right for the manual path, which does not
    scale again) makes the shared line and this path's call equally suspect: no line."""
    if not al.ran or al.pick is None:
        return None
    i, e = al.pick
    if any(x.line in al.ran for j, x in al.rest if j <= i):
        return ABSTAIN  # a value both paths use differs here: right for the other path, or wrong for both
    if any(x.line != e.line for j, x in al.rest if j < i):
        return ABSTAIN  # several of this path's lines differ before it: which one starts it is not known
    if reads_setting(al.source, e.line, {x.line for x in al.entries}) or (
            spans_lines(al.source, e.line) and not operator_on_line(al.source, e.line, e.op)):
        return ABSTAIN
    evidence = (f"{al.prefix()}the same weights and input give every stage right on the other path; on this one, "
                f"line {e.line} ({e.op}), which only this path runs, is the first that differs")
    if e.op in FUSED:  # it computes the context the other path computes step by step
        return Localization(e.line, "context", al.through.name if al.through else None, evidence)
    return al.at(e.line, al.failing, evidence)
