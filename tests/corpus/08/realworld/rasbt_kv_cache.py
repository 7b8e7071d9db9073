# expect: pass
# source: rasbt/LLMs-from-scratch/ch04/03_kv-cache/gpt_with_kv_cache.py, class MultiHeadAttention (commit 28c65cdfbc3338e2e040016eea4b7fdf556e4d57)
# license: Apache-2.0
# changes: class -> KVCacheAttention(d_in, d_out, context_length, num_heads, qkv_bias) (contract signature; no
#   dropout argument, so the dropout layer is nn.Dropout(0.0)); the author keeps the cache in module state
#   (self.cache_k/self.cache_v, use_cache flag, self.ptr_current_pos); the contract passes it in and out, so
#   use_cache = k_cache is not None, ptr_current_pos = number of cached positions, and the state assignments become
#   locals. The author caches keys before the head transpose, (b, tokens, heads, head_dim), concatenated on dim 1;
#   the contract's cache is (b, heads, positions, head_dim), so the incoming cache is transposed to the author's
#   layout and the returned keys/values are the author's own transposed tensors. Computation otherwise as written.
import torch
import torch.nn as nn


class KVCacheAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"

        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads  # Reduce the projection dim to match desired output dim

        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)  # Linear layer to combine head outputs
        self.dropout = nn.Dropout(0.0)
        self.register_buffer(
            "mask",
            torch.triu(torch.ones(context_length, context_length), diagonal=1),
            persistent=False
        )

    def forward(self, x, k_cache=None, v_cache=None):
        b, num_tokens, d_in = x.shape
        use_cache = k_cache is not None
        ptr_current_pos = k_cache.shape[2] if use_cache else 0

        keys_new = self.W_key(x)  # Shape: (b, num_tokens, d_out)
        values_new = self.W_value(x)
        queries = self.W_query(x)

        # Unroll last dim: (b, num_tokens, d_out) -> (b, num_tokens, num_heads, head_dim)
        keys_new = keys_new.view(b, num_tokens, self.num_heads, self.head_dim)
        values_new = values_new.view(b, num_tokens, self.num_heads, self.head_dim)
        queries = queries.view(b, num_tokens, self.num_heads, self.head_dim)

        if use_cache:
            cache_k = torch.cat([k_cache.transpose(1, 2), keys_new], dim=1)
            cache_v = torch.cat([v_cache.transpose(1, 2), values_new], dim=1)
            keys, values = cache_k, cache_v
        else:
            keys, values = keys_new, values_new

        # Transpose: (b, num_tokens, num_heads, head_dim) -> (b, num_heads, num_tokens, head_dim)
        keys = keys.transpose(1, 2)
        queries = queries.transpose(1, 2)
        values = values.transpose(1, 2)

        # Compute scaled dot-product attention (aka self-attention) with a causal mask
        attn_scores = queries @ keys.transpose(2, 3)  # Dot product for each head

        num_tokens_Q = queries.shape[-2]
        num_tokens_K = keys.shape[-2]
        if use_cache:
            mask_bool = self.mask.bool()[
                ptr_current_pos:ptr_current_pos + num_tokens_Q, :num_tokens_K
            ]
        else:
            mask_bool = self.mask.bool()[:num_tokens_Q, :num_tokens_K]

        # Use the mask to fill attention scores
        attn_scores.masked_fill_(mask_bool, -torch.inf)

        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)

        # Shape: (b, num_tokens, num_heads, head_dim)
        context_vec = (attn_weights @ values).transpose(1, 2)

        # Combine heads, where self.d_out = self.num_heads * self.head_dim
        context_vec = context_vec.contiguous().view(b, num_tokens, self.d_out)
        context_vec = self.out_proj(context_vec)  # optional projection

        return context_vec, keys, values
