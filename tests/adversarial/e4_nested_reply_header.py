# attack: write reply frames whose JSON header is nested 200 000 deep (RecursionError in the grader's decoder) into the reply pipe -> fail (unsafe_code)
# runtime: fail (crash)
# Invariant: any reply the grader cannot decode, or whose header is not shaped like a reply (unknown
# keys, nesting deeper than protocol.MAX_DEPTH), is a crash of this submission only: one JSON verdict,
# exit 1, nothing cached as an internal error.
import os
import struct

import torch.nn as nn

deep = b'{"ok": true, "error": ' + b"[" * 200_000 + b"]" * 200_000 + b"}"
shallow = b'{"ok": true, "outputs": [{"shape": [[[[[[2]]]]]], "dtype": "float64"}]}'
for header in (deep, shallow):
    frame = struct.pack(">Q", len(header)) + header + struct.pack(">Q", 0)
    for fd in range(3, 256):  # the reply pipe is one of these; the request pipe refuses writes
        try:
            os.write(fd, frame)
        except OSError:
            pass


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()

    def forward(self, x):
        return x
