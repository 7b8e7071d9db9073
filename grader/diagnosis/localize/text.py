"""The words of the evidence: what a stage is called in a sentence."""
from __future__ import annotations

LABELS = {"dropped_weights": "weights after dropout", "context": "per-head context", "merged": "merged heads",
          "weights": "attention weights", "masked_unscaled_scores": "masked scores before scaling"}


def label(name: str) -> str:
    return LABELS.get(name, name.replace("_", " "))


