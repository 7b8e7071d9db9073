# expect: heads_merge_wrong
# bug-lines: 32
import math

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, hidden_size, num_heads):
        super().__init__()
        self.hidden_size = hidden_size
        self.num_heads = num_heads
        self.head_dim = hidden_size // num_heads
        self.w_q = nn.Linear(hidden_size, hidden_size)
        self.w_k = nn.Linear(hidden_size, hidden_size)
        self.w_v = nn.Linear(hidden_size, hidden_size)
        self.w_o = nn.Linear(hidden_size, hidden_size)

    def forward(self, X):
        bsz, seq_len, _ = X.shape
        nh, hd = self.num_heads, self.head_dim
        Q = self.w_q(X).view(bsz, seq_len, nh, hd).permute(0, 2, 1, 3)
        K = self.w_k(X).view(bsz, seq_len, nh, hd).permute(0, 2, 1, 3)
        V = self.w_v(X).view(bsz, seq_len, nh, hd).permute(0, 2, 1, 3)

        attention_value = Q @ K.transpose(-1, -2)
        attention_weight = torch.softmax(attention_value / math.sqrt(hd), dim=-1)
        output = attention_weight @ V  # (bsz, nh, seq_len, hd)

        # reshape copies if needed, so no .contiguous() required
        output = output.reshape(bsz, seq_len, self.hidden_size)
        return self.w_o(output)
