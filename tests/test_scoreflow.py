"""Scores followed by data flow (grader/sandbox/scoreflow.py): which tensors hold query and key positions.

Small inputs, in this process, under a dispatch mode like the worker's largest-tensor probe: a tile of scores is
fine, anything computed from the queries that spans more than a block of keys (or holds keys for more than a
block of queries) is found, whatever its shape; the keys alone, transposed, are not scores.
"""
import math

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from grader.sandbox.scoreflow import ScoreFlow

B, H, T, D, BLOCK = 1, 2, 32, 4, 8


class Follow(TorchDispatchMode):
    def __init__(self, flow):
        super().__init__()
        self.flow = flow

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        self.flow.after(func, args, kwargs or {}, out)
        return out


def wide(fn):
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(B, H, T, D, generator=g) for _ in range(3))
    flow = ScoreFlow({"q": q, "k": k}, BLOCK)
    with torch.no_grad(), Follow(flow):
        fn(q, k, v)
    return flow.wide


def tiled(q, k, v):
    rows = []
    for i0 in range(0, T, BLOCK):
        qi = q[:, :, i0:i0 + BLOCK] / math.sqrt(D)
        m = torch.full((B, H, qi.size(-2), 1), float("-inf"))
        l, acc = torch.zeros(B, H, qi.size(-2), 1), k.new_zeros(B, H, qi.size(-2), D)  # a shape, not the keys' values
        for j0 in range(0, T, BLOCK):
            s = torch.einsum("bhqd,bhkd->bhqk", qi, k[:, :, j0:j0 + BLOCK])
            m_new = torch.maximum(m, s.max(dim=-1, keepdim=True).values)
            p = (s - m_new).exp()
            corr = (m - m_new).exp()
            l = l * corr + p.sum(-1, keepdim=True)
            acc = acc * corr + p @ v[:, :, j0:j0 + BLOCK]
            m = m_new
        rows.append(acc / l)
    out = torch.empty(B, H, T, D)
    for i, r in enumerate(rows):
        out[:, :, i * BLOCK:(i + 1) * BLOCK] = r
    return torch.cat(rows, dim=2) + out


def strips_like_keys(q, k, v):
    return [torch.softmax(q[:, :, i:i + D] @ k.transpose(-2, -1), -1) @ v for i in range(0, T, D)]


def one_row(q, k, v):
    return [torch.softmax((q[:, :, i] [..., None, :] @ k.mT).squeeze(-2), -1) for i in range(T)]


def buffer(q, k, v):
    buf = torch.empty(B, H, D, T)
    for j0 in range(0, T, BLOCK):
        buf[..., j0:j0 + BLOCK] = q[:, :, :D] @ k[:, :, j0:j0 + BLOCK].transpose(-2, -1)
    return buf.softmax(-1)


def key_blocks(q, k, v):
    kb = k.reshape(B, H, T // BLOCK, BLOCK, D)
    return q[:, :, None, :1] @ kb.transpose(-2, -1)  # (B, H, n_blocks, 1, BLOCK)


def all_queries(q, k, v):
    return [q @ k[:, :, j:j + 2].transpose(-2, -1) for j in range(0, T, 2)]


def elementwise(q, k, v):
    return (q[:, :, :1, None, :] * k[:, :, None, :, :]).sum(-1)  # (B, H, 1, T) by a product and a sum


def keys_alone(q, k, v):
    kt = k.transpose(-2, -1).contiguous() * 2
    return kt.sum(-1), q * 2, (q[:, :, :BLOCK] @ kt[..., :BLOCK]).softmax(-1)


def test_a_tiled_attention_holds_no_wide_scores():
    assert wide(tiled) is None and wide(keys_alone) is None


@pytest.mark.parametrize("fn", [strips_like_keys, one_row, buffer, key_blocks, elementwise],
                         ids=lambda f: f.__name__)
def test_scores_over_too_many_keys_are_found_whatever_their_shape(fn):
    found = wide(fn)
    assert found is not None and found["keys"] > BLOCK, found


def test_a_key_block_for_all_queries_is_found():
    found = wide(all_queries)
    assert found is not None and found["queries"] > BLOCK and found["keys"] <= BLOCK, found
