# expect: kv_cache_ignored
# also: heads_not_divisible
# bug-lines: 30, 98
# source: mistralai/mistral-inference @215fc80d4a00177854b51a93fd3d455094f0e085, one_file_ref.py (Attention, repeat_kv, and the
#   prefill mask built in Transformer.forward)
# changes: Attention(args) -> KVCacheAttention(d_in, d_out, context_length, num_heads, qkv_bias=False) with dim = d_in,
#   n_heads = n_kv_heads = num_heads, head_dim = d_out // num_heads, sliding_window = context_length; wq/wk/wv/wo ->
#   W_query/W_key/W_value/out_proj (bias=qkv_bias; out_proj with bias, to d_out, as the contract defines them); rotary
#   embeddings removed (no positions input). Boundary glue for the cache: the author keeps a rotating buffer
#   (B, sliding_window, n_kv_heads, head_dim) on the module and takes `positions`; here positions = P..P+T-1 with
#   P = k_cache.size(2), the buffer is allocated per call (x's dtype/device) and filled with the contract's cache
#   (transposed to the author's layout), and the first P+T slots are returned transposed back. The mask the author builds
#   in Transformer.forward for seqlen > 1 is built here, from the same lines.
import torch
from torch import nn


def repeat_kv(keys: torch.Tensor, values: torch.Tensor, repeats: int):
    keys = torch.repeat_interleave(keys, repeats=repeats, dim=2)
    values = torch.repeat_interleave(values, repeats=repeats, dim=2)
    return keys, values


class KVCacheAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, qkv_bias=False):
        super().__init__()

        self.n_heads: int = num_heads
        self.n_kv_heads: int = num_heads
        self.head_dim = d_out // num_heads

        self.repeats = self.n_heads // self.n_kv_heads
        self.sliding_window = context_length

        self.scale = self.head_dim**-0.5

        self.W_query = nn.Linear(
            d_in,
            self.n_heads * self.head_dim,
            bias=qkv_bias
        )
        self.W_key = nn.Linear(
            d_in,
            self.n_kv_heads * self.head_dim,
            bias=qkv_bias
        )
        self.W_value = nn.Linear(
            d_in,
            self.n_kv_heads * self.head_dim,
            bias=qkv_bias
        )
        self.out_proj = nn.Linear(
            self.n_heads * self.head_dim,
            d_out,
        )

    def forward(self, x, k_cache=None, v_cache=None):

        bsz, seqlen, _ = x.shape

        # boundary: the author's positions and rotating cache buffer, from the contract's cache
        P = 0 if k_cache is None else k_cache.size(2)
        positions = torch.arange(P, P + seqlen, device=x.device)
        self.cache_k = torch.zeros((bsz, self.sliding_window, self.n_kv_heads, self.head_dim), dtype=x.dtype, device=x.device)
        self.cache_v = torch.zeros((bsz, self.sliding_window, self.n_kv_heads, self.head_dim), dtype=x.dtype, device=x.device)
        if k_cache is not None:
            self.cache_k[:, :P] = k_cache.transpose(1, 2)
            self.cache_v[:, :P] = v_cache.transpose(1, 2)

        # the mask of Transformer.forward
        mask = None
        if seqlen > 1:
            tensor = torch.full(
                (seqlen, seqlen),
                dtype=x.dtype,
                fill_value=1,
                device=x.device,
            )
            mask = torch.tril(tensor, diagonal=0).to(x.dtype)
            # make the mask banded to account for sliding window
            mask = torch.triu(mask, diagonal=-self.sliding_window)
            mask = torch.log(mask)

        xq, xk, xv = self.W_query(x), self.W_key(x), self.W_value(x)
        xq = xq.view(bsz, seqlen, self.n_heads, self.head_dim)
        xk = xk.view(bsz, seqlen, self.n_kv_heads, self.head_dim)
        xv = xv.view(bsz, seqlen, self.n_kv_heads, self.head_dim)

        # The cache is a rotating buffer
        scatter_pos = (positions[-self.sliding_window:] % self.sliding_window)[None, :, None, None]
        scatter_pos = scatter_pos.repeat(bsz, 1, self.n_kv_heads, self.head_dim)
        self.cache_k[:bsz].scatter_(dim=1, index=scatter_pos, src=xk[:, -self.sliding_window:])
        self.cache_v[:bsz].scatter_(dim=1, index=scatter_pos, src=xv[:, -self.sliding_window:])


        if positions.shape[0] > 1:
            # prefill
            key, value = repeat_kv(xk, xv, self.repeats)
        else:
            cur_pos = positions[-1].item() + 1
            key, value = repeat_kv(self.cache_k[:bsz, :cur_pos, ...], self.cache_v[:bsz, :cur_pos, ...], self.repeats)

        query = xq.transpose(1, 2)
        key = key.transpose(1, 2)
        value = value.transpose(1, 2)
        # scores : [bsz, n_heads, seqlen | 1, seqlen]
        scores = torch.matmul(query, key.transpose(2, 3)) * self.scale

        if mask is not None:
            scores += mask[None, None, ...]

        scores = scores.float()
        scores = nn.functional.softmax(scores, dim=-1).type_as(query)
        output = torch.matmul(scores, value)  # (bs, n_local_heads, slen, head_dim)
        output = output.transpose(1, 2).contiguous().view(bsz, seqlen, -1)
        y = self.out_proj(output)
        # boundary: the buffer's first P + T positions, in the contract's (B, heads, positions, head_dim) layout
        return y, self.cache_k[:, :P + seqlen].transpose(1, 2), self.cache_v[:, :P + seqlen].transpose(1, 2)
