# expect: heads_not_divisible
# bug-lines: 18
# source: ambisinister/mla-experiments @88f178893979a8233d981b80061be85b9dbfcca8, modeling/attention/mha.py (MHA)
# changes: MHA(d_model, n_heads) becomes KVCacheAttention(d_in, d_out, context_length, num_heads, qkv_bias=False) (contract);
#          the raw qkv / wo Parameters become W_query/W_key/W_value (d_in -> d_out, bias=qkv_bias) and out_proj (with bias)
#          because the grader loads weights by those names, so Q, K, V come from three projections instead of chunking one;
#          forward(x, kv_cache, past_length) becomes forward(x, k_cache, v_cache) with past_length = k_cache.size(2), the
#          position the contract defines; F.scaled_dot_product_attention(attn_mask=sq_mask) is forbidden here and is
#          written out as the softmax it computes with the same keep-mask; returns (x, k, v) instead of (x, (k, v)).
import torch
import math

class KVCacheAttention(torch.nn.Module):

    def __init__(self, d_in, d_out, context_length, num_heads, qkv_bias=False):
        super().__init__()
        self.d_model = d_out
        self.n_heads = num_heads
        self.W_query = torch.nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = torch.nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = torch.nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = torch.nn.Linear(d_out, d_out)

    def forward(self, x, k_cache=None, v_cache=None):
        past_length = 0 if k_cache is None else k_cache.size(2)
        # queries, keys, and values
        B, S, _ = x.shape
        D = self.d_model
        Q, K, V = self.W_query(x), self.W_key(x), self.W_value(x)

        # split into multiple heads
        dh = D//self.n_heads

        # We do this all at once because the reshape options are super expensive
        q_heads = Q.view(B, S, self.n_heads, dh).transpose(1,2)
        k_heads = K.view(B, S, self.n_heads, dh).transpose(1,2)
        v_heads = V.view(B, S, self.n_heads, dh).transpose(1,2)

        if k_cache is not None:
            k_heads = torch.cat([k_cache, k_heads], dim=2)
            v_heads = torch.cat([v_cache, v_heads], dim=2)

        S_full = k_heads.size(2)

        # make attention mask
        mask = torch.ones((S,S_full), device=x.device)
        mask = torch.tril(mask, diagonal=past_length)
        mask = mask[None, None, :, :]

        sq_mask = mask == 1

        # attention
        scores = (q_heads @ k_heads.transpose(-2, -1)) / math.sqrt(dh)
        x = torch.softmax(scores.masked_fill(~sq_mask, float("-inf")), dim=-1) @ v_heads

        x = x.transpose(1, 2).reshape(B, S, D)

        # apply projection
        x = self.out_proj(x)

        return x, k_heads, v_heads
