# expect: pass
# held-out: correct; Hugging Face style keep-mask (True = may attend), fill with finfo(dtype).min, then multiply weights by the keep mask.
import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    bsz, heads, q_len, head_dim = query.shape
    k_len = key.size(2)
    keep = torch.ones(bsz, 1, q_len, k_len, dtype=torch.bool, device=query.device)
    if key_padding_mask is not None:
        keep = keep & ~key_padding_mask.view(bsz, 1, 1, k_len)
    if causal:
        keep = keep & torch.ones(q_len, k_len, dtype=torch.bool, device=query.device).tril()
    attn = torch.matmul(query, key.transpose(2, 3)) * head_dim ** -0.5
    attn = attn.masked_fill(~keep, torch.finfo(attn.dtype).min)
    attn = attn.softmax(dim=-1)
    attn = attn * keep.to(attn.dtype)
    return torch.matmul(attn, value)
