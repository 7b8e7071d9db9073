# expect: no_scaling
# also: mask_not_sliced
# bug-lines: 25
# source: ryansenn/byteGPT @0067ce3086384248563c766b076214cd11027fd5, self_attention.py (Head)
# changes (only where the exercise contract forces it; the author's logic is kept, bugs included):
#   Head(block_size, n_embd, head_size) renamed CausalAttention(d_in, d_out, context_length, dropout, qkv_bias=False) (dropout unused, as in
#   the author's class); key/query/value renamed W_key/W_query/W_value with bias=qkv_bias (author: bias=False)
import torch
import torch.nn as nn
class CausalAttention(nn.Module):

    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.tril = torch.tril(torch.ones(context_length, context_length))

    def forward(self, x):
        B, T, C = x.shape

        q = self.W_query(x) # B, T, head_size
        k = self.W_key(x) # B, T, head_size

        wei = q @ k.transpose(-2,-1)
        wei = wei.masked_fill(self.tril == 0, float('-inf'))
        wei = nn.functional.softmax(wei, dim=-1)

        v = self.W_value(x)

        out = wei @ v

        return out
