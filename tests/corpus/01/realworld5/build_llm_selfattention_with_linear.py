# expect: batched_transpose
# also: tensor_on_cpu
# bug-lines: 33, 34
# source: soumenkm/Build-LLM-from-scratch @852849f3f5b43dfedcf614c9229d79e5879df57e, attention/self_attention_with_weight.py (SelfAttentionWithLinear)
# changes: SelfAttentionWithLinear(in_embedding_dim, out_embedding_dim) renamed SelfAttention(d_in, d_out, qkv_bias=False) (the file's other, nn.Parameter-based SelfAttention class dropped); query_layer/key_layer/value_layer renamed W_query/W_key/W_value with bias=qkv_bias; forward returns contexts instead of (contexts, A); __main__ demo removed
import torch

class SelfAttention(torch.nn.Module):
    
    def __init__(self, d_in, d_out, qkv_bias=False):
        
        super(SelfAttention, self).__init__()
        self.d_in = d_in
        self.d_out = d_out
        self.W_query = torch.nn.Linear(in_features=self.d_in, 
                                       out_features=self.d_out, 
                                       bias=qkv_bias)
        self.W_key = torch.nn.Linear(in_features=self.d_in, 
                                     out_features=self.d_out, 
                                     bias=qkv_bias)
        self.W_value = torch.nn.Linear(in_features=self.d_in, 
                                       out_features=self.d_out, 
                                       bias=qkv_bias)

    def forward(self, inputs):
        
        assert inputs.shape[-1] == self.d_in, "inputs.shape must be (T, d_in)"
        
        Qm = self.W_query(inputs) # (T, d_out)
        Km = self.W_key(inputs) # (T, d_out)
        Vm = self.W_value(inputs) # (T, d_out)
        
        W = torch.matmul(Qm, Km.T) # (T, T)
        scaled_W = W/torch.sqrt(torch.tensor([self.d_out])) # (T, T)
        A = torch.nn.functional.softmax(scaled_W, dim=-1) # (T, T)
        
        contexts = torch.matmul(A, Vm) # (T, d_out)
        assert contexts.shape[-1] == self.d_out, "contexts.shape must be (T, d_out)"
        
        return contexts
