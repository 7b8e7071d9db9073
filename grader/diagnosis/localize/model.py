"""What the stages pass to each other: traced tensors, the reference's stages, and the line found."""
from __future__ import annotations

from dataclasses import asdict, dataclass

import torch


@dataclass
class Traced:
    op: str
    line: int
    tensor: torch.Tensor
    data: bool = True  # derived from a floating input or weight, not from a bool mask or int positions alone
    uses: tuple = ()  # the consts it read, by index in the trace's consts (-1: one not recorded)


@dataclass
class Stage:
    name: str
    line: int
    tensor: torch.Tensor
    strict: bool = False  # a layout-only step after an earlier stage (merged heads): matched in its own shape
    data: bool = True  # the reference computes it from a floating input or weight (the angles: from positions alone)


@dataclass
class Localization:
    line: int
    stage: str
    matched_through: str | None
    evidence: str
    cause: str | None = None  # the diagnosis id the evidence amounts to, when it names one (not part of the JSON)

    def to_json(self) -> dict:
        return {k: v for k, v in asdict(self).items() if k != "cause"}
