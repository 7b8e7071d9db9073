# expect: heads_not_divisible
# bug-lines: 24
# source: jingyaogong/minimind @0074dcfd506e8097f981ebe091235606fa57c03b, model/model_minimind.py (Attention, repeat_kv)
# changes (only where the exercise contract forces it; the author's logic is kept, bugs included):
#   MiniMindConfig -> contract arguments (num_key_value_heads = num_heads, head_dim = hidden_size // heads as the config computes it, dropout 0);
#   q/k/v/o_proj -> W_query/W_key/W_value/out_proj (out_proj with bias); QK RMSNorm and rotary removed (not in the contract); flash branch removed;
#   past_key_value/present transposed from/to the contract's (B, nh, P, hd)
import math

import torch
import torch.nn.functional as F
from torch import nn


def repeat_kv(x: torch.Tensor, n_rep: int) -> torch.Tensor:
    bs, slen, num_key_value_heads, head_dim = x.shape
    if n_rep == 1: return x
    return (x[:, :, :, None, :].expand(bs, slen, num_key_value_heads, n_rep, head_dim).reshape(bs, slen, num_key_value_heads * n_rep, head_dim))

class KVCacheAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, qkv_bias=False):
        super().__init__()
        hidden_size, num_attention_heads, num_key_value_heads, dropout = d_out, num_heads, num_heads, 0.0
        head_dim = hidden_size // num_attention_heads
        self.num_key_value_heads = num_attention_heads if num_key_value_heads is None else num_key_value_heads
        self.n_local_heads = num_attention_heads
        self.n_local_kv_heads = self.num_key_value_heads
        self.n_rep = self.n_local_heads // self.n_local_kv_heads
        self.head_dim = head_dim
        self.is_causal = True
        self.W_query = nn.Linear(d_in, num_attention_heads * self.head_dim, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, self.num_key_value_heads * self.head_dim, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, self.num_key_value_heads * self.head_dim, bias=qkv_bias)
        self.out_proj = nn.Linear(num_attention_heads * self.head_dim, hidden_size)
        self.attn_dropout = nn.Dropout(dropout)
        self.resid_dropout = nn.Dropout(dropout)
        self.dropout = dropout

    def forward(self, x, k_cache=None, v_cache=None):
        # adapter: the author's past_key_value is (bsz, P, n_kv_heads, head_dim); the contract's cache is
        # (B, num_heads, P, head_dim); use_cache=True, attention_mask=None
        past_key_value = None if k_cache is None else (k_cache.transpose(1, 2), v_cache.transpose(1, 2))
        use_cache, attention_mask = True, None
        bsz, seq_len, _ = x.shape
        xq, xk, xv = self.W_query(x), self.W_key(x), self.W_value(x)
        xq = xq.view(bsz, seq_len, self.n_local_heads, self.head_dim)
        xk = xk.view(bsz, seq_len, self.n_local_kv_heads, self.head_dim)
        xv = xv.view(bsz, seq_len, self.n_local_kv_heads, self.head_dim)
        if past_key_value is not None:
            xk = torch.cat([past_key_value[0], xk], dim=1)
            xv = torch.cat([past_key_value[1], xv], dim=1)
        past_kv = (xk, xv) if use_cache else None
        xq, xk, xv = (xq.transpose(1, 2), repeat_kv(xk, self.n_rep).transpose(1, 2), repeat_kv(xv, self.n_rep).transpose(1, 2))
        scores = (xq @ xk.transpose(-2, -1)) / math.sqrt(self.head_dim)
        if self.is_causal: scores[:, :, :, -seq_len:] += torch.full((seq_len, seq_len), float("-inf"), device=scores.device).triu(1)
        if attention_mask is not None: scores += (1.0 - attention_mask.unsqueeze(1).unsqueeze(2)) * -1e9
        output = self.attn_dropout(F.softmax(scores.float(), dim=-1).type_as(xq)) @ xv
        output = output.transpose(1, 2).reshape(bsz, seq_len, -1)
        output = self.resid_dropout(self.out_proj(output))
        return output, past_kv[0].transpose(1, 2), past_kv[1].transpose(1, 2)
