# expect: mask_missing
# source: hkproj/pytorch-llama/model.py, class SelfAttention and repeat_kv (https://github.com/hkproj/pytorch-llama/blob/067f8a37fe36ac8b52dca9cc6f2a2e8d6aa372d6/model.py)
# license: MIT (LICENSE.txt, "Copyright (c) [year] [fullname]" template)
# changes: class renamed KVCacheAttention; constructor (args: ModelArgs) -> the contract's
#          (d_in, d_out, context_length, num_heads, qkv_bias=False) with n_kv_heads = n_heads = num_heads (plain
#          multi-head, the exercise has no grouped KV heads); wq/wk/wv/wo renamed W_query/W_key/W_value/out_proj
#          with d_in inputs, bias=qkv_bias for the first three and a bias for out_proj (all were bias=False).
#          The static cache_k/cache_v buffers written at start_pos are replaced by the contract's caches passed in and
#          returned: "replace the entry in the cache" becomes a concatenation after the cached positions (in the
#          author's (B, Seq, H, Head_Dim) layout, converted from/to the contract's (B, H, Seq, Head_Dim)).
#          The rotary embedding (apply_rotary_embeddings with freqs_complex) is removed: the exercise has no
#          positions. The attention itself (no mask: the author decodes one token at a time) is the author's.
# bug-lines: 101, 103
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def repeat_kv(x: torch.Tensor, n_rep: int) -> torch.Tensor:
    batch_size, seq_len, n_kv_heads, head_dim = x.shape
    if n_rep == 1:
        return x
    return (
        # (B, Seq_Len, N_KV_Heads, 1, Head_Dim)
        x[:, :, :, None, :]
        # (B, Seq_Len, N_KV_Heads, N_Rep, Head_Dim)
        .expand(batch_size, seq_len, n_kv_heads, n_rep, head_dim)
        # (B, Seq_Len, N_KV_Heads * N_Rep, Head_Dim)
        .reshape(batch_size, seq_len, n_kv_heads * n_rep, head_dim)
    )


class KVCacheAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, qkv_bias=False):
        super().__init__()

        # Indicates the number of heads for the Keys and Values
        self.n_kv_heads = num_heads
        # Indicates the number of heads for the Queries
        self.n_heads_q = num_heads
        # Indicates how many times the Keys and Values should be repeated
        self.n_rep = self.n_heads_q // self.n_kv_heads
        # Indicates the dimension of each head, that is, the part of the embedding that each head will be responsible for
        self.head_dim = d_out // num_heads

        self.W_query = nn.Linear(d_in, num_heads * self.head_dim, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, self.n_kv_heads * self.head_dim, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, self.n_kv_heads * self.head_dim, bias=qkv_bias)
        self.out_proj = nn.Linear(num_heads * self.head_dim, d_out)

    def forward(
        self,
        x: torch.Tensor,
        k_cache=None,
        v_cache=None,
    ):
        batch_size, seq_len, _ = x.shape  # (B, 1, Dim)

        # (B, 1, Dim) -> (B, 1, H_Q * Head_Dim)
        xq = self.W_query(x)
        # (B, 1, Dim) -> (B, 1, H_KV * Head_Dim)
        xk = self.W_key(x)
        # (B, 1, Dim) -> (B, 1, H_KV * Head_Dim)
        xv = self.W_value(x)

        # (B, 1, H_Q * Head_Dim) -> (B, 1, H_Q, Head_Dim)
        xq = xq.view(batch_size, seq_len, self.n_heads_q, self.head_dim)
        # (B, 1, H_KV * Head_Dim) -> (B, 1, H_KV, Head_Dim)
        xk = xk.view(batch_size, seq_len, self.n_kv_heads, self.head_dim)
        # (B, 1, H_KV * Head_Dim) -> (B, 1, H_KV, Head_Dim)
        xv = xv.view(batch_size, seq_len, self.n_kv_heads, self.head_dim)

        # Replace the entry in the cache
        if k_cache is not None:
            xk = torch.cat([k_cache.transpose(1, 2), xk], dim=1)
            xv = torch.cat([v_cache.transpose(1, 2), xv], dim=1)

        # (B, Seq_Len_KV, H_KV, Head_Dim)
        keys = xk
        # (B, Seq_Len_KV, H_KV, Head_Dim)
        values = xv
        new_k_cache, new_v_cache = keys.transpose(1, 2), values.transpose(1, 2)

        # Since every group of Q shares the same K and V heads, just repeat the K and V heads for every Q in the same group.

        # (B, Seq_Len_KV, H_KV, Head_Dim) --> (B, Seq_Len_KV, H_Q, Head_Dim)
        keys = repeat_kv(keys, self.n_rep)
        # (B, Seq_Len_KV, H_KV, Head_Dim) --> (B, Seq_Len_KV, H_Q, Head_Dim)
        values = repeat_kv(values, self.n_rep)

        # (B, 1, H_Q, Head_Dim) -> (B, H_Q, 1, Head_Dim)
        xq = xq.transpose(1, 2)
        # (B, Seq_Len_KV, H_Q, Head_Dim) -> (B, H_Q, Seq_Len_KV, Head_Dim)
        keys = keys.transpose(1, 2)
        # (B, Seq_Len_KV, H_Q, Head_Dim) -> (B, H_Q, Seq_Len_KV, Head_Dim)
        values = values.transpose(1, 2)

        # (B, H_Q, 1, Head_Dim) @ (B, H_Q, Head_Dim, Seq_Len_KV) -> (B, H_Q, 1, Seq_Len_KV)
        scores = torch.matmul(xq, keys.transpose(2, 3)) / math.sqrt(self.head_dim)
        # (B, H_Q, 1, Seq_Len_KV) -> (B, H_Q, 1, Seq_Len_KV)
        scores = F.softmax(scores.float(), dim=-1).type_as(xq)

        # (B, H_Q, 1, Seq_Len) @ (B, H_Q, Seq_Len_KV, Head_Dim) -> (B, H_Q, 1, Head_Dim)
        output = torch.matmul(scores, values)
        # (B, H_Q, 1, Head_Dim) -> (B, 1, H_Q, Head_Dim) -> (B, 1, Dim)
        output = (output.transpose(1, 2).contiguous().view(batch_size, seq_len, -1))
        return self.out_proj(output), new_k_cache, new_v_cache # (B, 1, Dim) -> (B, 1, Dim)
