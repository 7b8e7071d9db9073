# expect: runtime_error
# also: mask_missing
# bug-lines: 16, 43, 50
# source: zkqiu/RUN @686e542cdd6e865e4a63ab3f03a1e6a30b91af08, Structure/GQA.py (GroupQueryAttention)
# changes: GroupQueryAttention(hidden_size, num_heads, group_num) -> GroupedQueryAttention(d_in, d_out, context_length,
#   num_heads, num_kv_groups, qkv_bias=False): hidden_size -> d_out for the head size and the outputs, inputs of width
#   d_in, group_num = num_kv_groups; q_linear/k_linear/v_linear/o_linear -> W_query/W_key/W_value/out_proj (the author has
#   no bias option: the projections take bias=qkv_bias, out_proj keeps its bias); the optional additive attention_mask
#   argument (no contract input) is removed with its branch. The author's super(MutiQueryAttention, self) call (a class
#   name that does not exist in the file) is kept as published. No causal mask: the author has none.
## 分组注意力查询
import torch
from torch import nn
class GroupedQueryAttention(torch.nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, num_kv_groups, qkv_bias=False):
        super(MutiQueryAttention, self).__init__()
        hidden_size, group_num = d_out, num_kv_groups
        self.num_heads = num_heads
        self.head_dim = hidden_size // num_heads
        self.group_num = group_num
        
        ## 初始化Q、K、V投影矩阵
        self.W_query = nn.Linear(d_in, hidden_size, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, self.group_num * self.head_dim, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, self.group_num * self.head_dim, bias=qkv_bias)
        
        ## 输出线性层
        self.out_proj = nn.Linear(hidden_size, hidden_size)
        
    def forward(self, x):
        hidden_state = x
        batch_size = hidden_state.size()[0]
        
        query = self.W_query(hidden_state)
        key = self.W_key(hidden_state)
        value = self.W_value(hidden_state)
        
        query = self.split_head(query)
        key = self.split_head(key, self.group_num)
        value = self.split_head(value, self.group_num)
        
        ## 计算注意力分数
        attention_scores = torch.matmul(query, key.transpose(-1, -2)) / torch.sqrt(torch.tensor(self.head_dim))
        
        ## 对注意力分数进行归一化
        attention_probs = torch.softmax(attention_scores, dim=-1)
        
        output = torch.matmul(attention_probs, value)
        
        output = output.transpose(-1, -2).contiguous().view(batch_size, -1, self.head_dim * self.num_heads)
        
        output = self.out_proj(output)
        
        return output
        
    def split_head(self, x, group_num=None):
        
        batch_size,seq_len = x.size()[:2]
        
        if group_num == None:
            return x.view(batch_size, -1, self.num_heads, self.head_dim).transpose(1,2)
        else:
            x = x.view(batch_size, -1, group_num, self.head_dim).transpose(1,2)
            x = x[:, :, None, :, :].expand(batch_size, group_num, self.num_heads // group_num, seq_len, self.head_dim).reshape(batch_size, self.num_heads // group_num * group_num, seq_len, self.head_dim)
            return x
