# expect: pass
# held-out: correct; additive -inf mask, queries pre-scaled, hand-written stable softmax with an eps in the denominator.
import torch


def _softmax(x, eps=1e-12):
    x = x - x.amax(dim=-1, keepdim=True)
    e = torch.exp(x)
    return e / (e.sum(dim=-1, keepdim=True) + eps)


def scaled_dot_product_attention(query, key, value, mask=None):
    d_k = key.size(-1)
    query = query * (1.0 / d_k ** 0.5)
    scores = query @ key.transpose(-2, -1)
    if mask is not None:
        bias = torch.zeros_like(scores).masked_fill(mask, float("-inf"))
        scores = scores + bias
    weights = _softmax(scores)
    return weights @ value, weights
