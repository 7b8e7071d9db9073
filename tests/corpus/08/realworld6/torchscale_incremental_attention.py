# expect: kv_cache_mask_offset
# also: heads_not_divisible
# bug-lines: 16, 30, 31
# source: microsoft/torchscale @0cb96955010a93818b3dafb99708f465bcbcc651, torchscale/component/multihead_attention.py (MultiheadAttention, self-attention with incremental_state)
# changes: layer names and sizes from the contract (W_query/W_key/W_value d_in->d_out with qkv_bias, out_proj); args, MultiwayWrapper, xpos, subln, dropout, key_padding_mask and rel_pos removed; the incremental_state dict is filled from k_cache/v_cache at the entry and its keys/values are returned; the self_attn_mask of torchscale's Decoder (triu(-inf) without incremental state, None with it) is built at the entry; returns (y, k, v) instead of (attn, attn_weights); context_length unused as in the source
import math

import torch
import torch.nn.functional as F
from torch import nn


class KVCacheAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, qkv_bias=False):
        super().__init__()
        self.embed_dim = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.scaling = self.head_dim**-0.5

        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out, bias=True)

    def forward(self, x, k_cache=None, v_cache=None):
        incremental_state = None
        if k_cache is not None:
            incremental_state = {"prev_key": k_cache, "prev_value": v_cache}
        if incremental_state is None:
            attn_mask = torch.triu(torch.zeros([x.size(1), x.size(1)]).float().fill_(float("-inf")).type_as(x), 1)
        else:
            attn_mask = None

        query = key = value = x
        bsz, tgt_len, _ = query.size()
        src_len = tgt_len

        key_bsz, src_len, _ = key.size()
        assert key_bsz == bsz, f"{query.size(), key.size()}"
        assert value is not None
        assert bsz, src_len == value.shape[:2]

        q = self.W_query(query)
        k = self.W_key(key)
        v = self.W_value(value)
        q *= self.scaling

        q = q.view(bsz, tgt_len, self.num_heads, self.head_dim).transpose(1, 2)
        k = k.view(bsz, src_len, self.num_heads, self.head_dim).transpose(1, 2)
        v = v.view(bsz, src_len, self.num_heads, self.head_dim).transpose(1, 2)
        q = q.reshape(bsz * self.num_heads, tgt_len, self.head_dim)
        k = k.reshape(bsz * self.num_heads, src_len, self.head_dim)
        v = v.reshape(bsz * self.num_heads, src_len, self.head_dim)

        if incremental_state is not None:
            if "prev_key" in incremental_state:
                prev_key = incremental_state["prev_key"].view(
                    bsz * self.num_heads, -1, self.head_dim
                )
                prev_value = incremental_state["prev_value"].view(
                    bsz * self.num_heads, -1, self.head_dim
                )
                k = torch.cat([prev_key, k], dim=1)
                v = torch.cat([prev_value, v], dim=1)
            incremental_state["prev_key"] = k.view(
                bsz, self.num_heads, -1, self.head_dim
            )
            incremental_state["prev_value"] = v.view(
                bsz, self.num_heads, -1, self.head_dim
            )
            src_len = k.size(1)

        attn_weights = torch.bmm(q, k.transpose(1, 2))

        if attn_mask is not None:
            attn_weights = torch.nan_to_num(attn_weights)
            attn_mask = attn_mask.unsqueeze(0)
            attn_weights += attn_mask

        attn_weights = F.softmax(attn_weights, dim=-1, dtype=torch.float32).type_as(
            attn_weights
        )
        attn_probs = attn_weights

        attn = torch.bmm(attn_probs, v)
        attn = attn.transpose(0, 1).reshape(tgt_len, bsz, self.embed_dim).transpose(0, 1)

        attn = self.out_proj(attn)

        return attn, k.view(bsz, self.num_heads, -1, self.head_dim), v.view(bsz, self.num_heads, -1, self.head_dim)
