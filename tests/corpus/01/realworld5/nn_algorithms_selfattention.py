# expect: runtime_error
# bug-lines: 18, 24
# source: Bayesian4042/neural-network-algorithms @e51d64989b648e93a4ef824df7104d007c875c44, transformers/self-attention/main.py (SelfAttention)
# changes: constructor argument qvk_bias: bool = True renamed qkv_bias with default False (contract signature)
from torch import nn
import torch

class SelfAttention(nn.Module):
    def __init__(self, d_in: int, d_out: int, qkv_bias: bool = False):
        super().__init__()
        self.d_out = d_out
        
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
    
    def forward(self, x):
        b, num_tokens, d_in = x.shape
        
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)

        attn_scores = queries @ keys.transpose(1, 2)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
        context_vec = attn_weights @ values
        return context_vec
