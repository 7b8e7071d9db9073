"""The texts of every diagnosis (catalog.toml, plus those exercise modules bring) and Diagnosis objects."""
from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path

from grader.results import Diagnosis

CATALOG = Path(__file__).with_name("catalog.toml")


@cache
def texts() -> dict:
    return tomllib.loads(CATALOG.read_text(encoding="utf-8"))


def text_of(id: str) -> dict | None:
    """The catalog's texts of a diagnosis, else those of a loaded exercise module's DIAGNOSES, else None."""
    from grader.pack import own_diagnosis_texts

    return texts().get(id) or own_diagnosis_texts(id)


def known(id: str) -> bool:
    return text_of(id) is not None


def make(id: str, *evidence: str) -> Diagnosis:
    t = text_of(id)
    if t is None:
        raise KeyError(f"no diagnosis {id!r} in the catalog or in a loaded exercise module's DIAGNOSES")
    return Diagnosis(id, t["title"], t["explanation"], t["hint"], [str(e) for e in evidence if e])
