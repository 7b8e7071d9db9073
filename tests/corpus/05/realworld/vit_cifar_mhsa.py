# expect: scale_wrong_dim
# source: omihub777/ViT-CIFAR/layers.py, class MultiHeadSelfAttention (commit ab9043e); reported in
#   https://github.com/omihub777/ViT-CIFAR/pull/11 ("divides by sqrt(d_model) instead of sqrt(d_k)")
# license: MIT
# changes: MultiHeadSelfAttention(feats, head=8, dropout=0.) -> MultiHeadAttention(hidden_size, num_heads)
#   (contract signature; feats -> hidden_size, head -> num_heads, the dropout argument is not in the contract
#   so its default 0. is kept fixed); q/k/v/o -> w_q/w_k/w_v/w_o (contract names). Computation as written.
# bug-lines: 19, 34
import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiHeadAttention(nn.Module):
    def __init__(self, hidden_size, num_heads):
        super(MultiHeadAttention, self).__init__()
        self.head = num_heads
        self.feats = hidden_size
        self.sqrt_d = self.feats**0.5

        self.w_q = nn.Linear(hidden_size, hidden_size)
        self.w_k = nn.Linear(hidden_size, hidden_size)
        self.w_v = nn.Linear(hidden_size, hidden_size)

        self.w_o = nn.Linear(hidden_size, hidden_size)
        self.dropout = nn.Dropout(0.)

    def forward(self, x):
        b, n, f = x.size()
        q = self.w_q(x).view(b, n, self.head, self.feats//self.head).transpose(1,2)
        k = self.w_k(x).view(b, n, self.head, self.feats//self.head).transpose(1,2)
        v = self.w_v(x).view(b, n, self.head, self.feats//self.head).transpose(1,2)

        score = F.softmax(torch.einsum("bhif, bhjf->bhij", q, k)/self.sqrt_d, dim=-1) #(b,h,n,n)
        attn = torch.einsum("bhij, bhjf->bihf", score, v) #(b,n,h,f//h)
        o = self.dropout(self.w_o(attn.flatten(2)))
        return o
