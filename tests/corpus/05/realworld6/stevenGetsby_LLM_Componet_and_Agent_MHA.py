# expect: runtime_error
# also: heads_merge_wrong
# bug-lines: 28, 29, 30, 40
# source: stevenGetsby/LLM_Componet_and_Agent @ef6c399f0018aa65fbfeef383c2d83f1e39cb6a5, 手撕代码/注意力机制/MHA.py (MutiHeadAttention)
# changes: class MutiHeadAttention renamed MultiHeadAttention; layers q_linear/k_linear/v_linear/o_linear renamed w_q/w_k/w_v/w_o; forward(hidden_state, attention_mask=None) -> forward(X) (the attention_mask argument and its masked_fill branch removed, hidden_state renamed X)
import torch
from torch import nn
class MultiHeadAttention(torch.nn.Module):
    def __init__(self, hidden_size, num_heads):
        super(MultiHeadAttention, self).__init__()
        self.num_heads = num_heads
        self.head_dim = hidden_size // num_heads
        
        ## 初始化Q、K、V投影矩阵
        self.w_q = nn.Linear(hidden_size, hidden_size)
        self.w_k = nn.Linear(hidden_size, hidden_size)
        self.w_v = nn.Linear(hidden_size, hidden_size)
        ## 输出线性层
        self.w_o = nn.Linear(hidden_size, hidden_size)
        
    def forward(self, X):
        batch_size = X.size()[0]
        
        query = self.w_q(X)
        key = self.w_k(X)
        value = self.w_v(X)
        
        query = self.split_head(query, batch_size)
        key = self.split_head(key, batch_size)
        value = self.split_head(value, batch_size)
        
        ## 计算注意力分数
        attention_scores = torch.matmul(query, key.transpose(-1, -2)) / torch.sqrt(torch.tensor(self.head_dim))
        
        ## 对注意力分数进行归一化
        attention_probs = torch.softmax(attention_scores, dim=-1)
        
        output = torch.matmul(attention_probs, value)
        ## 对注意力输出进行拼接
        output = output.transpose(-1, -2).contiguous().view(batch_size, -1, self.head_dim * self.num_heads)
        
        output = self.w_o(output)
        return output

    def split_head(self, x):
        batch_size = x.size()[0]
        return x.view(batch_size, -1, self.num_heads, self.head_dim).transpose(1,2)
