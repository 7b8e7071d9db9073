# expect: pass
import torch


def alibi_attention(query, key, value):
    B, H, T, d = query.shape
    i = torch.arange(T, device=query.device).view(T, 1)
    j = torch.arange(T, device=query.device).view(1, T)
    m = torch.tensor([2.0 ** (-8.0 * (h + 1) / H) for h in range(H)], dtype=query.dtype, device=query.device)
    bias = -(m.view(1, H, 1, 1) * (i - j).to(query.dtype))
    scores = (query * d ** -0.5) @ key.transpose(-2, -1) + bias
    scores = scores.masked_fill(j > i, float("-inf"))
    return scores.softmax(-1) @ value
