"""grader/diagnosis/localize/gate.py: a line is reported only at a stage the named mistake acts on."""
from __future__ import annotations

import tomllib
from pathlib import Path

from grader.diagnosis.localize import gate
from grader.diagnosis.localize.reference import stage_lines

ROOT = Path(__file__).resolve().parents[1]


def test_every_named_mistake_declares_its_stages_and_every_stage_is_a_references():
    catalog = tomllib.loads((ROOT / "grader" / "diagnosis" / "catalog.toml").read_text(encoding="utf-8"))
    assert set(gate.ACTS_ON) == set(catalog), set(gate.ACTS_ON) ^ set(catalog)
    marked = {name for f in (ROOT / "solutions").glob("[0-9]*.py")
              for names in stage_lines(f.read_text(encoding="utf-8")).values() for name in names}
    for id, stages in gate.ACTS_ON.items():
        assert stages is gate.ANY or stages and stages <= marked | {"parameters"}, (id, stages - marked)


def test_a_line_about_something_else_than_the_named_mistake_is_not_reported():
    assert not gate.acts_on("kv_cache_ignored", "queries")  # the cache is named, the line is at the projections
    assert not gate.acts_on("heads_not_divisible", "keys")  # a missing check in the constructor: no forward line
    assert not gate.acts_on("rope_pairing", "output")
    assert gate.acts_on("kv_cache_ignored", "cached_keys") and gate.acts_on("mask_zero_fill", "masked_scores")
    assert gate.acts_on("scale_wrong_dim", "scaled_scores") and gate.acts_on("api_mismatch", "parameters")


def test_a_mistake_that_can_sit_anywhere_keeps_its_line():
    for id in ("runtime_error", "wrong_output", "mask_device", "dtype_not_kept"):
        assert gate.acts_on(id, "queries") and gate.acts_on(id, "output")
    assert gate.acts_on(None, "keys") and gate.acts_on("an_id_from_a_pack", "keys")
