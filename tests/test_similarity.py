"""grade similarity: disguised copies score high, independent solutions low, skeletons not at all; files are
read as the grader reads them; public implementations are named; HTML and text stay safe and readable."""
import json
import os
import re
import zipfile
from pathlib import Path

import nbformat
import pytest

from grader.catalog import load_catalog
from grader.instructor import similarity
from grader.instructor.normalize import tokens
from grader.instructor.similarity import (Cluster, Pair, Prints, PublicSource, SimilarityReport, compare_exercise,
                                          prints_of, public_sources, similar_pairs)
from grader.instructor.similarity_view import WIDTH, summary_text
from tests.conftest import CORPUS, grade_here as run_grade
from tests.similarity_disguise import disguise, disguised

EXERCISES = load_catalog().exercises
HAND_WRITTEN = [ex for ex in EXERCISES if ex.number <= 5]


def score(a: str, b: str, ex) -> float:
    found = compare_exercise({"a": a, "b": b}, exercise=ex.number, skeleton=ex.skeleton_path.read_text(),
                             threshold=0.0)
    return found.pairs[0].similarity if found.pairs else 0.0


def same(a: str, b: str) -> bool:
    return [t for t, _ in tokens(a)] == [t for t, _ in tokens(b)]


HEAD = "import math\nimport torch\nimport torch.nn.functional as F\nfrom torch import nn\n"


@pytest.mark.parametrize("a, b", [
    ("y = q @ k.transpose(-2, -1)", "y = torch.matmul(q, torch.transpose(k, -2, -1))"),
    ("y = a.bmm(b)", "y = a @ b"),
    ("w = scores.softmax(dim=-1)", "w = F.softmax(scores, -1)"),
    ("w = torch.softmax(scores, dim=-1)", "w = torch.nn.functional.softmax(scores, dim=-1)"),
    ("s = x.size(-1)", "s = x.shape[-1]"),
    ("y = s / math.sqrt(d)", "y = s / d ** 0.5"),
    ("y = s * (1.0 / math.sqrt(d))", "y = s / torch.sqrt(d)"),
    ("s.masked_fill_(m, float('-inf'))", "s = s.masked_fill(m, -math.inf)"),
    ("y = torch.div(a, b.mul(c))", "y = a / (b * c)"),
    ("x: int = 3\nx += 1", "x = 3\nx = x + 1"),
    ("a = f(x)\nb = g(x)\nc = a + b", "b = g(x)\na = f(x)\nc = a + b"),
    ("def h(s):\n    '''doc'''\n    return s.softmax(-1)\ndef f(x):\n    print(x)\n    return h(x @ x)",
     "def f(y):\n    assert y is not None\n    return torch.softmax(torch.matmul(y, y), dim=-1)"),
    ("class A:\n    def _w(self, s):\n        t = s * 2\n        return t.softmax(-1)\n    def forward(self, x):\n"
     "        return self._w(x)", "class A:\n    def forward(self, z):\n        return (z * 2).softmax(-1)"),
], ids=["matmul", "bmm", "softmax-method", "softmax-module", "size", "sqrt", "rsqrt", "inplace", "div-mul", "augassign",
        "reorder", "helper", "method-helper"])
def test_equivalent_spellings_have_one_normal_form(a, b):
    assert same(HEAD + a, HEAD + b)


def test_dependent_statements_keep_their_order():
    assert not same("a = f(x)\nb = a.sum()\n", "b = a.sum()\na = f(x)\n")


def test_the_normal_form_stays_cheap_on_hostile_files():
    """Inlining `return x + x` forty calls deep would double forty times; a block of thousands of statements
    would be reordered in quadratic time. Both stay bounded, and a helper some call still needs is kept."""
    nested = tokens("def h(x):\n    return x + x\ny = " + "h(" * 40 + "z" + ")" * 40 + "\n")
    assert len(nested) < 50_000 and ("FunctionDef", 1) in nested
    long = "\n".join(f"a{i} = f(b{i})" for i in range(1000))
    assert len(tokens(long)) == 1000 * 5 + 1


@pytest.mark.parametrize("ex", EXERCISES, ids=lambda e: e.slug)
def test_a_disguised_copy_scores_high(ex):
    copy = disguised(ex)
    compile(copy, ex.file, "exec")
    assert copy.split() != ex.solution_path.read_text().split()
    assert score(ex.solution_path.read_text(), copy, ex) >= 0.95


