"""What the rules' tests share: small sources and stages, alignments built by hand."""
from __future__ import annotations

import torch

from grader.diagnosis import localize as loc


CLASS = """
import math
import torch
class A(torch.nn.Module):
    def __init__(self, d, n):
        super().__init__()
        self.d = d
        self.scale = 1.0 / math.sqrt(d)
        self.temperature = float(d)
        future = torch.ones(n, n).triu()
        self.register_buffer("future", future.bool())
        self.register_buffer("causal", torch.ones(n, n).tril())
    def forward(self, q, k, pad):
        T = q.shape[1]
        s1 = q @ k.transpose(-2, -1) * self.scale
        s2 = s1.masked_fill(self.future[:T, :T], float("-inf"))
        s3 = s1.masked_fill(self.future[1:T, :T], float("-inf"))
        keep = pad.view(2, 1, 5)
        s4 = s1.masked_fill(keep == 0, float("-inf"))
        s5 = s1.masked_fill(~self.causal.bool(), float("-inf"))
        s6 = q @ k.transpose(-2, -1) / self.temperature
        return s2, s3, s4, s5, s6
"""


def line_of(text: str, src: str = CLASS) -> int:
    return next(i for i, line in enumerate(src.splitlines(), 1) if text in line)


def stage(name: str, line: int, t: torch.Tensor) -> loc.Stage:
    return loc.Stage(name, line, t)


def scores_pair(seed: int = 5):
    g = torch.Generator().manual_seed(seed)
    s = torch.randn(2, 5, 5, generator=g, dtype=torch.float64)
    return s, s.masked_fill(torch.ones(5, 5, dtype=torch.bool).triu(1), float("-inf"))


def scaled(line: int, factor: float, src: str = CLASS) -> loc.Alignment:
    s, _ = scores_pair()
    stages = [stage("scores", 30, s), stage("scaled_scores", 31, s / 2)]
    return loc.Alignment([loc.Traced("matmul", line, s), loc.Traced("mul", line, s / 2 * factor)], stages, source=src)


SCALE_SOURCE = """
import math
def f(q, k, mask):
    d = q.shape[-1]
    scale = 1 / math.sqrt(q.shape[-1])
    s1 = q @ k.transpose(-2, -1) / math.sqrt(d)
    s2 = q @ k.transpose(-2, -1) * scale
    s3 = q @ k.transpose(-2, -1) / size
    blocked = mask.view(1, 5)
    s4 = s1.masked_fill(blocked, float("-inf"))
    size = k.shape[-1]
    return s4
"""


def scale_alignment(line: int, factor: float) -> loc.Alignment:
    """An alignment whose scaled scores are first wrong at `line`, by a constant factor."""
    g = torch.Generator().manual_seed(5)
    q, k = torch.randn(2, 5, 4, generator=g, dtype=torch.float64), torch.randn(2, 5, 4, generator=g, dtype=torch.float64)
    scores = q @ k.transpose(-2, -1)
    stages = [stage("scores", 30, scores), stage("scaled_scores", 31, scores / 2)]
    entries = [loc.Traced("matmul", line, scores), loc.Traced("div", line, scores / 2 * factor)]
    return loc.Alignment(entries, stages, source=SCALE_SOURCE)
