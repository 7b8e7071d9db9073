"""Submissions whose code is suspiciously alike: copies of the reference, of well-known public code, and of each other.

Files are found and decoded exactly as `grade batch` finds and decodes them (submissions.py, then
grader.source: BOM, encoding cookies, notebooks). Each becomes its normal form (normalize.py: one
spelling per construct, small helpers inlined, independent statements in one order) and two sets of
fingerprints: winnowed hashes of every K tokens in a row of its placeholder token stream, and hashes
of its statements (a structural measure that ignores their order). Two files score the mean of the
two Jaccard similarities. Fingerprints of the skeleton (code everyone was given) never count.

Every file is compared with the reference solution and with the stored fingerprints of public
implementations (public_fingerprints.json, hashes only, with the source's name, address and
licence); files at or above the threshold are flagged on their own, the others are grouped into
clusters of mutually similar submissions (linked by pairs at or above the threshold). Pairwise scores
come from one matrix product per exercise, so 300 submissions cost a fraction of a second each.
"""
from __future__ import annotations

import ast
import hashlib
import json
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path

import numpy as np

from grader.instructor import UsageError, select_exercises
from grader.instructor.normalize import VERSION, normal_form, tokens_of
from grader.instructor.submissions import discover, looks_like_one_submission, names_for, open_submission
from grader.source import Unreadable, read_submission

K = 8  # tokens per k-gram
WINDOW = 4  # k-grams per winnowing window
MIN_FINGERPRINTS = 6  # fewer of a submission's own k-grams than this: too little code to compare
MIN_STATEMENT_TOKENS = 4  # shorter statements (`pass`, `x = y`) say nothing about who wrote them
PUBLIC_DATA = "public_fingerprints.json"
PARALLEL_FROM = 200  # distinct files; fewer are fingerprinted in this process


def _hash(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")


@dataclass
class Prints:
    """A file's fingerprints, each with the source lines it covers."""
    kgrams: dict[int, tuple[int, ...]] = field(default_factory=dict)  # the lines of its tokens
    statements: dict[int, tuple[int, int]] = field(default_factory=dict)  # hash of (statement, occurrence): first, last

    def minus(self, other: Prints | None) -> Prints:
        if other is None:
            return self
        return Prints({h: s for h, s in self.kgrams.items() if h not in other.kgrams},
                      {h: s for h, s in self.statements.items() if h not in other.statements})


def winnow(hashes: list[int], window: int = WINDOW) -> list[int]:
    """Positions of the smallest hash of every window of consecutive k-grams (winnowing's selection)."""
    if len(hashes) <= window:
        return list(range(len(hashes)))
    picked = {min(range(i, i + window), key=lambda j: (hashes[j], -j)) for i in range(len(hashes) - window + 1)}
    return sorted(picked)


def prints_of(source: str) -> Prints:
    """Fingerprints of a file's normal form (raises SyntaxError, ValueError, RecursionError)."""
    memo: dict[int, list] = {}
    tree = normal_form(source, memo)
    stream = tokens_of(tree, memo)
    words = [t for t, _ in stream]
    hashes = [_hash("\x1f".join(words[i:i + K])) for i in range(len(words) - K + 1)]
    out = Prints()
    for i in winnow(hashes):
        out.kgrams.setdefault(hashes[i], tuple(sorted({line for _, line in stream[i:i + K]})))
    seen: dict[int, int] = {}
    for node in list(_statements(tree)):  # a list: the headers it makes stay alive while memo holds their id()
        text = [t for t, _ in tokens_of(node, memo)]
        if len(text) < MIN_STATEMENT_TOKENS:
            continue
        h = _hash(" ".join(text))
        seen[h] = seen.get(h, 0) + 1
        span = (node.lineno, getattr(node, "end_lineno", None) or node.lineno)
        out.statements[_hash(f"{h}#{seen[h]}")] = span
    return out


def _statements(tree: ast.AST):
    """Simple statements, and the headers of compound ones (their bodies count statement by statement)."""
    for field in ("body", "orelse", "finalbody", "handlers"):
        for node in getattr(tree, field, None) or []:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                head = ast.copy_location(ast.Expr(ast.Tuple([ast.arg("a") for _ in node.args.args], ast.Load())), node)
                head.end_lineno = node.lineno
                yield head
            elif isinstance(node, (ast.If, ast.While)):
                yield ast.copy_location(ast.Expr(node.test), node)
            elif isinstance(node, (ast.For, ast.AsyncFor)):
                yield ast.copy_location(ast.Expr(ast.Tuple([node.target, node.iter], ast.Load())), node)
            elif not hasattr(node, "body"):
                yield node
            yield from _statements(node)  # a class: only what it holds


def jaccard(a: dict | set, b: dict | set) -> float:
    a, b = set(a), set(b)
    return len(a & b) / len(a | b) if a or b else 0.0


def similarity(a: Prints, b: Prints) -> float:
    """The score of a pair: mean of the k-gram and the statement Jaccard similarities."""
    return (jaccard(a.kgrams, b.kgrams) + jaccard(a.statements, b.statements)) / 2


def matrix(prints: list[Prints]) -> np.ndarray:
    """similarity() of every pair at once: a matrix product over the fingerprints two or more files share
    (the others only count in each file's size)."""
    n = len(prints)
    total = np.zeros((n, n))
    for kind in ("kgrams", "statements"):
        sets = [getattr(p, kind) for p in prints]
        counts = Counter(h for s in sets for h in s)
        columns = {h: i for i, h in enumerate(h for h, c in counts.items() if c > 1)}
        m = np.zeros((n, max(len(columns), 1)), dtype=np.float32)
        for i, s in enumerate(sets):
            m[i, [columns[h] for h in s if h in columns]] = 1.0
        inter = (m @ m.T).astype(np.float64)
        sizes = np.array([len(s) for s in sets], dtype=np.float64)
        union = sizes[:, None] + sizes[None, :] - inter
        total += np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)
    return total / 2


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


