# attack: arbitrary code finds the registration that refuses the fused kernels (gc.get_objects()), undoes it, pops the worker's torch function and dispatch modes around the call, and uses scaled_dot_product_attention -> fail (unsafe_code)
# runtime: fail (forbidden_api)
# Invariant: the refusing kernels are registered without a Python handle anything could find or finalize (red-team
# round 6 of issue 19 undid a torch.library.Library found by gc and scored 24/24 with the fused kernel).
import gc

import torch
import torch.nn as nn
import torch.nn.functional as F

for o in gc.get_objects():
    if type(o).__name__ in ("Library", "_DispatchModule"):
        for undo in ("_destroy", "reset"):
            try:
                getattr(o, undo)()
            except Exception:
                pass


def _off():
    tf = []
    while torch._C._len_torch_function_stack() > 0:
        tf.append(torch._C._pop_torch_function_stack())
    td = []
    while torch._C._len_torch_dispatch_stack() > 0:
        td.append(torch._C._pop_torch_dispatch_stack(None))
    return tf, td


def _on(saved):
    tf, td = saved
    for m in reversed(tf):
        torch._C._push_on_torch_function_stack(m)
    for m in reversed(td):
        torch._C._push_on_torch_dispatch_stack(m)


class SelfAttention(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        saved = _off()
        try:
            q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
            return getattr(F, "scaled_dot_" + "product_attention")(q, k, v)
        finally:
            _on(saved)
