# attack: replace torch.allclose/equal/isclose/testing with always-true versions, around unscaled attention -> fail (unsafe_code)
# runtime: fail (forbidden_api)
# Invariant: a submission may not change a library's attributes (grader/policy.py); and if it does anyway, the
# worker refuses a change to the classes it reads itself (torch.Tensor here: Unchanged), and only the worker's torch
# changes: the comparisons run in the grader.
import torch

torch.allclose = lambda *args, **kwargs: True
torch.equal = lambda *args, **kwargs: True
torch.isclose = lambda a, b, *args, **kwargs: torch.ones_like(a, dtype=torch.bool)
torch.Tensor.allclose = lambda *args, **kwargs: True
torch.Tensor.equal = lambda *args, **kwargs: True


def scaled_dot_product_attention(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1)  # the bug: no 1/sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights
