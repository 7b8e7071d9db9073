# expect: scale_not_sqrt
# also: masked_rows_nan_grad
# bug-lines: 10, 19
import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    B, H, L, d_k = query.shape
    S = key.shape[-2]
    scores = query @ key.transpose(-2, -1) / d_k

    keep = torch.ones(B, 1, L, S, dtype=torch.bool, device=query.device)
    if causal:
        keep = keep & torch.ones(L, S, dtype=torch.bool, device=query.device).tril()
    if key_padding_mask is not None:
        keep = keep & ~key_padding_mask[:, None, None, :]

    scores = scores.masked_fill(~keep, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    out = weights @ value
    row_ok = keep.any(dim=-1, keepdim=True)
    return torch.where(row_ok, out, torch.zeros_like(out))
