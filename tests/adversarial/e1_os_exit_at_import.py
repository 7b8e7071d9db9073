# attack: os._exit(0) at import, before any test runs -> fail (unsafe_code)
# runtime: fail (crash)
import os

import torch.nn as nn

os._exit(0)  # "exited with status 0" must never read as success


class SelfAttention(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
