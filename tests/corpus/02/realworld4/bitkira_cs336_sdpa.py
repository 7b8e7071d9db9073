# expect: runtime_error
# also: softmax_wrong_dim
# bug-lines: 15, 23
# source: bitkira/Stanford-CS336 @9aa7c5c007d9ec2a9bfb973377bb27ee59b03dbd, assignment1-basics-main/cs336_basics/ScaledDotProductAttention.py
#   (scaled_dot_product_attention) + @7ca9e3b23037baccb21e018138204bd5d28e305e, assignment1-basics-main/cs336_basics/Softmax.py (softmax)
# changes: the author's softmax helper is inlined above the function (it was imported from cs336_basics.Softmax; sys.path hack
#   dropped); einops rearrange(k, "... seq_len d_k -> ... d_k seq_len") written as k.transpose(-2, -1) (einops not allowed);
#   the contract's signature (mask=None default) and return value (output, weights): the weights are the author's own
#   softmax(out, i=-1), kept in a name. Mask convention: cs336's mask is True = may attend (the author writes
#   out[~mask] = -inf); the contract's mask is True = blocked, so it is inverted once at the boundary (keep = ~mask when given).
import torch


def softmax(x, i):
    return torch.exp(x - torch.max(x, dim=i, keepdim=True)[0]) / torch.sum(torch.exp(x - torch.max(x, dim=i, keepdim=True)[0]), dim=1, keepdim=True)


def scaled_dot_product_attention(query, key, value, mask=None):
    q, k, v = query, key, value
    mask = ~mask if mask is not None else None  # boundary: contract True = blocked -> author's True = keep
    k = k.transpose(-2, -1)
    out = torch.matmul(q, k) / torch.sqrt(torch.tensor(q.shape[-1], dtype=q.dtype))
    out[~mask] = float('-inf')
    weights = softmax(out, i=-1)
    return torch.matmul(weights, v), weights
