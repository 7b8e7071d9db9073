"""The texts of every diagnosis (catalog.toml, plus those exercise modules bring) and Diagnosis objects."""
from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path

from grader.results import Diagnosis

CATALOG = Path(__file__).with_name("catalog.toml")


EXTRA: dict = {}  # texts of diagnoses that exercise modules bring (their DIAGNOSES)


@cache
def texts() -> dict:
    return tomllib.loads(CATALOG.read_text(encoding="utf-8"))


def known(id: str) -> bool:
    return id in EXTRA or id in texts()


def make(id: str, *evidence: str) -> Diagnosis:
    t = EXTRA.get(id) or texts()[id]
    return Diagnosis(id, t["title"], t["explanation"], t["hint"], [str(e) for e in evidence if e])
