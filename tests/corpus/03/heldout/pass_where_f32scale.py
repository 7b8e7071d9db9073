# expect: pass
# held-out: correct; bool buffer of allowed positions, torch.where to -inf, float32 scale constant, nn.Dropout on the weights.
import torch
import torch.nn as nn


class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.drop = nn.Dropout(dropout)
        allowed = torch.ones(context_length, context_length, dtype=torch.bool).tril()
        self.register_buffer("allowed", allowed)

    def forward(self, x):
        num_tokens = x.shape[1]
        queries = self.W_query(x)
        keys = self.W_key(x)
        values = self.W_value(x)
        scale = torch.sqrt(torch.tensor(self.d_out, dtype=torch.float32))
        scores = queries @ keys.transpose(1, 2) / scale
        neg_inf = torch.finfo(scores.dtype).min
        scores = torch.where(self.allowed[:num_tokens, :num_tokens], scores, neg_inf)
        weights = self.drop(torch.softmax(scores, dim=-1))
        return weights @ values
