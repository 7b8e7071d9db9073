# expect: pass
# source: snowch/snowch.github.io @49fc40a0a50e13b54df3dc18a9ac4aa015ed14ee, ai-eng/llmfs/L04_Multi_Head_Attention.md (MultiHeadAttention code cell)
# changes: constructor parameter d_model renamed hidden_size (attributes and layers follow: self.d_model kept as the attribute name); layers W_q/W_k/W_v/W_o renamed w_q/w_k/w_v/w_o; forward(q, k, v, mask=None) -> forward(X) with q, k, v all X (the mask argument and its masked_fill branch removed); the unused torch.nn.functional import dropped
import math
import torch
import torch.nn as nn

class MultiHeadAttention(nn.Module):
    def __init__(self, hidden_size, num_heads):
        super().__init__()
        assert hidden_size % num_heads == 0, "d_model must be divisible by num_heads"
        
        self.d_model = hidden_size
        self.num_heads = num_heads
        self.d_k = hidden_size // num_heads
        
        # We define 4 linear layers: Q, K, V projections and the final Output
        self.w_q = nn.Linear(hidden_size, hidden_size)
        self.w_k = nn.Linear(hidden_size, hidden_size)
        self.w_v = nn.Linear(hidden_size, hidden_size)
        self.w_o = nn.Linear(hidden_size, hidden_size)
        
    def forward(self, X):
        batch_size = X.size(0)
        
        # 1. Project and Split
        # We transform [Batch, Seq, Model] -> [Batch, Seq, Heads, d_k]
        # Then we transpose to [Batch, Heads, Seq, d_k] for matrix multiplication
        Q = self.w_q(X).view(batch_size, -1, self.num_heads, self.d_k).transpose(1, 2)
        K = self.w_k(X).view(batch_size, -1, self.num_heads, self.d_k).transpose(1, 2)
        V = self.w_v(X).view(batch_size, -1, self.num_heads, self.d_k).transpose(1, 2)
        
        # 2. Scaled Dot-Product Attention (re-using logic from L03)
        # Scores shape: [Batch, Heads, Seq, Seq]
        scores = torch.matmul(Q, K.transpose(-2, -1)) / math.sqrt(self.d_k)
        
        attn_weights = torch.softmax(scores, dim=-1)
        
        # Apply weights to Values
        # Shape: [Batch, Heads, Seq, d_k]
        attn_output = torch.matmul(attn_weights, V)
        
        # 3. Concatenate
        # Transpose back: [Batch, Seq, Heads, d_k]
        # Flatten: [Batch, Seq, d_model]
        attn_output = attn_output.transpose(1, 2)
        attn_output = attn_output.contiguous()
        attn_output = attn_output.view(batch_size, -1, self.d_model)
        
        # 4. Final Projection (The "Mix")
        return self.w_o(attn_output)
