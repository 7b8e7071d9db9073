# expect: pass
# source: 28Aarya/no-gps @a1b1d268457d44031962a0b5a43b7c2a3084a3ff, vanilla_encoder/attention.py (MultiHeadAttention)
# changes: the stored file holds an unresolved merge conflict whose two sides are identical: one side kept, markers
#          dropped; constructor (d_model, num_heads, dropout=0.1) -> (hidden_size, num_heads) (contract signature), so
#          the attention dropout that had no rate left is built with nn.Dropout(0.0), i.e. the author's module as
#          constructed with dropout=0.0; projections W_q/W_k/W_v/W_o -> w_q/w_k/w_v/w_o (contract names)
import torch
import torch.nn as nn
import torch.nn.functional as F
import math

class MultiHeadAttention(nn.Module):
    def __init__(self, hidden_size: int, num_heads: int):
        super().__init__()
        assert hidden_size % num_heads == 0, "d_model must be divisible by num_heads"
        
        self.d_model = hidden_size
        self.num_heads = num_heads
        self.d_k = hidden_size // num_heads
        
        # Linear projections
        self.w_q = nn.Linear(hidden_size, hidden_size)
        self.w_k = nn.Linear(hidden_size, hidden_size)
        self.w_v = nn.Linear(hidden_size, hidden_size)
        self.w_o = nn.Linear(hidden_size, hidden_size)
        
        self.dropout = nn.Dropout(0.0)
        
    def forward(self, x: torch.Tensor, mask: torch.Tensor = None) -> torch.Tensor:
        # x: (batch, seq_len, d_model)
        batch_size, seq_len, _ = x.shape
        
        # Linear projections and reshape
        Q = self.w_q(x).view(batch_size, seq_len, self.num_heads, self.d_k).transpose(1, 2)
        K = self.w_k(x).view(batch_size, seq_len, self.num_heads, self.d_k).transpose(1, 2)
        V = self.w_v(x).view(batch_size, seq_len, self.num_heads, self.d_k).transpose(1, 2)
        # Q, K, V: (batch, num_heads, seq_len, d_k)
        
        # Attention scores
        scores = torch.matmul(Q, K.transpose(-2, -1)) / math.sqrt(self.d_k)
        # scores: (batch, num_heads, seq_len, seq_len)
        
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        
        # Attention weights
        attn_weights = F.softmax(scores, dim=-1)
        attn_weights = self.dropout(attn_weights)
        
        # Apply attention to values
        context = torch.matmul(attn_weights, V)
        # context: (batch, num_heads, seq_len, d_k)
        
        # Reshape and project output
        context = context.transpose(1, 2).contiguous().view(batch_size, seq_len, self.d_model)
        output = self.w_o(context)
        
        return output
