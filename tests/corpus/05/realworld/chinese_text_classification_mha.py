# expect: heads_split_wrong
# source: 649453932/Chinese-Text-Classification-Pytorch/models/Transformer.py, Multi_Head_Attention +
#   Scaled_Dot_Product_Attention (commit 0c4980d); reported in issues #10 and #53 of that repository
# license: MIT
# changes: Multi_Head_Attention(dim_model, num_head, dropout=0.0) -> MultiHeadAttention(hidden_size, num_heads)
#   (contract signature; dropout keeps its default 0.0); fc_Q/fc_K/fc_V/fc -> w_q/w_k/w_v/w_o (contract names);
#   the residual `out + x` and LayerNorm after the projection are left out (the contract's module returns the
#   output projection; the layer norm would also be an extra parameter). Scaled_Dot_Product_Attention inlined
#   as a helper method with its code unchanged.
# bug-lines: 42, 43, 44, 48
import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiHeadAttention(nn.Module):
    def __init__(self, hidden_size, num_heads):
        super(MultiHeadAttention, self).__init__()
        self.num_head = num_heads
        assert hidden_size % num_heads == 0
        self.dim_head = hidden_size // self.num_head
        self.w_q = nn.Linear(hidden_size, num_heads * self.dim_head)
        self.w_k = nn.Linear(hidden_size, num_heads * self.dim_head)
        self.w_v = nn.Linear(hidden_size, num_heads * self.dim_head)
        self.w_o = nn.Linear(num_heads * self.dim_head, hidden_size)
        self.dropout = nn.Dropout(0.0)

    @staticmethod
    def attention(Q, K, V, scale=None):
        attention = torch.matmul(Q, K.permute(0, 2, 1))
        if scale:
            attention = attention * scale
        attention = F.softmax(attention, dim=-1)
        context = torch.matmul(attention, V)
        return context

    def forward(self, x):
        batch_size = x.size(0)
        Q = self.w_q(x)
        K = self.w_k(x)
        V = self.w_v(x)
        Q = Q.view(batch_size * self.num_head, -1, self.dim_head)
        K = K.view(batch_size * self.num_head, -1, self.dim_head)
        V = V.view(batch_size * self.num_head, -1, self.dim_head)
        scale = K.size(-1) ** -0.5  # 缩放因子
        context = self.attention(Q, K, V, scale)

        context = context.view(batch_size, -1, self.dim_head * self.num_head)
        out = self.w_o(context)
        out = self.dropout(out)
        return out
