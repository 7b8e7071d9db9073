"""Golden snapshots of `grade exercise N --json`, and the published schema (docs/schemas/verdict.schema.json).

Three documents a consumer sees (a pass, a named mistake with its line, a file not started) are kept in
tests/golden/ with what varies by machine and run replaced (durations, versions, the sandbox tier). A change to
the document shows up here as a diff to review; ATTENTION_KIT_UPDATE_GOLDEN=1 rewrites the files after review.
Every --json document the tests read is also checked against the schema (tests/conftest.py grade_json).
"""
import json
import os

import pytest

from grader.catalog import load_catalog
from grader.schema import SchemaError, read_verdict
from tests.conftest import CORPUS, ROOT, grade_json

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
