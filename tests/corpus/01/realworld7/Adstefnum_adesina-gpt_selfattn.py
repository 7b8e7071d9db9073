# expect: pass
# source: Adstefnum/adesina-gpt @69cb0121790c277cacc57503f8bdaec26028e6a0, attention.py (SelfAttention.__init__, SelfAttention.forward)
# changes: constructor parameters renamed input_dim/output_dim -> d_in/d_out (contract signature); the CausalAttention subclass of the same file left out (not part of exercise 1)
import torch

class SelfAttention(torch.nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = torch.nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = torch.nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = torch.nn.Linear(d_in, d_out, bias=qkv_bias)
        
    def forward(self, inputs):
        queries = self.W_query(inputs)
        keys = self.W_key(inputs)
        values = self.W_value(inputs)
        
        attention_scores = queries @ keys.transpose(-2,-1)
        attention_weights = torch.softmax(attention_scores / torch.sqrt(torch.tensor(keys.shape[-1])), dim=-1)
        context_vector = attention_weights @ values
        
        return context_vector
