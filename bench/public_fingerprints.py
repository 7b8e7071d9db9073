"""Derive grader/instructor/public_fingerprints.json: fingerprints (hashes only) of well-known public
implementations of the exercises, so `grade similarity` can name the source a submission copied.

    python bench/public_fingerprints.py SOURCES [--check]

SOURCES holds one folder per repository named owner+name: a git mirror (owner+name/repo, read at the
pinned commit) or a checkout (owner+name/<path>). Each entry below names the repository, the commit,
the file, the definitions taken from it, and the few edits the exercise's contract forces (its class
name and signature); nothing else of the code is changed. The kit stores only the resulting hashes,
the source's name, address and licence: never the code. A source with edits is stored twice, as
published and adapted, so a copy adapted another way still meets one of them. Re-run after changing normalize.py (its
VERSION is recorded; a mismatch disables the stored fingerprints). --check compares with the stored file.
"""
from __future__ import annotations

import argparse
import ast
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader.instructor import similarity  # noqa: E402
from grader.instructor.normalize import VERSION  # noqa: E402

RASBT = ("rasbt/LLMs-from-scratch", "28c65cdfbc3338e2e040016eea4b7fdf556e4d57", "Apache-2.0")
NANOGPT = ("karpathy/nanoGPT", "3adf61e154c3fe3fca428ad6bc3818b27a3b8291", "MIT")
ANNOTATED = ("harvardnlp/annotated-transformer", "debc9fd747bb2123160a98046ad1c2d4da44a567", "MIT")

SOURCES = [
    {"exercise": "self_attention", "name": "LLMs-from-scratch (rasbt), SelfAttention_v2", "repo": RASBT,
     "path": "pkg/llms_from_scratch/ch03.py", "take": ["SelfAttention_v2"],
     "edits": [("class SelfAttention_v2(", "class SelfAttention(")]},
    {"exercise": "scaled_dot_product", "name": "The Annotated Transformer (harvardnlp), attention()",
     "repo": ANNOTATED, "path": "the_annotated_transformer.py", "take": ["attention"],
     "edits": [("def attention(query, key, value, mask=None, dropout=None):",
                "def scaled_dot_product_attention(query, key, value, mask=None):"),
               ("mask == 0", "mask"),  # the contract's mask is True where blocked
               ("    if dropout is not None:\n        p_attn = dropout(p_attn)\n", "")]},
    {"exercise": "causal_attention", "name": "LLMs-from-scratch (rasbt), CausalAttention", "repo": RASBT,
     "path": "pkg/llms_from_scratch/ch03.py", "take": ["CausalAttention"], "edits": []},
    {"exercise": "multihead_attention", "name": "LLMs-from-scratch (rasbt), MultiHeadAttention", "repo": RASBT,
     "path": "pkg/llms_from_scratch/ch03.py", "take": ["MultiHeadAttention"], "edits": []},
    {"exercise": "gpt2_attention", "name": "nanoGPT (Karpathy), CausalSelfAttention", "repo": NANOGPT,
     "path": "model.py", "take": ["CausalSelfAttention"],
     "edits": [("def __init__(self, config):",
                "def __init__(self, n_embd, n_head, block_size, dropout=0.0, flash=False):"),
               ("config.n_embd", "n_embd"), ("config.n_head", "n_head"), ("config.block_size", "block_size"),
               ("config.dropout", "dropout"), (", bias=config.bias", ""),
               ("hasattr(torch.nn.functional, 'scaled_dot_product_attention')", "flash")]},
    {"exercise": "kv_cache", "name": "LLMs-from-scratch (rasbt), MultiHeadAttention with KV cache", "repo": RASBT,
     "path": "pkg/llms_from_scratch/kv_cache/gpt2.py", "take": ["MultiHeadAttention"],
     "edits": [("class MultiHeadAttention(", "class KVCacheAttention("),
               ("d_in, d_out, context_length, dropout, num_heads, qkv_bias=False",
                "d_in, d_out, context_length, num_heads, qkv_bias=False"),
               ("nn.Dropout(dropout)", "nn.Identity()"),
               ("def forward(self, x, use_cache=False, start_pos=0, cache=None):",
                "def forward(self, x, k_cache=None, v_cache=None):"),
               ("if use_cache:", "if True:"), ("if cache is not None:", "if k_cache is not None:"),
               ("cache[0]", "k_cache"), ("cache[1]", "v_cache"),
               ("return context_vec, next_cache", "return context_vec, keys, values")]},
    {"exercise": "gqa", "name": "LLMs-from-scratch (rasbt), GroupedQueryAttention (Llama 3)", "repo": RASBT,
     "path": "pkg/llms_from_scratch/llama3.py", "take": ["GroupedQueryAttention"],
     "edits": [("self, d_in, d_out, num_heads, num_kv_groups, dtype=None",
                "self, d_in, d_out, context_length, num_heads, num_kv_groups, qkv_bias=False"),
               (", dtype=dtype", ""), ("bias=False", "bias=qkv_bias"),
               ("def forward(self, x, mask, cos, sin):", "def forward(self, x):"),
               ("        keys = apply_rope(keys, cos, sin)\n        queries = apply_rope(queries, cos, sin)\n", ""),
               ("masked_fill(mask[", "masked_fill(self.mask[")]},
    {"exercise": "gqa", "name": "LLMs-from-scratch (rasbt), GroupedQueryAttention (ch04 GQA)", "repo": RASBT,
     "path": "ch04/04_gqa/gpt_with_kv_gqa.py", "take": ["GroupedQueryAttention"],
     "edits": [("self, d_in, d_out, dropout, num_heads, num_kv_groups, dtype=None, qkv_bias=False",
                "self, d_in, d_out, context_length, num_heads, num_kv_groups, qkv_bias=False"),
               (", dtype=dtype", ""), ("nn.Dropout(dropout)", "nn.Identity()")]},
    {"exercise": "rope", "name": "LLMs-from-scratch (rasbt), compute_rope_params and apply_rope", "repo": RASBT,
     "path": "pkg/llms_from_scratch/llama3.py", "take": ["compute_rope_params", "apply_rope"], "edits": []},
]


