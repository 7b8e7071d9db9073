"""Which exercise an interview asks, and the page the candidate starts from: the contract, no steps.

The page keeps the skeleton's imports and the entry's signatures with empty bodies, and from its
docstring only the "Contract" section (info.toml's contract when there is none). A skeleton that
runs as handed out (find-the-bug) is kept whole, since its code is the task, but without its TODO
comments, which say where the bug is.
"""
from __future__ import annotations

import ast
import random
import re
import shutil
import textwrap
import time
from pathlib import Path

from grader.catalog import Catalog, Exercise

TODO = re.compile(r"^\s*#\s*TODO\b")


class PickError(ValueError):
    """No exercise matches the --topic / --level asked for (the message lists what exists)."""


def pick(catalog: Catalog, *, number: Exercise | None, topic: str | None, level: str | None, seed: int) -> Exercise:
    """The exercise given, else one drawn with seed among those with the topic and level asked for."""
    if number is not None:
        return number
    pool = [e for e in catalog.exercises if (topic is None or topic in e.topics) and (level is None or e.level == level)]
    if not pool:
        topics = sorted({t for e in catalog.exercises for t in e.topics})
        levels = sorted({e.level for e in catalog.exercises if e.level})
        asked = " and ".join(f"{k} {v!r}" for k, v in (("topic", topic), ("level", level)) if v)
        raise PickError(f"no exercise has {asked} (topics: {', '.join(topics)}; levels: {', '.join(levels)})")
    return random.Random(seed).choice(pool)


def runs_as_handed_out(tree: ast.Module) -> bool:
    """A skeleton that raises NotImplementedError nowhere is a find-the-bug exercise."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and node.exc is not None:
            exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(exc, ast.Name) and exc.id == "NotImplementedError":
                return False
    return True


def contract_section(doc: str) -> list[str]:
    """The docstring's "Contract..." heading and its indented lines."""
    lines = doc.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("Contract")), None)
    if start is None:
        return []
    section = [lines[start]]
    for line in lines[start + 1:]:
        if line.strip() and not line.startswith((" ", "\t")):
            break
        section.append(line)
    while section and not section[-1].strip():
        section.pop()
    return section


def _stub(lines: list[str], node: ast.AST) -> list[str]:
    """A def or class kept as its header lines; every function body becomes `raise NotImplementedError`."""
    first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
    header = [line for line in lines[first - 1:node.body[0].lineno - 1] if line.strip() and not line.lstrip().startswith("#")]
    if isinstance(node, ast.ClassDef):
        out = header
        methods = [n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        for i, method in enumerate(methods):
            out += ([""] if i else []) + _stub(lines, method)
        return out or header + ["    pass"]
    indent = " " * (node.col_offset + 4)
    return header + [f"{indent}raise NotImplementedError"]


def page_text(ex: Exercise) -> str:
    """The interview page for ex."""
    source = ex.skeleton_path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    doc = ast.get_docstring(tree, clean=True) or ""
    heading = f"Interview: exercise {ex.number}, {ex.title}."
    footer = "Every save is graded. No hints until the end; q in the interview's terminal ends it."
    lines = source.splitlines()
    if runs_as_handed_out(tree):
        kept = [line for line in lines if not TODO.match(line)]
        body = "\n".join(kept[tree.body[0].end_lineno:]).strip("\n")
        text = "\n".join(line for line in doc.splitlines()[1:] if not line.startswith("Check your work"))
        return f'"""{heading}\n\n{text.strip()}\n\n{footer}\n"""\n{body}\n'
    contract = contract_section(doc) or ["Contract:", *textwrap.wrap(ex.contract, 96, initial_indent="    ",
                                                                      subsequent_indent="    ")]
    parts = []
    imports = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    if imports:
        parts.append("\n".join(lines[imports[0].lineno - 1:imports[-1].end_lineno]).strip("\n"))
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            parts.append("\n".join(_stub(lines, node)))
    docstring = "\n".join([heading, "", *contract, "", footer])
    return f'"""{docstring}\n"""\n' + "\n\n\n".join(parts) + "\n"


def write_page(ex: Exercise, folder: Path, backups: Path) -> tuple[Path, Path | None, str]:
    """Write ex's page into folder as the skeleton's file name; a different file already there is first
    copied to backups/. Returns (the page's path, the backup or None, the page's text)."""
    text = page_text(ex)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / ex.file
    backup = None
    if target.is_file() and target.read_bytes() != text.encode("utf-8"):
        backups.mkdir(parents=True, exist_ok=True)
        backup = backups / f"{target.stem}.{time.strftime('%Y%m%d-%H%M%S')}{target.suffix}"
        n = 1
        while backup.exists():
            n += 1
            backup = backups / f"{target.stem}.{time.strftime('%Y%m%d-%H%M%S')}-{n}{target.suffix}"
        shutil.copyfile(target, backup)
    target.write_text(text, encoding="utf-8")
    return target, backup, text
