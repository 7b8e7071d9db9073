"""Submissions whose code is suspiciously alike in structure: pairs, clusters, and copies of the reference.

Each file becomes a token stream of its syntax tree with the names people choose taken away:
variables, arguments, function names and attributes of self become placeholders, constants
lose their values, docstrings, comments and layout disappear. What stays is the shape of the
code and the library calls it makes (`.transpose`, `.masked_fill`, `dim=`), which a copier cannot
rename without changing behaviour. Winnowing picks fingerprints from hashes of every k tokens in a
row; two files compare by the Jaccard similarity of their fingerprint sets. Fingerprints of the
skeleton (code everyone was given) never count. Every file is also compared with the reference
solution: those at or above the threshold are flagged "equals the reference" on their own, and the
others are grouped into clusters (connected by pairs at or above the threshold), however large a
share of the cohort a cluster is.
"""
from __future__ import annotations

import ast
import hashlib
import tempfile
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

from grader.instructor import UsageError, select_exercises
from grader.instructor.submissions import discover, names_for, open_submission
from grader.source import shown_source

K = 8  # tokens per k-gram
WINDOW = 4  # k-grams per winnowing window
MIN_FINGERPRINTS = 6  # fewer of a submission's own than this: too little code to compare


@dataclass
class Pair:
    exercise: int
    first: str
    second: str
    similarity: float


@dataclass
class Cluster:
    exercise: int
    members: list[str]
    lowest: float  # the weakest pair that links it together
    highest: float


@dataclass
class ReferenceMatch:
    exercise: int
    submission: str
    similarity: float


def _drop_docstrings(tree: ast.AST) -> None:
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list):
            kept = [s for s in body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
            node.body = kept or [ast.Pass()]


def tokens(source: str) -> list[str]:
    """The normalised token stream of a file's syntax tree (raises SyntaxError)."""
    tree = ast.parse(source)
    _drop_docstrings(tree)
    out: list[str] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.expr_context):
            return
        if isinstance(node, ast.Name):
            out.append("name")
        elif isinstance(node, ast.Constant):
            out.append(f"const:{type(node.value).__name__}")
        elif isinstance(node, ast.arg):
            out.append("arg")
        elif isinstance(node, ast.Attribute):
            visit(node.value)
            own = isinstance(node.value, ast.Name) and node.value.id == "self"
            out.append("." + ("attr" if own else node.attr))
        elif isinstance(node, ast.keyword):
            out.append(f"{node.arg or '**'}=")
            visit(node.value)
        elif isinstance(node, ast.alias):
            out.append(f"import:{node.name}")
        else:
            out.append(type(node).__name__)
            for child in ast.iter_child_nodes(node):
                visit(child)

    visit(tree)
    return out


def _hash(gram: list[str]) -> int:
    return int.from_bytes(hashlib.blake2b("\x1f".join(gram).encode(), digest_size=8).digest(), "big")


def kgram_hashes(stream: list[str], k: int = K) -> list[int]:
    return [_hash(stream[i:i + k]) for i in range(len(stream) - k + 1)]


def winnow(hashes: list[int], window: int = WINDOW) -> set[int]:
    """The smallest hash of every window of consecutive k-grams (the classic winnowing selection)."""
    if len(hashes) <= window:
        return set(hashes)
    return {min(hashes[i:i + window]) for i in range(len(hashes) - window + 1)}


def fingerprints(source: str, skeleton: str | None = None) -> set[int]:
    """Winnowed fingerprints of source, minus every k-gram of the skeleton."""
    own = winnow(kgram_hashes(tokens(source)))
    if skeleton:
        own -= set(kgram_hashes(tokens(skeleton)))
    return own


def jaccard(a: set[int], b: set[int]) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0


@dataclass
class ExerciseFindings:
    pairs: list[Pair]
    clusters: list[Cluster]
    reference: list[ReferenceMatch]
    skipped: list[str]


def _prints_of(sources: dict[str, str], exercise: int, skeleton: str | None) -> tuple[dict[str, set[int]], list[str]]:
    prints, skipped = {}, []
    for name, source in sources.items():
        try:
            fp = fingerprints(source, skeleton)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            skipped.append(f"{name}: exercise {exercise} does not parse")
            continue
        if len(fp) < MIN_FINGERPRINTS:
            skipped.append(f"{name}: exercise {exercise} has too little code of its own to compare")
            continue
        prints[name] = fp
    return prints, skipped


