# expect: kv_cache_mask_offset
# source: facebookresearch/fairseq fairseq/modules/multihead_attention.py, MultiheadAttention (self_attention=True,
#         incremental_state path with saved_state["prev_key"/"prev_value"]), fairseq/utils.py softmax() and
#         fill_with_neg_inf(), and the decoder's mask choice in fairseq/models/transformer/transformer_decoder.py
#         (self_attn_mask = buffered_future_mask(x) if incremental_state is None else None) (https://github.com/facebookresearch/fairseq/blob/3d262bb25690e4eb2e7d3c1309b1e9c406ca4b99/fairseq/modules/multihead_attention.py)
# license: MIT (Copyright (c) Facebook, Inc. and its affiliates)
# changes: class renamed KVCacheAttention; constructor (embed_dim, num_heads, ..., self_attention=True) -> the
#          contract's (d_in, d_out, context_length, num_heads, qkv_bias=False) with embed_dim = d_out, dropout 0;
#          q_proj/k_proj/v_proj renamed W_query/W_key/W_value (d_in inputs, bias=qkv_bias), out_proj keeps its bias.
#          The incremental_state dict becomes the contract's caches: saved_state["prev_key"] / ["prev_value"] are
#          exactly the contract's (B, nh, P, hs) tensors, read with the author's view(bsz * heads, -1, head_dim) and
#          returned as the author stores them (view(bsz, heads, -1, head_dim)). The decoder's rule is kept: the
#          future mask (triu(fill_with_neg_inf(zeros)), 1)) is built only without a cache (incremental_state is
#          None), otherwise self_attn_mask = None. fairseq is time-major: x is transposed on the way in and the output
#          back. quant_noise, bias_k/v, add_zero_attn, xformers / F.multi_head_attention_forward fast path, padding
#          masks and need_weights are dropped; context_length only bounds the sequence (fairseq grows its mask).
# bug-lines: 60
import torch
import torch.nn as nn
import torch.nn.functional as F


def fill_with_neg_inf(t):
    """FP16-compatible function that fills a tensor with -inf."""
    return t.float().fill_(float("-inf")).type_as(t)


def softmax(x, dim: int, onnx_trace: bool = False):
    if onnx_trace:
        return F.softmax(x.float(), dim=dim)
    else:
        return F.softmax(x, dim=dim, dtype=torch.float32)


class KVCacheAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, qkv_bias=False):
        super().__init__()
        embed_dim = d_out
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        assert (
            self.head_dim * num_heads == self.embed_dim
        ), "embed_dim must be divisible by num_heads"
        self.scaling = self.head_dim**-0.5
        self.self_attention = True

        self.W_key = nn.Linear(d_in, embed_dim, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, embed_dim, bias=qkv_bias)
        self.W_query = nn.Linear(d_in, embed_dim, bias=qkv_bias)
        self.out_proj = nn.Linear(embed_dim, embed_dim, bias=True)

    def forward(self, x, k_cache=None, v_cache=None):
        query = x.transpose(0, 1)
        # transformer_decoder.py: self_attn_mask = buffered_future_mask(x) only when incremental_state is None
        if k_cache is None:
            dim = query.size(0)
            attn_mask = torch.triu(fill_with_neg_inf(torch.zeros([dim, dim])), 1).to(query)
        else:
            attn_mask = None
        saved_state = None if k_cache is None else {"prev_key": k_cache, "prev_value": v_cache}

        tgt_len, bsz, embed_dim = query.size()

        q = self.W_query(query)
        k = self.W_key(query)
        v = self.W_value(query)
        q *= self.scaling

        q = (
            q.contiguous()
            .view(tgt_len, bsz * self.num_heads, self.head_dim)
            .transpose(0, 1)
        )
        kv_bsz = bsz  # need default value for scripting
        if k is not None:
            kv_bsz = k.size(1)
            k = (
                k.contiguous()
                .view(-1, kv_bsz * self.num_heads, self.head_dim)
                .transpose(0, 1)
            )
        if v is not None:
            v = (
                v.contiguous()
                .view(-1, kv_bsz * self.num_heads, self.head_dim)
                .transpose(0, 1)
            )

        if saved_state is not None:
            # saved states are stored with shape (bsz, num_heads, seq_len, head_dim)
            if "prev_key" in saved_state:
                _prev_key = saved_state["prev_key"]
                assert _prev_key is not None
                kv_bsz = _prev_key.size(0)
                prev_key = _prev_key.view(kv_bsz * self.num_heads, -1, self.head_dim)
                assert k is not None
                k = torch.cat([prev_key, k], dim=1)
            if "prev_value" in saved_state:
                _prev_value = saved_state["prev_value"]
                assert _prev_value is not None
                assert kv_bsz == _prev_value.size(0)
                prev_value = _prev_value.view(
                    kv_bsz * self.num_heads, -1, self.head_dim
                )
                assert v is not None
                v = torch.cat([prev_value, v], dim=1)
        new_k_cache = k.view(kv_bsz, self.num_heads, -1, self.head_dim)
        new_v_cache = v.view(kv_bsz, self.num_heads, -1, self.head_dim)
        src_len = k.size(1)

        attn_weights = torch.bmm(q, k.transpose(1, 2))

        assert list(attn_weights.size()) == [bsz * self.num_heads, tgt_len, src_len]

        if attn_mask is not None:
            attn_mask = attn_mask.unsqueeze(0)
            attn_weights += attn_mask

        attn_weights_float = softmax(attn_weights, dim=-1)
        attn_weights = attn_weights_float.type_as(attn_weights)
        attn_probs = attn_weights

        assert v is not None
        attn = torch.bmm(attn_probs, v)
        assert list(attn.size()) == [bsz * self.num_heads, tgt_len, self.head_dim]
        attn = attn.transpose(0, 1).contiguous().view(tgt_len, bsz, self.embed_dim)
        attn = self.out_proj(attn)
        return attn.transpose(0, 1), new_k_cache, new_v_cache