def read(root: Path, repo: str, commit: str, path: str) -> str:
    folder = root / repo.replace("/", "+")
    git_dir = folder / "repo"
    if git_dir.is_dir():
        return subprocess.run(["git", "--git-dir", str(git_dir), "show", f"{commit}:{path}"], check=True,
                              capture_output=True, text=True).stdout
    return (folder / path).read_text(encoding="utf-8")


def adapted(text: str, take: list[str], edits: list[tuple[str, str]]) -> str:
    """The named top-level definitions (imports kept), with the contract's edits, each of which must apply."""
    tree = ast.parse(text)
    kept = [ast.get_source_segment(text, n) for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    found = {n.name: ast.get_source_segment(text, n) for n in tree.body
             if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    missing = [name for name in take if name not in found]
    if missing:
        raise SystemExit(f"not found: {missing}")
    code = "\n".join(kept) + "\n\n" + "\n\n".join(found[name] for name in take) + "\n"
    for old, new in edits:
        if old not in code:
            raise SystemExit(f"edit does not apply: {old!r}")
        code = code.replace(old, new)
    ast.parse(code)
    return code


def build(root: Path) -> dict:
    out = []
    for s in SOURCES:
        repo, commit, licence = s["repo"]
        text = read(root, repo, commit, s["path"])
        variants = [("adapted to the contract", s["edits"])] + ([("as published", [])] if s["edits"] else [])
        for variant, edits in variants:
            prints = similarity.prints_of(adapted(text, s["take"], edits))
            out.append({"exercise": s["exercise"], "name": s["name"], "variant": variant, "licence": licence,
                        "commit": commit, "url": f"https://github.com/{repo}/blob/{commit}/{s['path']}",
                        "kgrams": sorted(f"{h:016x}" for h in prints.kgrams),
                        "statements": sorted(f"{h:016x}" for h in prints.statements)})
    return {"normal_form": VERSION, "k": similarity.K, "window": similarity.WINDOW, "sources": out}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sources", type=Path)
    parser.add_argument("--check", action="store_true", help="compare with the stored file instead of writing it")
    args = parser.parse_args()
    doc = build(args.sources)
    target = ROOT / "grader" / "instructor" / similarity.PUBLIC_DATA
    text = json.dumps(doc, indent=1) + "\n"
    if args.check:
        same = target.read_text(encoding="utf-8") == text
        print("the stored fingerprints are up to date" if same else "the stored fingerprints differ: re-run")
        raise SystemExit(0 if same else 1)
    target.write_text(text, encoding="utf-8")
    print(f"{target}: {len(doc['sources'])} sources")


if __name__ == "__main__":
    main()
