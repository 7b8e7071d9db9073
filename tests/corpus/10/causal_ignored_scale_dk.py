# expect: scale_not_sqrt
# also: mask_missing
# bug-lines: 7, 19
import torch


def tiled_attention(query, key, value, causal=False, block_size=64):  # causal is accepted, never read
    d_k = query.shape[-1]
    S = key.shape[-2]
    out = torch.empty(*query.shape[:-1], value.shape[-1], dtype=query.dtype, device=query.device)
    for start in range(0, query.shape[-2], block_size):
        qb = query[..., start : start + block_size, :]
        run_max = qb.new_full((*qb.shape[:-1], 1), float("-inf"))
        denom = qb.new_zeros(*qb.shape[:-1], 1)
        numer = qb.new_zeros(*qb.shape[:-1], value.shape[-1])
        for kstart in range(0, S, block_size):
            kb = key[..., kstart : kstart + block_size, :]
            vb = value[..., kstart : kstart + block_size, :]
            s = (qb @ kb.transpose(-1, -2)) / d_k  # divided by d_k, not its square root
            new_max = torch.maximum(run_max, s.max(dim=-1, keepdim=True).values)
            w = (s - new_max).exp()
            shrink = (run_max - new_max).exp()
            denom = denom * shrink + w.sum(-1, keepdim=True)
            numer = numer * shrink + w @ vb
            run_max = new_max
        out[..., start : start + block_size, :] = numer / denom
    return out
