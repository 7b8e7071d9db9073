"""Live numbers for the PyTorch-mechanics topics: buffers, views, hooks, fused SDPA, masked rows, fp16."""
from __future__ import annotations

import math
from functools import cache

import torch
import torch.nn as nn
import torch.nn.functional as F

from grader.numerics import dtype_name

from .live import TOKENS, causal_blocked, f4, inputs, panel, table


@cache
def buffer() -> dict:
    class Demo(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(2, 2))
            self.register_buffer("mask", torch.ones(2, 2))
            self.register_buffer("scratch", torch.ones(2, 2), persistent=False)
            self.plain = torch.ones(2, 2)

    m = Demo()
    names = ("weight", "mask", "scratch", "plain")
    params, state = dict(m.named_parameters()), m.state_dict()
    grad = {n: getattr(m, n).requires_grad for n in names}
    dtypes = {n: str(getattr(m.to(torch.float64), n).dtype).removeprefix("torch.") for n in names}
    devices = {n: str(getattr(m.to("meta"), n).device) for n in names}
    code = {"weight": "nn.Parameter(t)", "mask": "register_buffer('mask', t)",
            "scratch": "register_buffer('scratch', t, persistent=False)", "plain": "self.plain = t"}
    rows = [[code[n], n in params, n in state, grad[n], dtypes[n], devices[n]] for n in names]
    return {"values": {"state_keys": ", ".join(state)}, "tables": {"kinds": table(rows, code=(0,))}}


@cache
def view_transpose() -> dict:
    b, t, h, hd = 2, 5, 2, 4
    y = torch.arange(b * t * h * hd, dtype=torch.float32).view(b, t, h * hd)
    split = y.view(b, t, h, hd).transpose(1, 2)
    exprs = [
        ("y", y),
        (f"y.view({b}, {t}, {h}, {hd})", y.view(b, t, h, hd)),
        (f"y.view({b}, {t}, {h}, {hd}).transpose(1, 2)", split),
        (f"y.view({b}, {t}, {h}, {hd}).transpose(1, 2).contiguous()", split.contiguous()),
        (f"y.view({b}, {h}, {t}, {hd})", y.view(b, h, t, hd)),
    ]
    rows = [[e, str(tuple(x.shape)), str(x.stride()), x.is_contiguous()] for e, x in exprs]
    out = torch.zeros(b, h, t, hd)
    try:
        out.transpose(1, 2).view(b, t, h * hd)
        view_error = ""
    except RuntimeError as err:
        view_error = str(err).splitlines()[0]
    label = torch.tensor([[[[10 * head + tok] * hd for tok in range(t)] for head in range(h)]] * b, dtype=torch.float32)
    naive_row = label.view(b, t, h * hd)[0, 1, ::hd].tolist()
    right_row = label.transpose(1, 2).reshape(b, t, h * hd)[0, 1, ::hd].tolist()

    def describe(codes):
        """[(head, token), ...], both counted from 1."""
        return [(int(c) // 10 + 1, int(c) % 10 + 1) for c in codes]

    q = torch.zeros(b, t, h, hd)
    return {
        "values": {
            "b": b, "t": t, "h": h, "hd": hd, "d": h * hd, "view_error": view_error,
            "same_data": torch.equal(y.view(b, h, t, hd), split),
            "naive_scores": str(tuple((q @ q.transpose(-1, -2)).shape)),
            "right_scores": str(tuple((q.transpose(1, 2) @ q.transpose(1, 2).transpose(-1, -2)).shape)),
            "naive_row": describe(naive_row), "right_row": describe(right_row),
        },
        "tables": {"strides": table(rows, code=(0,))},
    }


@cache
def module_call() -> dict:
    torch.manual_seed(0)
    layer = nn.Linear(3, 2)
    seen = {"pre": 0, "post": 0}

    def pre(module, args):
        seen["pre"] += 1

    def post(module, args, output):
        seen["post"] += 1
        return output * 2

    layer.register_forward_pre_hook(pre)
    layer.register_forward_hook(post)
    x = torch.ones(1, 3)
    rows = []
    for code, call in (("layer(x)", layer), ("layer.forward(x)", layer.forward)):
        seen.update(pre=0, post=0)
        y = call(x)
        rows.append([code, seen["pre"], seen["post"], f4(y[0, 0].item())])
    return {"values": {}, "tables": {"calls": table(rows, code=(0,))}}


@cache
def fused_sdpa() -> dict:
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 2, 6, 8, generator=g) for _ in range(3))
    blocked = causal_blocked(6)

    def manual(mask=None):
        s = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
        if mask is not None:
            s = s.masked_fill(mask, float("-inf"))
        return s.softmax(-1) @ v

    def diff(a, b):
        return f"{(a - b).abs().max().item():.1e}"

    sdpa = F.scaled_dot_product_attention
    rows = [
        ["sdpa(q, k, v)", diff(sdpa(q, k, v), manual())],
        ["sdpa(q, k, v, is_causal=True)", diff(sdpa(q, k, v, is_causal=True), manual(blocked))],
        ["sdpa(q, k, v, attn_mask=~blocked)", diff(sdpa(q, k, v, attn_mask=~blocked), manual(blocked))],
        ["sdpa(q, k, v, attn_mask=blocked)", diff(sdpa(q, k, v, attn_mask=blocked), manual(blocked))],
    ]
    backends = [n for n in getattr(torch.nn.attention, "SDPBackend").__members__ if n not in ("ERROR", "OVERRIDEABLE")]
    return {"values": {"torch": torch.__version__, "backends": ", ".join(backends)}, "tables": {"check": table(rows, code=(0,))}}


