# expect: pass
# source: Naveenkumar3003/LLM_Assignment @c1dc9e997a3f7a01193898f6ba07eb5606bab921, transformer-encoder-autoencoding/attention.py (SelfAttention)
# changes: constructor SelfAttention(d_model) -> SelfAttention(d_in, d_out, qkv_bias=False); layers query/key/value renamed W_query/W_key/W_value as nn.Linear(d_in, d_out, bias=qkv_bias) (were nn.Linear(d_model, d_model) with bias); self.scale = d_model ** 0.5 -> d_out ** 0.5; forward returns output only (was (output, attention))
import torch
import torch.nn as nn

class SelfAttention(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.scale = d_out ** 0.5

    def forward(self, x):
        Q = self.W_query(x)
        K = self.W_key(x)
        V = self.W_value(x)

        scores = torch.matmul(Q, K.transpose(-2, -1)) / self.scale
        attention = torch.softmax(scores, dim=-1)
        output = torch.matmul(attention, V)

        return output
