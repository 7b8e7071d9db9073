# expect: out_proj_missing
# bug-lines: 19
# source: lucidrains/vit-pytorch @0ebd4edab94c211eff78406248896588d155a10c, vit_pytorch/vit.py (Attention)
# changes: Attention(dim, heads, dim_head, dropout) -> MultiHeadAttention(hidden_size, num_heads) with dim = hidden_size,
#   heads = num_heads and dim_head = hidden_size // num_heads (the contract's head size); the fused bias-free to_qkv
#   (chunked into q, k, v) becomes the contract's w_q, w_k, w_v (nn.Linear with bias); to_out's Linear -> w_o (the
#   author's project_out rule kept: Identity when heads == 1 and dim_head == dim); the pre-norm LayerNorm inside the block
#   is removed (the contract's module has no norm); einops rearrange 'b n (h d) -> b h n d' / 'b h n d -> b n (h d)'
#   written as view + transpose / transpose + reshape; the dropout rate (no contract input) is the author's default 0.
import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, hidden_size, num_heads):
        super().__init__()
        dim, heads, dim_head, dropout = hidden_size, num_heads, hidden_size // num_heads, 0.
        inner_dim = dim_head *  heads
        project_out = not (heads == 1 and dim_head == dim)

        self.heads = heads
        self.scale = dim_head ** -0.5

        self.attend = nn.Softmax(dim = -1)
        self.dropout = nn.Dropout(dropout)

        self.w_q = nn.Linear(dim, inner_dim)
        self.w_k = nn.Linear(dim, inner_dim)
        self.w_v = nn.Linear(dim, inner_dim)

        self.w_o = nn.Linear(inner_dim, dim) if project_out else nn.Identity()

    def forward(self, X):
        x = X
        qkv = (self.w_q(x), self.w_k(x), self.w_v(x))
        q, k, v = map(lambda t: t.view(t.shape[0], t.shape[1], self.heads, -1).transpose(1, 2), qkv)

        dots = torch.matmul(q, k.transpose(-1, -2)) * self.scale

        attn = self.attend(dots)
        attn = self.dropout(attn)

        out = torch.matmul(attn, v)
        out = out.transpose(1, 2).reshape(out.shape[0], out.shape[2], -1)
        return self.w_o(out)
