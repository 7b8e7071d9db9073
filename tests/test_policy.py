"""The static policy check: what it refuses, and that ordinary attention code passes."""
import pytest

from grader.catalog import load_catalog
from grader.policy import check

CAT = load_catalog()
FORBIDDEN = CAT.get(4).forbidden


def rules(source):
    return [(v.rule, v.line) for v in check(source, allowed_imports=CAT.allowed_imports, forbidden=FORBIDDEN)]


@pytest.mark.parametrize("ex", CAT.exercises, ids=lambda e: e.slug)
def test_kit_files_pass(ex):
    for path in (ex.skeleton_path, ex.solution_path):
        assert check(path.read_text(), allowed_imports=CAT.allowed_imports, forbidden=ex.forbidden) == []


@pytest.mark.parametrize("source, rule", [
    ("import os", "unsafe_code"),
    ("import subprocess as sp", "unsafe_code"),
    ("from os import path", "unsafe_code"),
    ("from . import x", "unsafe_code"),
    ("from torch import *", "unsafe_code"),
    ("import torch\ntorch.os.system('id')", "unsafe_code"),
    ("import torch\nx = torch.hub.load('a', 'b')", "unsafe_code"),
    ("import torch\ntorch.load('w.pt')", "unsafe_code"),
    ("x = ().__class__.__bases__[0].__subclasses__()", "unsafe_code"),
    ("eval('1')", "unsafe_code"),
    ("exec('x = 1')", "unsafe_code"),
    ("open('/etc/passwd').read()", "unsafe_code"),
    ("__import__('os')", "unsafe_code"),
    ("import torch\ngetattr(torch, 'o' + 's')", "unsafe_code"),
    ("import torch\ntorch._C._get_tracing_state()", "unsafe_code"),
    ("x = '__globals__'", "unsafe_code"),
    ("import torch.nn.functional as F\ny = F.scaled_dot_product_attention(q, k, v)", "forbidden_api"),
    ("import torch\ny = torch.nn.functional.scaled_dot_product_attention(q, k, v)", "forbidden_api"),
    ("from torch.nn.functional import scaled_dot_product_attention as s", "forbidden_api"),
    ("from torch import nn\nm = nn.MultiheadAttention(8, 2)", "forbidden_api"),
    ("import torch.nn as nn\nf = nn.functional\ny = f.scaled_dot_product_attention(q, k, v)", "forbidden_api"),
])
def test_refuses(source, rule):
    assert rule in [r for r, _ in rules(source)]


def test_reports_the_line():
    assert rules("import torch\n\n\nimport socket\n") == [("unsafe_code", 4)]


def test_ordinary_code_passes():
    source = '''
from __future__ import annotations
import math
import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self._cache = None
        self.register_buffer("causal", torch.ones(context_length, context_length).tril() == 0)

    def forward(self, x):
        return F.softmax(torch.einsum("bhqd,bhkd->bhqk", x, x) / math.sqrt(4), dim=-1)


if __name__ == "__main__":
    print(MultiHeadAttention(2, 2, 2, 0.0, 1))
'''
    assert rules(source) == []


def test_syntax_error_raises():
    with pytest.raises(SyntaxError):
        check("def f(:\n", allowed_imports=CAT.allowed_imports)
