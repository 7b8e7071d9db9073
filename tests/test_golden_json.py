"""Golden snapshots of `grade exercise N --json` and of a small JSON gradebook, and their published schemas
(docs/schemas/verdict.schema.json, docs/schemas/gradebook.schema.json).

Three documents a consumer sees (a pass, a named mistake with its line, a file not started) are kept in
tests/golden/ with what varies by machine and run replaced (durations, versions, the sandbox tier). A change to
the document shows up here as a diff to review; ATTENTION_KIT_UPDATE_GOLDEN=1 rewrites the files after review.
Every --json document the tests read is also checked against the schema (tests/conftest.py grade_json), and so is
every gradebook (tests/conftest.py gradebook_doc).
"""
import json
import os

import pytest

from grader.catalog import load_catalog
from grader.schema import SchemaError, read_verdict
from tests.conftest import CORPUS, ROOT, grade_json, gradebook_doc

GOLDEN = ROOT / "tests" / "golden"
CASES = {"pass_01": (1, lambda: load_catalog().get(1).solution_path),
         "mask_inverted_03": (3, lambda: CORPUS / "03" / "mask_inverted.py"),
         "not_started_02": (2, lambda: load_catalog().get(2).skeleton_path)}


def normalized(doc: dict) -> dict:
    doc = dict(doc, duration_s=0.0)
    prov = dict(doc["provenance"])
    for key, placeholder in (("kit", "<kit version+digest>"), ("torch", "<torch>"), ("python", "<python>"),
                             ("sandbox", "<sandbox tier>")):
        if key in prov:
            prov[key] = placeholder
    doc["provenance"] = prov
    doc.pop("sandbox", None)  # what a weaker tier gave up: the machine's, not the verdict's
    return doc


@pytest.mark.parametrize("name", sorted(CASES))
def test_json_matches_its_golden_snapshot(name):
    number, path = CASES[name]
    _, doc = grade_json("exercise", str(number), str(path()), here=True)
    got = normalized(doc)
    golden = GOLDEN / f"{name}.json"
    if os.environ.get("ATTENTION_KIT_UPDATE_GOLDEN"):
        golden.write_text(json.dumps(got, indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")
    want = json.loads(golden.read_text(encoding="utf-8"))
    assert got == want, f"the --json document of {name} changed; review, then ATTENTION_KIT_UPDATE_GOLDEN=1"


def test_the_schema_refuses_a_document_of_another_shape():
    doc = json.loads((GOLDEN / "mask_inverted_03.json").read_text(encoding="utf-8"))
    read_verdict(doc)
    for broken in ({**doc, "schema_version": 2}, {**doc, "surprise": 1},
                   {**doc, "tests": [{**doc["tests"][0], "status": "maybe"}]}):
        with pytest.raises(SchemaError):
            read_verdict(broken)


def normalized_gradebook(doc: dict, folder) -> dict:
    """What varies by machine and run replaced, as in the verdicts: the kit's version, per row what graded it, and
    the test's folder in the paths it names (an override's file)."""
    doc = json.loads(json.dumps(doc).replace(json.dumps(str(folder))[1:-1], "<folder>"))
    rows = []
    for row in doc["rows"]:
        made = dict(row["produced_by"])
        for key, placeholder in (("kit", "<kit version+digest>"), ("torch", "<torch>"), ("python", "<python>"),
                                 ("sandbox", "<sandbox tier>")):
            if key in made:
                made[key] = placeholder
        rows.append({**row, "produced_by": made})
    return {**doc, "kit": "<kit version>", "rows": rows}


def test_a_small_gradebook_matches_its_golden_snapshot(tmp_path):
    """A right file, a file not started, one missing and a roster entry without a submission; weights, an override."""
    from grader.instructor.batch import batch_rubric, run_batch
    from grader.instructor.roster import read_roster

    ex = load_catalog().get(1)
    for name, source in (("ana", ex.solution_path), ("ben", ex.skeleton_path), ("cy", None)):
        (tmp_path / "subs" / name).mkdir(parents=True)
        if source is not None:
            (tmp_path / "subs" / name / ex.file).write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "o.csv").write_text("submission,exercise,points,delta,comment\nben,1,,2,oral exam\n")
    (tmp_path / "roster.csv").write_text("submission,id,email,name\nana,1,ana@x.org,Ana\ndee,4,dee@x.org,Dee\n")
    course = batch_rubric(exercises="1", weights="1=10", overrides=tmp_path / "o.csv")
    run_batch(submissions_dir=tmp_path / "subs", jobs=0, output=tmp_path / "gradebook.json", exercises="1",
              progress=False, course=course, roster=read_roster(tmp_path / "roster.csv"))
    got = normalized_gradebook(gradebook_doc(tmp_path / "gradebook.json"), tmp_path)
    golden = GOLDEN / "gradebook.json"
    if os.environ.get("ATTENTION_KIT_UPDATE_GOLDEN"):
        golden.write_text(json.dumps(got, indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")
    want = json.loads(golden.read_text(encoding="utf-8"))
    assert got == want, "the JSON gradebook changed; review, then ATTENTION_KIT_UPDATE_GOLDEN=1"


def test_the_gradebook_schema_refuses_a_document_of_another_shape():
    from grader.instructor.gradebook import read_gradebook
    from grader.schema import SchemaError

    doc = json.loads((GOLDEN / "gradebook.json").read_text(encoding="utf-8"))
    read_gradebook(doc)
    row = doc["rows"][0]
    for broken in ({**doc, "schema_version": 2}, {**doc, "surprise": 1}, {**doc, "rows": [{**row, "total": "10"}]},
                   {**doc, "rows": [{**row, "exercises": [{**row["exercises"][0], "status": "maybe"}]}]}):
        with pytest.raises(SchemaError):
            read_gradebook(broken)