@cache
def masked_rows() -> dict:
    inf = float("-inf")
    low = torch.finfo(torch.float32).min

    def show(t):
        return "[" + ", ".join(f"{x:.2f}" for x in t.tolist()) + "]"

    cases = [
        ("[-inf, -inf, -inf, -inf]", torch.tensor([inf] * 4).softmax(-1)),
        ("[finfo.min] * 4", torch.tensor([low] * 4).softmax(-1)),
        ("[0.3, -inf, -inf, -inf]", torch.tensor([0.3, inf, inf, inf]).softmax(-1)),
        ("softmax([-inf] * 4).nan_to_num(0.0)", torch.tensor([inf] * 4).softmax(-1).nan_to_num(0.0)),
    ]
    rows = [[c, show(w)] for c, w in cases]

    x = torch.cat([torch.zeros(2, 3), inputs()[:3]])
    names = ("PAD", "PAD", *TOKENS[:3])
    pad = torch.tensor([True, True, False, False, False])
    blocked = causal_blocked(5) | pad[None, :]
    w = (x @ x.T / math.sqrt(3)).masked_fill(blocked, inf).softmax(-1)
    nan_rows = [i + 1 for i in range(len(names)) if torch.isnan(w[i]).any()]

    out = w @ x
    second = (out @ out.T / math.sqrt(3)).masked_fill(blocked, inf).softmax(-1) @ out
    keep = (~pad).float()[:, None]
    q = torch.zeros(1, 1, 2, 4)
    sdpa_row = F.scaled_dot_product_attention(q, q, q, attn_mask=torch.zeros(2, 2, dtype=torch.bool))[0, 0, 0]
    return {
        "values": {
            "nan_rows": nan_rows,
            "loss_zeroed": f4((out * keep).sum().item()),
            "second_nan": int(torch.isnan(second).any(-1).sum().item()), "rows": len(names),
            "sdpa_row": show(sdpa_row), "torch": torch.__version__,
        },
        "tables": {"rows": table(rows, code=(0,))},
        "maps": {"padding": [panel(w, names, names, blocked)]},
    }


@cache
def fp16_fill() -> dict:
    dtypes = (torch.float16, torch.bfloat16, torch.float32)

    def num(t):
        return f"{t.item():.6g}"

    def fill(dt, value):
        try:
            return num(torch.zeros(1, dtype=dt).masked_fill(torch.tensor([True]), value))
        except RuntimeError as err:
            return type(err).__name__

    def lowest(dt):
        return torch.tensor(torch.finfo(dt).min, dtype=dt)

    def soft(dt, value):
        w = torch.tensor([value, value], dtype=dt).softmax(-1)
        return "[" + ", ".join(f"{x:.2f}" for x in w.float().tolist()) + "]"

    rows = [
        ["torch.finfo(dtype).min", *(num(lowest(dt)) for dt in dtypes)],
        ["torch.tensor(-1e9).to(dtype)", *(num(torch.tensor(-1e9).to(dt)) for dt in dtypes)],
        ["x.masked_fill(m, -1e9)", *(fill(dt, -1e9) for dt in dtypes)],
        ["x.masked_fill(m, float('-inf'))", *(fill(dt, float("-inf")) for dt in dtypes)],
        ["finfo.min + torch.tensor(-100.0)", *(num(lowest(dt) + torch.tensor(-100.0, dtype=dt)) for dt in dtypes)],
        ["finfo.min + finfo.min", *(num(lowest(dt) + lowest(dt)) for dt in dtypes)],
        ["softmax([finfo.min, finfo.min])", *(soft(dt, torch.finfo(dt).min) for dt in dtypes)],
        ["softmax([-inf, -inf])", *(soft(dt, float("-inf")) for dt in dtypes)],
    ]
    try:
        torch.zeros(1, dtype=torch.float16).masked_fill(torch.tensor([True]), -1e9)
        message = ""
    except RuntimeError as err:
        message = str(err).splitlines()[0]
    return {
        "values": {"fp16_max": num(torch.tensor(torch.finfo(torch.float16).max, dtype=torch.float16)),
                   "fp16_min": rows[0][1], "overflow_message": message, "bf16_1e9": rows[1][2]},
        "tables": {"fills": table(rows, [dtype_name(dt) for dt in dtypes], code=(0,))},
    }
