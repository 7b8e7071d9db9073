"""Which dimensions of a tensor hold query positions and which hold key positions, followed op by op.

A tiled attention holds at most a (block, block) tile of scores at once. Shapes alone cannot tell a strip of
scores from other tensors of the same shape ((B, H, d, S) scores look like the transposed keys), so this follows
the data: the query and the key are sources, each with its token dimension tagged "q" or "k"; every aten op the
submission runs maps its inputs' tagged dimensions to its output's (views, contractions, reductions, broadcasting;
an op not known here tags every output dimension that could hold them). A tensor computed from the queries whose
key dimensions together span more than `block` keys, or one with a key dimension whose query dimensions span
more than `block` queries, is scores over too many positions at once (`wide`).

Used by the worker's largest-tensor probe (grader/sandbox/worker.py: Largest) in exercise packs' long cases;
nothing here is reachable from a submission.
"""
from __future__ import annotations

import math
import weakref

import torch

_SIZE = torch._C.TensorBase.size
_DIM = torch._C.TensorBase.dim
_BASE = torch._C.TensorBase._base.__get__
_STRIDE = torch._C.TensorBase.stride
NONE: frozenset = frozenset()

VIEWS = {"view", "reshape", "_unsafe_view", "view_copy", "_reshape_alias", "unsqueeze", "squeeze", "flatten",
         "unflatten"}
KEEPS = {"clone", "contiguous", "detach", "alias", "_to_copy", "to", "lift_fresh", "lift_fresh_copy", "_conj",
         "resolve_conj", "resolve_neg", "slice", "narrow", "split", "split_with_sizes", "chunk", "tensor_split"}
REDUCTIONS = {"sum", "amax", "amin", "max", "min", "mean", "logsumexp", "prod", "any", "all", "argmax", "argmin",
              "var", "std", "var_mean", "std_mean", "nansum", "nanmean", "linalg_vector_norm", "norm", "median",
              "nanmedian", "kthvalue", "mode", "count_nonzero", "aminmax"}
FACTORIES = {"new_zeros", "new_ones", "new_full", "new_empty", "new_empty_strided", "zeros_like", "ones_like",
             "full_like", "empty_like", "rand_like", "randn_like", "randint_like"}  # a shape taken, no values
LIFTS = {"lift_fresh", "lift_fresh_copy"}  # torch.tensor(data), torch.as_tensor(data): values from Python
CONTRACTIONS = {"mm", "bmm", "baddbmm", "addmm", "addbmm", "mv", "dot", "vdot", "matmul"}


class Tag:
    __slots__ = ("dims", "deps")

    def __init__(self, dims: tuple, deps: frozenset):
        self.dims, self.deps = dims, deps  # per dimension the kinds it holds; the kinds the tensor depends on


def _arg(func, args, kwargs, name, default=None):
    for i, a in enumerate(func._schema.arguments):
        if a.name == name:
            return args[i] if i < len(args) else kwargs.get(name, default)
    return default


def _reshape(shape_in, shape_out, dims) -> list:
    """Kinds per output dimension of a view: groups of input and output dimensions with equal products share theirs
    (a dimension split in two keeps its kinds in both)."""
    out = [set() for _ in shape_out]
    i = j = 0
    while i < len(shape_in) or j < len(shape_out):
        gi, gj, pi, pj = [], [], 1, 1
        if i < len(shape_in):
            gi, pi, i = [i], shape_in[i], i + 1
        if j < len(shape_out):
            gj, pj, j = [j], shape_out[j], j + 1
        while pi != pj:
            if pi < pj and i < len(shape_in):
                gi, pi, i = gi + [i], pi * shape_in[i], i + 1
            elif pj < pi and j < len(shape_out):
                gj, pj, j = gj + [j], pj * shape_out[j], j + 1
            else:
                break
        kinds = set().union(*(dims[k] for k in gi))
        for k in gj:
            if shape_out[k] > 1:
                out[k] |= kinds
    return out


def _everywhere(shape, kinds) -> list:
    return [set(kinds) if n > 1 else set() for n in shape]