def clusters_of(pairs: list[Pair], exercise: int) -> list[Cluster]:
    """Connected groups of the pairs (union-find), largest first."""
    parent: dict[str, str] = {}

    def root(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for p in pairs:
        parent[root(p.first)] = root(p.second)
    groups: dict[str, list[Pair]] = {}
    for p in pairs:
        groups.setdefault(root(p.first), []).append(p)
    out = [Cluster(exercise, sorted({n for p in ps for n in (p.first, p.second)}),
                   min(p.similarity for p in ps), max(p.similarity for p in ps)) for ps in groups.values()]
    return sorted(out, key=lambda c: (-len(c.members), -c.highest, c.members))


def compare_exercise(sources: dict[str, str], *, exercise: int, skeleton: str | None, reference: str | None = None,
                     threshold: float = 0.8) -> ExerciseFindings:
    """One exercise: files equal to the reference, then pairs and clusters among the others."""
    prints, skipped = _prints_of(sources, exercise, skeleton)
    matches = []
    if reference is not None:
        ref = fingerprints(reference, skeleton)
        matches = sorted((ReferenceMatch(exercise, name, round(jaccard(fp, ref), 3)) for name, fp in prints.items()
                          if jaccard(fp, ref) >= threshold), key=lambda m: (-m.similarity, m.submission))
    copied = {m.submission for m in matches}
    names = sorted(n for n in prints if n not in copied)
    pairs = [Pair(exercise, a, b, round(jaccard(prints[a], prints[b]), 3)) for a, b in combinations(names, 2)]
    pairs = sorted((p for p in pairs if p.similarity >= threshold), key=lambda p: (-p.similarity, p.first, p.second))
    return ExerciseFindings(pairs, clusters_of(pairs, exercise), matches, skipped)


def similar_pairs(sources: dict[str, str], *, exercise: int, skeleton: str | None,
                  threshold: float = 0.8) -> tuple[list[Pair], list[str]]:
    """(pairs at or above threshold, most similar first; names left out and why) for one exercise."""
    found = compare_exercise(sources, exercise=exercise, skeleton=skeleton, threshold=threshold)
    return found.pairs, found.skipped


@dataclass
class SimilarityReport:
    pairs: list[Pair]
    skipped: list[str]
    submissions: int
    clusters: list[Cluster]
    reference: list[ReferenceMatch]


def similarity_report(*, submissions_dir, threshold: float = 0.8, exercises: str | None = None) -> SimilarityReport:
    """Compare every submission in submissions_dir with the reference and with each other, exercise by exercise."""
    if not Path(submissions_dir).is_dir():
        raise UsageError(f"no such folder: {submissions_dir}")
    if not 0.0 <= threshold <= 1.0:
        raise UsageError(f"the threshold is a similarity between 0 and 1, not {threshold}")
    selected = select_exercises(exercises)
    sources = discover(Path(submissions_dir))
    if len(sources) < 2:
        raise UsageError(f"{submissions_dir} holds {len(sources)} submission(s); comparing needs two or more")
    report = SimilarityReport([], [], len(sources), [], [])
    with tempfile.TemporaryDirectory(prefix="attention-kit-similarity-") as scratch:
        subs = [open_submission(src, name, Path(scratch) / str(i), selected)
                for i, (src, name) in enumerate(zip(sources, names_for(sources)))]
        for ex in selected:
            code = {s.name: shown_source(s.files[ex.number]).text
                    for s in subs if ex.number in s.files}
            found = compare_exercise(code, exercise=ex.number, threshold=threshold,
                                     skeleton=ex.skeleton_path.read_text(encoding="utf-8"),
                                     reference=ex.solution_path.read_text(encoding="utf-8"))
            report.pairs += found.pairs
            report.clusters += found.clusters
            report.reference += found.reference
            report.skipped += found.skipped
    report.pairs.sort(key=lambda p: (-p.similarity, p.exercise, p.first, p.second))
    return report
