# expect: pass
import torch


def gqa_decode_step(q, k_cache, v_cache):
    B, H, L, d = q.shape
    _, G, S, _ = k_cache.shape
    n = H // G
    k = k_cache[:, :, None].expand(B, G, n, S, d).reshape(B, H, S, d)
    v = v_cache[:, :, None].expand(B, G, n, S, d).reshape(B, H, S, d)
    s = torch.einsum("bhld,bhsd->bhls", q, k) * d ** -0.5
    s = s - s.amax(dim=-1, keepdim=True)
    e = s.exp()
    return (e / e.sum(dim=-1, keepdim=True)) @ v
