# expect: pass
# source: chwla/Machine-Learning @6c65241eb8c8bfd785aa46bb6155fd96b796fde3, llm/ch3/3_5.py (MultiHeadAttention)
# changes: none
import torch
import torch.nn as nn

class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
        
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        
        # causal mask (upper triangular)
        self.register_buffer(
            "mask",
            torch.triu(torch.ones(context_length, context_length), diagonal=1)
        )
    
    def forward(self, x):
        b, num_tokens, d_in = x.shape
        
        # projections
        queries = self.W_query(x)   # (B, T, d_out)
        keys = self.W_key(x)
        values = self.W_value(x)
        
        # reshape into heads
        queries = queries.view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2) # (B, H, T, Hd)
        keys = keys.view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)       # (B, H, T, Hd)
        values = values.view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)   # (B, H, T, Hd)
        
        # attention scores
        attn_scores = (queries @ keys.transpose(-2, -1)) / (self.head_dim ** 0.5)  # (B, H, T, T)
        
        # apply causal mask
        mask_bool = self.mask.bool()[:num_tokens, :num_tokens]
        attn_scores.masked_fill_(mask_bool, float("-inf"))
        
        # attention weights
        attn_weights = torch.softmax(attn_scores, dim=-1)  # (B, H, T, T)
        attn_weights = self.dropout(attn_weights)
        
        # weighted sum of values
        context = attn_weights @ values   # (B, H, T, Hd)
        
        # combine heads
        context = context.transpose(1, 2).contiguous().view(b, num_tokens, self.d_out)  # (B, T, d_out)
        
        # final projection
        return self.out_proj(context)