@pytest.mark.parametrize("ex", HAND_WRITTEN, ids=lambda e: e.slug)
def test_independent_solutions_score_low(ex):
    others = sorted((CORPUS / f"{ex.number:02d}").glob("pass_*.py"))
    assert others, "the corpus has alternative correct solutions for every hand-written exercise"
    for other in others:
        assert score(ex.solution_path.read_text(), other.read_text(), ex) < 0.6, other.name


def test_the_skeleton_does_not_count():
    ex = load_catalog().get(5)  # its skeleton is a whole (buggy) module
    skeleton = ex.skeleton_path.read_text()
    pairs, skipped = similar_pairs({"a": skeleton, "b": skeleton, "c": "# mine\n" + skeleton}, exercise=5,
                                   skeleton=skeleton, threshold=0.0)
    assert pairs == [] and len(skipped) == 3 and "too little code" in skipped[0]
    pairs, _ = similar_pairs({"a": skeleton, "b": skeleton}, exercise=5, skeleton=None, threshold=0.8)
    assert [(p.first, p.second, p.similarity) for p in pairs] == [("a", "b", 1.0)]  # without subtraction: a match


def _submission(subs: Path, name: str, ex, text: str) -> None:
    (subs / name).mkdir(parents=True)
    (subs / name / ex.file).write_text(text)


