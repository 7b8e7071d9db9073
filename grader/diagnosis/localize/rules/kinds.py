"""Kinds of traced ops and of differences the rules tell apart."""
from __future__ import annotations


PATTERN = ("it blocks", "it leaves", "it also blocks")  # how a mask's blocked positions differ (not its fill value)
REARRANGE = {"transpose", "permute", "view", "reshape", "contiguous", "flatten", "unflatten", "T", "mT", "movedim",
             "swapaxes", "squeeze", "unsqueeze", "view_as", "reshape_as", "t"}  # the same values, laid out otherwise
PRODUCTS = {"matmul", "bmm", "einsum", "__matmul__", "mm", "baddbmm"}
MOVES = {"split", "chunk", "unbind", "__getitem__", "cat", "stack", "view", "reshape", "transpose", "permute", "contiguous",
         "flatten", "unflatten", "narrow", "select", "expand", "expand_as", "repeat", "repeat_interleave", "index_select",
         "gather", "roll", "flip", "t", "T", "mT", "squeeze", "unsqueeze", "movedim", "swapaxes", "clone", "to", "float",
         "double", "half", "type", "type_as", "view_as", "reshape_as", "tensor_split"}  # move, pick or cast values only
CASTS = {"to", "float", "double", "half", "bfloat16", "type", "type_as"}  # a move that may change the precision
ADDS = {"add", "__add__", "__radd__", "add_", "__iadd__", "sub", "__sub__", "__rsub__", "sub_", "__isub__"}
NOT_THE_MASK = ("where the", "it equals the softmax", "it holds the values", "it equals the")  # a fill, a softmax, a layout, a factor
FUSED = {"scaled_dot_product_attention"}  # one call from the queries, keys and values to the context
