# expect: scale_wrong_dim
# source: sebastianvlad1/Transformer/head.py, class Head (https://github.com/sebastianvlad1/Transformer/blob/09bfacadc48b791b38b522886d22437ee874c303/head.py)
# license: none stated in the repository (no LICENSE file)
# changes: class renamed Head -> CausalAttention; constructor (n_embd, head_size, block_size) -> the contract's
#          (d_in, d_out, context_length, dropout, qkv_bias=False) with n_embd = d_in, head_size = d_out,
#          block_size = context_length; key/query/value renamed W_key/W_query/W_value and given bias=qkv_bias
#          (was bias=False). The author's module has no dropout at all; none was added. Scale `C**-0.5` is the author's.
# bug-lines: 27
import torch
import torch.nn as nn
from torch.nn import functional as F

class CausalAttention(nn.Module):

    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.W_key =  nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.register_buffer('tril', torch.tril(torch.ones(context_length, context_length)))

    def forward(self, x):
        B,T,C = x.shape
        k = self.W_key(x)
        q = self.W_query(x)

        wei = q @ k.transpose(-2, -1) * C**-0.5
        wei = wei.masked_fill(self.tril[:T,:T] == 0, float('-inf'))
        wei = F.softmax(wei, dim=-1)

        v = self.W_value(x)
        out = wei @ v
        return out