@dataclass
class PublicMatch:
    exercise: int
    submission: str
    similarity: float
    source: str  # e.g. "nanoGPT, CausalSelfAttention"
    url: str
    licence: str


@dataclass
class PublicSource:
    slug: str
    name: str
    url: str
    licence: str
    prints: Prints


@cache
def public_sources() -> tuple[PublicSource, ...]:
    """The stored fingerprints of public implementations (none if they were made by another normal form)."""
    doc = json.loads(resources.files("grader.instructor").joinpath(PUBLIC_DATA).read_text(encoding="utf-8"))
    if doc.get("normal_form") != VERSION or doc.get("k") != K or doc.get("window") != WINDOW:
        return ()
    return tuple(PublicSource(s["exercise"], s["name"], s["url"], s["licence"],
                              Prints({int(h, 16): () for h in s["kgrams"]},
                                     {int(h, 16): (0, 0) for h in s["statements"]}))
                 for s in doc["sources"])


@dataclass
class ExerciseFindings:
    pairs: list[Pair]
    clusters: list[Cluster]
    reference: list[ReferenceMatch]
    skipped: list[str]
    public: list[PublicMatch] = field(default_factory=list)
    prints: dict[str, Prints] = field(default_factory=dict)


def _safe_prints(source: str) -> Prints | None:
    try:
        return prints_of(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def fingerprint_many(texts: list[str], jobs: int = 1) -> dict[str, Prints | None]:
    """prints_of() of each distinct text (None: does not parse), in `jobs` processes when there are many."""
    distinct = sorted(set(texts))
    if jobs <= 1 or len(distinct) < PARALLEL_FROM:
        return {t: _safe_prints(t) for t in distinct}
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    try:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            return dict(zip(distinct, pool.map(_safe_prints, distinct, chunksize=32)))
    except (BrokenProcessPool, OSError):  # a worker killed (out of memory) or none could start: do it here
        return {t: _safe_prints(t) for t in distinct}


def _prints_of(sources: dict[str, str], exercise: int, skeleton: Prints | None,
               known: dict[str, Prints | None] | None = None) -> tuple[dict[str, Prints], list[str]]:
    known = known if known is not None else fingerprint_many(list(sources.values()))
    prints, skipped = {}, []
    for name, source in sources.items():
        fp = known[source]
        if fp is None:
            skipped.append(f"{name}: exercise {exercise} does not parse")
            continue
        fp = fp.minus(skeleton)
        if len(fp.kgrams) < MIN_FINGERPRINTS:
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


def _skeleton_prints(skeleton: str | None) -> Prints | None:
    if not skeleton:
        return None
    try:
        tree = normal_form(skeleton)
    except (SyntaxError, ValueError, RecursionError):
        return None
    stream = [t for t, _ in tokens_of(tree)]
    every = {_hash("\x1f".join(stream[i:i + K])): () for i in range(len(stream) - K + 1)}
    return Prints(every, prints_of(skeleton).statements)


def compare_exercise(sources: dict[str, str], *, exercise: int, skeleton: str | None, reference: str | None = None,
                     threshold: float = 0.8, slug: str | None = None,
                     known: dict[str, Prints | None] | None = None) -> ExerciseFindings:
    """One exercise: files equal to the reference or to a public implementation, then pairs and clusters.
    known: fingerprints already computed (fingerprint_many) by text."""
    base = _skeleton_prints(skeleton)
    prints, skipped = _prints_of(sources, exercise, base, known)
    names = sorted(prints)
    found = ExerciseFindings([], [], [], skipped, prints=prints)
    ref = prints_of(reference).minus(base) if reference is not None else None
    publics = [s for s in public_sources() if s.slug == slug]
    for name in names:
        if ref is not None and (score := similarity(prints[name], ref)) >= threshold:
            found.reference.append(ReferenceMatch(exercise, name, round(score, 3)))
        best: dict[str, tuple[float, PublicSource]] = {}
        for source in publics:  # a source may be stored in several variants (as published, adapted)
            score = similarity(prints[name], source.prints.minus(base))
            if score >= threshold and score > best.get(source.name, (-1.0, None))[0]:
                best[source.name] = (score, source)
        for score, source in best.values():
            found.public.append(PublicMatch(exercise, name, round(score, 3), source.name, source.url, source.licence))
    found.reference.sort(key=lambda m: (-m.similarity, m.submission))
    found.public.sort(key=lambda m: (-m.similarity, m.submission, m.source))
    explained = {m.submission for m in found.reference} | {m.submission for m in found.public}
    rest = [n for n in names if n not in explained]
    scores = matrix([prints[n] for n in rest]) if rest else np.zeros((0, 0))
    rows, cols = np.nonzero(np.triu(scores >= threshold - 1e-9, k=1))
    found.pairs = sorted((Pair(exercise, rest[i], rest[j], round(float(scores[i, j]), 3)) for i, j in zip(rows, cols)),
                         key=lambda p: (-p.similarity, p.first, p.second))
    found.clusters = clusters_of(found.pairs, exercise)
    return found


def similar_pairs(sources: dict[str, str], *, exercise: int, skeleton: str | None,
                  threshold: float = 0.8) -> tuple[list[Pair], list[str]]:
    """(pairs at or above threshold, most similar first; names left out and why) for one exercise."""
    found = compare_exercise(sources, exercise=exercise, skeleton=skeleton, threshold=threshold)
    return found.pairs, found.skipped


def matching_lines(a: Prints, b: Prints) -> set[int]:
    """Lines of a's file covered by a fingerprint that b shares."""
    lines: set[int] = {line for h, covered in a.kgrams.items() if h in b.kgrams for line in covered}
    for h, (first, last) in a.statements.items():
        if h in b.statements and first:
            lines.update(range(first, last + 1))
    return lines


@dataclass
class SimilarityReport:
    pairs: list[Pair]
    skipped: list[str]
    submissions: int
    clusters: list[Cluster]
    reference: list[ReferenceMatch]
    public: list[PublicMatch] = field(default_factory=list)
    threshold: float = 0.8
    files: dict[tuple[int, str], str] = field(default_factory=dict)  # (exercise, submission) -> text compared
    prints: dict[tuple[int, str], Prints] = field(default_factory=dict)
    references: dict[int, str] = field(default_factory=dict)  # exercise -> reference solution text


def read_exercise_files(subs, number: int) -> tuple[dict[str, str], list[str]]:
    """Each submission's file for one exercise, decoded as the grader decodes it; why others are left out."""
    texts, skipped = {}, []
    for s in subs:
        if number in s.rejected:
            skipped.append(f"{s.name}: exercise {number}: {s.rejected[number]}")
        if number not in s.files:
            continue
        try:
            texts[s.name] = read_submission(s.files[number])
        except Unreadable as exc:
            skipped.append(f"{s.name}: exercise {number}: {exc}")
    return texts, skipped


def findings_for(ex, code: dict[str, str], *, threshold: float, known=None,
                 reference: str | None = None) -> ExerciseFindings:
    """compare_exercise for one exercise of the catalog: its skeleton left out, its reference (read here unless
    given) and public implementations compared with."""
    return compare_exercise(code, exercise=ex.number, threshold=threshold, slug=ex.slug, known=known,
                            skeleton=ex.skeleton_path.read_text(encoding="utf-8"),
                            reference=ex.solution_path.read_text(encoding="utf-8") if reference is None else reference)


def integrity_flags(subs, selected, *, threshold: float = 0.8) -> list[tuple[str, int, str]]:
    """(submission, exercise, what) for the cohort page's integrity list: copies of the reference, matches of a
    public implementation, and submissions alike above threshold (each member of a group, naming the others)."""
    flags = []
    for ex in selected:
        code, _ = read_exercise_files(subs, ex.number)
        if len(code) < 1:
            continue
        found = findings_for(ex, code, threshold=threshold)
        flags += [(m.submission, ex.number, f"{m.similarity:.2f} alike the reference solution") for m in found.reference]
        flags += [(m.submission, ex.number, f"{m.similarity:.2f} alike {m.source} ({m.url})") for m in found.public]
        for c in found.clusters:
            for name in c.members:
                others = [m for m in c.members if m != name]
                shown = ", ".join(others[:4]) + (f" and {len(others) - 4} more" if len(others) > 4 else "")
                flags.append((name, ex.number, f"{c.lowest:.2f}–{c.highest:.2f} alike {shown}"))
    return sorted(flags, key=lambda f: (f[0], f[1]))


def similarity_report(*, submissions_dir, threshold: float = 0.8, exercises: str | None = None,
                      jobs: int = 2) -> SimilarityReport:
    """Compare every submission in submissions_dir with the reference, public code and each other, per exercise;
    files are fingerprinted in `jobs` processes."""
    if not Path(submissions_dir).is_dir():
        raise UsageError(f"no such folder: {submissions_dir}")
    if not 0.0 <= threshold <= 1.0:
        raise UsageError(f"the threshold is a similarity between 0 and 1, not {threshold}")
    selected = select_exercises(exercises)
    own = looks_like_one_submission(Path(submissions_dir), selected)
    if own is not None:
        raise UsageError(f"{submissions_dir} looks like one submission (it holds {own}); pass the folder that "
                         f"holds every submission, one folder or .zip each")
    sources = discover(Path(submissions_dir))
    if len(sources) < 2:
        raise UsageError(f"{submissions_dir} holds {len(sources)} submission(s); comparing needs two or more")
    report = SimilarityReport([], [], len(sources), [], [], threshold=threshold)
    with tempfile.TemporaryDirectory(prefix="attention-kit-similarity-") as scratch:
        subs = [open_submission(src, name, Path(scratch) / str(i), selected)
                for i, (src, name) in enumerate(zip(sources, names_for(sources)))]
        report.skipped += [f"{s.name}: {s.problem}" for s in subs if s.problem]
        files = {ex.number: read_exercise_files(subs, ex.number) for ex in selected}
        known = fingerprint_many([t for code, _ in files.values() for t in code.values()], jobs)
        for ex in selected:
            code, unread = files[ex.number]
            reference = ex.solution_path.read_text(encoding="utf-8")
            found = findings_for(ex, code, threshold=threshold, known=known, reference=reference)
            report.pairs += found.pairs
            report.clusters += found.clusters
            report.reference += found.reference
            report.public += found.public
            report.skipped += unread + found.skipped
            report.references[ex.number] = reference
            for name, text in code.items():
                report.files[(ex.number, name)] = text
            for name, fp in found.prints.items():
                report.prints[(ex.number, name)] = fp
    report.pairs.sort(key=lambda p: (-p.similarity, p.exercise, p.first, p.second))
    return report
