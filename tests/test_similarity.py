"""grade similarity: renamed and reformatted copies score high, independent solutions low, skeletons not at all."""
import ast
import builtins
import json
import zipfile

import pytest

from grader.catalog import load_catalog
from grader.instructor.similarity import compare_exercise, fingerprints, jaccard, similar_pairs
from tests.conftest import CORPUS, run_grade

HAND_WRITTEN = [ex for ex in load_catalog().exercises if ex.number <= 5]


class _Disguise(ast.NodeTransformer):
    """Rename every variable, argument and private attribute, as someone hiding a copy would."""

    keep = set(dir(builtins)) | {"torch", "nn", "math", "F", "self"}

    def visit_Name(self, node):
        if node.id not in self.keep:
            node.id = f"my_{node.id.lower()}_var"
        return node

    def visit_arg(self, node):
        if node.arg != "self":
            node.arg = f"my_{node.arg}_arg"
        return node

    def visit_Attribute(self, node):
        self.generic_visit(node)
        contract = set(load_catalog().get(self.number).roles.values())
        if isinstance(node.value, ast.Name) and node.value.id == "self" and node.attr not in contract:
            node.attr = f"hidden_{node.attr}"
        return node


def disguised(ex) -> str:
    mover = _Disguise()
    mover.number = ex.number
    code = ast.unparse(mover.visit(ast.parse(ex.solution_path.read_text())))  # reformatted, comments gone
    return '"""All my own work."""\n# started from a blank file\n\n' + code.replace("\n", "\n\n")


def score(a: str, b: str, ex) -> float:
    skeleton = ex.skeleton_path.read_text()
    return jaccard(fingerprints(a, skeleton), fingerprints(b, skeleton))


@pytest.mark.parametrize("ex", HAND_WRITTEN, ids=lambda e: e.slug)
def test_a_disguised_copy_scores_high(ex):
    copy = disguised(ex)
    assert copy.split() != ex.solution_path.read_text().split()
    assert score(ex.solution_path.read_text(), copy, ex) >= 0.9


@pytest.mark.parametrize("ex", HAND_WRITTEN, ids=lambda e: e.slug)
def test_independent_solutions_score_low(ex):
    others = sorted((CORPUS / f"{ex.number:02d}").glob("pass_*.py"))
    assert others, "the corpus has alternative correct solutions for every hand-written exercise"
    for other in others:
        assert score(ex.solution_path.read_text(), other.read_text(), ex) < 0.5, other.name


def test_the_skeleton_does_not_count():
    ex = load_catalog().get(5)  # its skeleton is a whole (buggy) module
    skeleton = ex.skeleton_path.read_text()
    pairs, skipped = similar_pairs({"a": skeleton, "b": skeleton, "c": "# mine\n" + skeleton}, exercise=5,
                                   skeleton=skeleton, threshold=0.0)
    assert pairs == [] and len(skipped) == 3 and "too little code" in skipped[0]
    pairs, _ = similar_pairs({"a": skeleton, "b": skeleton}, exercise=5, skeleton=None, threshold=0.8)
    assert [(p.first, p.second, p.similarity) for p in pairs] == [("a", "b", 1.0)]  # without subtraction: a match


def test_cli_reports_the_copied_pair(tmp_path):
    ex = load_catalog().get(3)
    subs = tmp_path / "subs"
    for name, text in (("alice", ex.solution_path.read_text()),
                       ("carol", (CORPUS / "03" / "pass_mask_in_forward.py").read_text()),
                       ("dan", ex.skeleton_path.read_text())):
        (subs / name).mkdir(parents=True)
        (subs / name / ex.file).write_text(text)
    with zipfile.ZipFile(subs / "bob.zip", "w") as z:
        z.writestr(f"exercises/{ex.file}", disguised(ex))
    proc = run_grade("similarity", subs, "--exercises", "3", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert [(m["exercise"], m["submission"]) for m in doc["reference"]] == [(3, "alice"), (3, "bob")]
    assert doc["pairs"] == [] and doc["clusters"] == [] and doc["submissions"] == 4
    assert any(s.startswith("dan:") for s in doc["skipped"])
    text = run_grade("similarity", subs, "--exercises", "3", "--threshold", "0.95")
    assert text.returncode == 0 and "equals the reference (2): alice, bob" in text.stdout
    assert "carol" not in text.stdout
    assert run_grade("similarity", subs, "--threshold", "2").returncode == 2


def test_a_cohort_sharing_the_reference_is_flagged_and_copies_cluster():
    """7 of 11 hand in the reference byte for byte, 3 share one other solution, 1 writes their own."""
    ex = load_catalog().get(3)
    reference = ex.solution_path.read_text()
    alternative = (CORPUS / "03" / "pass_mask_in_forward.py").read_text()
    own = sorted((CORPUS / "03").glob("pass_*.py"))
    assert len(own) >= 2
    sources = {f"ref{i}": reference for i in range(6)} | {"disguised": disguised(ex)}
    sources |= {"alt1": alternative, "alt2": "# mine\n" + alternative, "alt3": alternative.replace("    ", "  ")}
    sources["solo"] = own[-1].read_text() if own[-1].read_text() != alternative else own[0].read_text()
    found = compare_exercise(sources, exercise=3, skeleton=ex.skeleton_path.read_text(), reference=reference)
    assert sorted(m.submission for m in found.reference) == sorted([f"ref{i}" for i in range(6)] + ["disguised"])
    assert [(c.members, c.lowest) for c in found.clusters] == [(["alt1", "alt2", "alt3"], 1.0)]
    assert {(p.first, p.second) for p in found.pairs} == {("alt1", "alt2"), ("alt1", "alt3"), ("alt2", "alt3")}
    assert "solo" not in {n for c in found.clusters for n in c.members}