def test_files_are_read_as_the_grader_reads_them(tmp_path):
    """A BOM with CRLF, a latin-1 cookie, a notebook and a zip are compared; a file batch refuses is listed."""
    ex = load_catalog().get(3)
    alt = (CORPUS / "03" / "pass_mask_in_forward.py").read_text()
    subs = tmp_path / "subs"
    _submission(subs, "plain", ex, alt)
    (subs / "bom").mkdir()
    (subs / "bom" / ex.file).write_bytes(b"\xef\xbb\xbf" + alt.replace("\n", "\r\n").encode())
    (subs / "latin").mkdir()
    (subs / "latin" / ex.file).write_bytes(("# -*- coding: latin-1 -*-\n# café\n" + alt).encode("latin-1"))
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(alt), nbformat.v4.new_code_cell("%timeit 1")])
    (subs / "nb" / "exercises").mkdir(parents=True)
    (subs / "nb" / "exercises" / ex.file.replace(".py", ".ipynb")).write_text(nbformat.writes(nb))
    with zipfile.ZipFile(subs / "zipped.zip", "w") as z:
        z.writestr(f"handin/exercises/{ex.file}", alt)
    (subs / "big").mkdir()
    (subs / "big" / ex.file).write_bytes(b"#" * (2 << 20))
    proc = run_grade("similarity", subs, "--exercises", "3", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    members = [c["members"] for c in doc["clusters"]]
    assert members == [["bom", "latin", "nb", "plain", "zipped"]], doc
    assert [s for s in doc["skipped"] if s.startswith("big:")] and "larger than 1 MB" in " ".join(doc["skipped"])


def test_cli_reports_the_copied_pair(tmp_path):
    ex = load_catalog().get(3)
    subs = tmp_path / "subs"
    _submission(subs, "alice", ex, ex.solution_path.read_text())
    _submission(subs, "carol", ex, (CORPUS / "03" / "pass_mask_in_forward.py").read_text())
    _submission(subs, "dan", ex, ex.skeleton_path.read_text())
    with zipfile.ZipFile(subs / "bob.zip", "w") as z:
        z.writestr(f"exercises/{ex.file}", disguised(ex))
    proc = run_grade("similarity", subs, "--exercises", "3", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert [(m["exercise"], m["submission"]) for m in doc["reference"]] == [(3, "alice"), (3, "bob")]
    assert doc["pairs"] == [] and doc["clusters"] == [] and doc["submissions"] == 4
    assert any(s.startswith("dan:") for s in doc["skipped"])
    text = run_grade("similarity", subs, "--exercises", "3", "--threshold", "0.95")
    assert text.returncode == 0 and "equals the reference (2):" in text.stdout and "alice, bob" in text.stdout
    assert "carol" not in text.stdout
    assert run_grade("similarity", subs, "--threshold", "2").returncode == 2
    one = run_grade("similarity", subs / "alice", "--exercises", "3")
    assert one.returncode == 2 and "looks like one submission" in one.stderr


def test_a_cohort_sharing_the_reference_is_flagged_and_copies_cluster():
    """7 of 11 hand in the reference (one disguised), 3 share one other solution, 1 writes their own."""
    ex = load_catalog().get(3)
    reference = ex.solution_path.read_text()
    alternative = (CORPUS / "03" / "pass_mask_in_forward.py").read_text()
    sources = {f"ref{i}": reference for i in range(6)} | {"disguised": disguised(ex)}
    sources |= {"alt1": alternative, "alt2": "# mine\n" + alternative, "alt3": alternative.replace("    ", "  ")}
    sources["solo"] = (CORPUS / "03" / "pass_float_mask_additive.py").read_text()
    found = compare_exercise(sources, exercise=3, skeleton=ex.skeleton_path.read_text(), reference=reference)
    assert sorted(m.submission for m in found.reference) == sorted([f"ref{i}" for i in range(6)] + ["disguised"])
    assert [(c.members, c.lowest) for c in found.clusters] == [(["alt1", "alt2", "alt3"], 1.0)]
    assert {(p.first, p.second) for p in found.pairs} == {("alt1", "alt2"), ("alt1", "alt3"), ("alt2", "alt3")}
    assert "solo" not in {n for c in found.clusters for n in c.members}


def test_the_public_fingerprints_are_hashes_with_their_source():
    doc = json.loads((Path(similarity.__file__).parent / similarity.PUBLIC_DATA).read_text())
    slugs = {ex.slug for ex in EXERCISES}
    assert len(doc["sources"]) >= 6 and {s["exercise"] for s in doc["sources"]} >= {"causal_attention",
                                                                                      "gpt2_attention"}
    for s in doc["sources"]:
        assert s["exercise"] in slugs and s["url"].startswith("https://") and s["licence"] and s["name"]
        assert all(re.fullmatch(r"[0-9a-f]{16}", h) for h in s["kgrams"] + s["statements"])
        assert len(s["kgrams"]) >= similarity.MIN_FINGERPRINTS and set(s) == {
            "exercise", "name", "variant", "url", "licence", "commit", "kgrams", "statements"}
    assert len(public_sources()) == len(doc["sources"]), "another normal form: run bench/public_fingerprints.py"


def test_a_copy_of_public_code_names_its_source(monkeypatch):
    """A submission whose fingerprints match a stored public implementation is flagged with its name and link."""
    ex = load_catalog().get(4)
    public = (CORPUS / "04" / "pass_einsum_permute.py").read_text()
    fake = PublicSource(ex.slug, "Someone's MultiHeadAttention", "https://example.org/mha.py", "MIT",
                        prints_of(public))
    monkeypatch.setattr(similarity, "public_sources", lambda: (fake,))
    sources = {"copier": disguised_text(public, ex), "own": (CORPUS / "04" / "pass_head_loop_cat.py").read_text(),
               "other": (CORPUS / "04" / "pass_baddbmm.py").read_text()}
    found = compare_exercise(sources, exercise=4, skeleton=ex.skeleton_path.read_text(), slug=ex.slug)
    assert [(m.submission, m.source, m.url) for m in found.public] == [
        ("copier", "Someone's MultiHeadAttention", "https://example.org/mha.py")]
    found = compare_exercise(sources, exercise=4, skeleton=ex.skeleton_path.read_text(), slug="other_exercise")
    assert found.public == []


def disguised_text(text: str, ex) -> str:
    renamed = re.sub(r"\b(att|scores|weights|context|q|k|v)\b", lambda m: "my_" + m[1], text)
    return '"""mine"""\n' + renamed.replace("\n", "\n\n")


@pytest.mark.skipif(not os.environ.get("ATTENTION_KIT_PUBLIC_SOURCES"),
                    reason="set ATTENTION_KIT_PUBLIC_SOURCES=DIR (git mirrors or checkouts, owner+name/...) to "
                           "re-derive the stored public fingerprints")
def test_the_stored_public_fingerprints_reproduce_and_catch_disguised_copies():
    from bench.public_fingerprints import SOURCES, adapted, build, read

    root = Path(os.environ["ATTENTION_KIT_PUBLIC_SOURCES"])
    doc = json.loads((Path(similarity.__file__).parent / similarity.PUBLIC_DATA).read_text())
    assert build(root) == doc
    for s in SOURCES:
        ex = load_catalog().get(s["exercise"])
        copy = disguise(adapted(read(root, *s["repo"][:2], s["path"]), s["take"], s["edits"]), ex.number)
        found = compare_exercise({"copier": copy, "own": ex.solution_path.read_text()}, exercise=ex.number,
                                 skeleton=ex.skeleton_path.read_text(), reference=None, slug=ex.slug)
        assert ("copier", s["name"]) in [(m.submission, m.source) for m in found.public], s["name"]
        assert "own" not in [m.submission for m in found.public]


def test_html_side_by_side_escapes_everything(tmp_path):
    ex = load_catalog().get(3)
    alt = (CORPUS / "03" / "pass_mask_in_forward.py").read_text()
    evil = "<script>alert(1)</script>"
    subs = tmp_path / "subs"
    _submission(subs, "<img src=x onerror=alert(1)>", ex, alt + f'\nNOTE = "</pre>{evil}"\n')
    _submission(subs, "bob", ex, "# mine\n" + alt)
    _submission(subs, "alice", ex, ex.solution_path.read_text())
    out = tmp_path / "html"
    proc = run_grade("similarity", subs, "--exercises", "3", "--html", out)
    assert proc.returncode == 0, proc.stderr
    index = (out / "index.html").read_text()
    pages = sorted(p.name for p in out.glob("ex03-*.html"))
    assert len(pages) == 2 and all(p in index for p in pages)  # the pair, and alice next to the reference
    for page in [index] + [(out / p).read_text() for p in pages]:
        assert "<script>" not in page and "<img" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in index
    pair = next((out / p).read_text() for p in pages if "bob" in (out / p).read_text())
    assert pair.count('class="line match"') >= 20 and "&lt;/pre&gt;&lt;script&gt;" in pair
    assert run_grade("similarity", subs, "--html", subs / "bob" / ex.file).returncode == 2


def test_the_text_summary_stays_readable_for_300_submissions():
    names = [f"student-{i:03d}-with-a-rather-long-name" for i in range(300)]
    pairs = [Pair(3, a, b, 0.9) for a, b in zip(names[:150], names[1:151])] + [Pair(4, names[0], names[299], 0.95)]
    report = SimilarityReport(pairs, [f"{n}: exercise 2 does not parse" for n in names[:40]], 300,
                              [Cluster(3, names[:151], 0.9, 0.9), Cluster(4, [names[0], names[299]], 0.95, 0.95)],
                              [similarity.ReferenceMatch(3, n, 1.0) for n in names[200:260]])
    text = summary_text(report, top=10)
    lines = text.splitlines()
    assert all(len(line) <= WIDTH for line in lines), max(lines, key=len)
    assert len(lines) <= 40, text
    assert "cluster of 151 (0.90)" in text and "+" in text and "more" in text and "top 10 of 151 pair(s)" in text
    assert "equals the reference (60)" in text


def test_the_cli_summary_lists_top_pairs_not_all_of_them(tmp_path):
    ex = load_catalog().get(3)
    alt = (CORPUS / "03" / "pass_mask_in_forward.py").read_text()
    subs = tmp_path / "subs"
    for i in range(30):
        _submission(subs, f"s{i:02d}", ex, f"# copy {i}\n" + alt)
    proc = run_grade("similarity", subs, "--exercises", "3", "--top", "5")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) < 20 and "cluster of 30 (1.00):" in proc.stdout and "top 5 of 435 pair(s)" in proc.stdout
    assert all(len(line) <= WIDTH for line in lines)
    assert len(json.loads(run_grade("similarity", subs, "--exercises", "3", "--json").stdout)["pairs"]) == 435


def test_the_matrix_agrees_with_pairwise_scores():
    files = [prints_of(p.read_text()) for p in sorted(CORPUS.glob("0[34]/pass_*.py"))]
    files += [Prints(), files[0]]
    scores = similarity.matrix(files)
    for i in range(len(files)):
        for j in range(i + 1, len(files)):
            assert scores[i, j] == pytest.approx(similarity.similarity(files[i], files[j]), abs=1e-9)
    assert scores[0, len(files) - 1] == 1.0 and scores[0, len(files) - 2] == 0.0