class ScoreFlow:
    """The tags of the tensors the submission computes from the sources, and the first tensor too wide (wide)."""

    def __init__(self, sources: dict[str, torch.Tensor], block: int):
        self.block = block
        self.tags: dict[int, tuple] = {}
        self.wide: dict | None = None
        for kind, t in sources.items():
            dims = [set() for _ in range(_DIM(t))]
            dims[-2] = {kind}
            self.put(t, dims, frozenset({kind}))

    def get(self, t) -> Tag | None:
        entry = self.tags.get(id(t))
        return entry[1] if entry and entry[0]() is t else None

    def put(self, t, dims, deps) -> None:
        if not deps:
            return
        key = id(t)
        self.tags[key] = (weakref.ref(t, lambda _, k=key: self.tags.pop(k, None)), Tag(tuple(frozenset(d) for d in dims), deps))
        self.check(t)

    def extent(self, t, tag: Tag, kind: str) -> int:
        shape = _SIZE(t)
        return math.prod(n for n, kinds in zip(shape, tag.dims) if kind in kinds) if any(kind in k for k in tag.dims) else 0

    def check(self, t) -> None:
        tag = self.get(t)
        if self.wide is not None or tag is None:
            return
        keys, queries = self.extent(t, tag, "k"), self.extent(t, tag, "q")
        if ("q" in tag.deps and keys > self.block) or (keys and queries > self.block):
            self.wide = {"shape": list(_SIZE(t)), "keys": keys, "queries": queries}

    # -- one op --------------------------------------------------------------------------
    def after(self, func, args, kwargs, out) -> None:
        tagged = [(t, tag) for t in _tensors((args, kwargs)) if (tag := self.get(t)) is not None]
        name = func._overloadpacket.__name__.rstrip("_") if hasattr(func, "_overloadpacket") else str(func)
        if not tagged:
            self.lifted(name, out)
            return
        deps = frozenset().union(*(tag.deps for _, tag in tagged))
        if name in FACTORIES:
            return
        outs = [o for o in (out if isinstance(out, (tuple, list)) else [out]) if isinstance(o, torch.Tensor)]
        first = args[0] if args and isinstance(args[0], torch.Tensor) else None
        for o in outs:
            self.put(o, self.map(func, name, args, kwargs, first, o, tagged), deps)
        for i, a in enumerate(func._schema.arguments):  # written in place or as out=: a view's base holds it too
            if a.alias_info is not None and a.alias_info.is_write:
                dst = args[i] if i < len(args) else kwargs.get(a.name)
                for d in (dst if isinstance(dst, (list, tuple)) else [dst]):
                    if isinstance(d, torch.Tensor):
                        if all(d is not o for o in outs):
                            self.put(d, self.generic(d, tagged), deps)
                        self.into_base(d)

    def lifted(self, name: str, out) -> None:
        """A tensor made from Python data (torch.tensor(x.tolist())) carries no tags: one larger than a tile of
        scores may hold anything the sources did, so every dimension is taken to hold query and key positions."""
        if name in LIFTS and isinstance(out, torch.Tensor) and out.numel() > self.block * self.block:
            self.put(out, _everywhere(_SIZE(out), {"q", "k"}), frozenset({"q", "k"}))

    def into_base(self, view) -> None:
        """What was written into a view is held by the tensor it views: its dimensions found by their strides."""
        base, tag = _BASE(view), self.get(view)
        if base is None or tag is None:
            return
        strides_b, strides_v = list(_STRIDE(base)), list(_STRIDE(view))
        if _DIM(base) == _DIM(view) and sorted(strides_b) == sorted(strides_v) and len(set(strides_b)) == len(strides_b):
            order = {st: i for i, st in enumerate(strides_b)}
            dims = [set() for _ in strides_b]
            for st, kinds in zip(strides_v, tag.dims):
                dims[order[st]] |= kinds
        else:
            dims = _everywhere(_SIZE(base), set().union(*tag.dims))
        old, deps = self.get(base), tag.deps
        if old is not None:
            dims, deps = [a | b for a, b in zip(dims, old.dims)], deps | old.deps
        self.put(base, dims, deps)

    def map(self, func, name, args, kwargs, first, o, tagged) -> list:
        tag = self.get(first) if first is not None else None
        shape_o = list(_SIZE(o))
        if tag is not None and name in ("transpose", "swapaxes", "swapdims", "t", "permute", "movedim"):
            n = len(tag.dims)
            if name == "permute":
                order = [d % n for d in _arg(func, args, kwargs, "dims")]
            else:
                order = list(range(n))
                if n >= 2:
                    a, b = ((_arg(func, args, kwargs, "dim0", 0), _arg(func, args, kwargs, "dim1", 1)) if name != "t"
                            else (0, 1))
                    a, b = a % n, b % n
                    order[a], order[b] = order[b], order[a]
            if len(order) == len(shape_o):
                return [set(tag.dims[i]) for i in order]
        if tag is not None and name in VIEWS:
            return _reshape(list(_SIZE(first)), shape_o, tag.dims)
        if tag is not None and name in ("select", "unbind"):
            dim = _arg(func, args, kwargs, "dim", 0) % max(1, len(tag.dims))
            return [set(k) for i, k in enumerate(tag.dims) if i != dim]
        if tag is not None and name in KEEPS and len(tag.dims) == len(shape_o):
            return [set(k) for k in tag.dims]
        if name in REDUCTIONS and tag is not None:
            dim = _arg(func, args, kwargs, "dim")
            keep = bool(_arg(func, args, kwargs, "keepdim", False))
            n = len(tag.dims)
            reduced = set(range(n)) if dim is None or dim == [] else {d % n for d in (dim if isinstance(dim, (list, tuple)) else [dim])}
            kept = [set() if i in reduced else set(k) for i, k in enumerate(tag.dims)]
            dims = kept if keep else [k for i, k in enumerate(kept) if i not in reduced]
            if len(dims) == len(shape_o):
                return dims
        if name in CONTRACTIONS:
            return self.contraction(name, args, o)
        if name in ("cat", "stack", "concat", "concatenate", "hstack", "vstack"):
            return self.joined(name, func, args, kwargs, o)
        return self.generic(o, tagged)

    def contraction(self, name, args, o) -> list:
        """A @ B: A's rows and B's columns stay, the contracted dimension of each goes (a bias broadcasts)."""
        ts = [a for a in args if isinstance(a, torch.Tensor)]
        a, b = (ts[-2], ts[-1]) if len(ts) >= 2 else (ts[0], ts[0])
        ta, tb = self.get(a), self.get(b)
        da = list(ta.dims) if ta else [NONE] * _DIM(a)
        db = list(tb.dims) if tb else [NONE] * _DIM(b)
        if len(da) >= 2 and len(db) >= 2:
            batch = [set(x) | set(y) for x, y in zip(da[:-2], db[:-2])] if len(da) == len(db) else [set(x) for x in da[:-2]]
            dims = batch + [set(da[-2]), set(db[-1])]
        elif len(da) >= 2:
            dims = [set(x) for x in da[:-1]]
        else:
            dims = []
        if name in ("addbmm",) and dims:
            dims = dims[1:]
        if len(dims) != _DIM(o):
            return _everywhere(_SIZE(o), set().union(*da, *db))
        if len(ts) == 3 and (tc := self.get(ts[0])) is not None:  # baddbmm / addmm: the added term
            extra = self.generic(o, [(ts[0], tc)])
            dims = [d | e for d, e in zip(dims, extra)]
        return dims

    def joined(self, name, func, args, kwargs, o) -> list:
        parts = [t for t in (args[0] if args and isinstance(args[0], (list, tuple)) else []) if isinstance(t, torch.Tensor)]
        dims = [set() for _ in range(_DIM(o))]
        for t in parts:
            tag = self.get(t)
            if tag is None:
                continue
            if name == "stack":
                d = _arg(func, args, kwargs, "dim", 0) % _DIM(o)
                src = list(tag.dims[:d]) + [NONE] + list(tag.dims[d:])
            else:
                src = list(tag.dims)
            if len(src) != len(dims):
                return _everywhere(_SIZE(o), set().union(*tag.dims))
            dims = [a | set(b) for a, b in zip(dims, src)]
        return dims

    def generic(self, o, tagged) -> list:
        """Broadcasting (inputs aligned from the right), else the same dimensions where the rank is kept, else
        every dimension of the output's size; a tagged dimension with no place found is put everywhere."""
        shape_o = list(_SIZE(o))
        dims = [set() for _ in shape_o]
        for t, tag in tagged:
            shape_t = list(_SIZE(t))
            if len(shape_t) <= len(shape_o) and all(a in (b, 1) for a, b in zip(shape_t[::-1], shape_o[::-1])):
                off = len(shape_o) - len(shape_t)
                for i, kinds in enumerate(tag.dims):
                    if shape_t[i] == shape_o[off + i]:
                        dims[off + i] |= kinds
                continue
            for i, kinds in enumerate(tag.dims):
                if not kinds or shape_t[i] <= 1:
                    continue
                places = [j for j, n in enumerate(shape_o) if n == shape_t[i]]
                if len(shape_t) == len(shape_o):
                    places.append(i)
                for j in places or [j for j, n in enumerate(shape_o) if n > 1]:
                    dims[j] |= kinds
        return dims


def _tensors(obj, out=None) -> list:
    out = [] if out is None else out
    if isinstance(obj, torch.Tensor):
        out.append(obj)
    elif isinstance(obj, (list, tuple)):
        for item in obj:
            _tensors(item, out)
    elif isinstance(obj, dict):
        for item in obj.values():
            _tensors(item, out)
    return out
