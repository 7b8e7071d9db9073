"""Tests for the Q&A explainers (grader.explain): every topic, language and format, live numbers, locale, HTML."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from html.parser import HTMLParser
from pathlib import Path

import pytest
import torch

from grader.catalog import kit_dir, load_catalog
from grader.explain import FORMATS, LANGS, TOPICS, ExplainError, list_topics, render_explainer
from grader.explain.heatmap import width
from grader.explain.textfmt import html_subscripts

CONTENT = kit_dir("templates") / "explain"
CJK = re.compile(r"[\u4e00-\u9fff]")
EMBEDDINGS = [[0.43, 0.15, 0.89], [0.55, 0.87, 0.66], [0.57, 0.85, 0.64],
              [0.22, 0.58, 0.33], [0.77, 0.25, 0.10], [0.05, 0.80, 0.55]]


def content(lang: str, name: str) -> dict:
    return tomllib.loads((CONTENT / lang / f"{name}.toml").read_text(encoding="utf-8"))


def cells(line: str) -> list[str]:
    """Cells of a Markdown table row, honouring escaped pipes, with backslash escapes removed."""
    inner = line.strip()[1:-1]
    return [re.sub(r"\\(.)", r"\1", c.strip()) for c in re.split(r"(?<!\\)\|", inner)]


def md_tables(text: str) -> list[tuple[str, list[str], list[list[str]]]]:
    """(caption line before the table, header, body rows) for every table in a Markdown page."""
    lines, tables, i = text.splitlines(), [], 0
    while i < len(lines):
        if lines[i].startswith("|"):
            start = i
            while i < len(lines) and lines[i].startswith("|"):
                i += 1
            block = lines[start:i]
            caption = next((l for l in reversed(lines[:start]) if l.strip()), "")
            tables.append((caption, block, [cells(r) for r in block]))
        i += 1
    return [(cap, rows[0], rows[2:]) for cap, block, rows in tables]


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("fmt", FORMATS)
def test_every_topic_renders(lang, fmt):
    for topic in TOPICS:
        text = render_explainer(topic, lang=lang, fmt=fmt)
        title = content(lang, topic)["title"]
        assert title.split()[0] in text, (topic, lang, fmt)
        assert "{{" not in text and "{%" not in text, (topic, lang, fmt)


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_exercise_renders_its_topics_in_order(fmt):
    for ex in load_catalog().exercises:
        for lang in LANGS:
            keys = {str(ex.number), ex.slug} - set(TOPICS)
            pages = {render_explainer(key, lang=lang, fmt=fmt) for key in keys}
            assert len(pages) == 1, (ex.number, lang, fmt)
            text = pages.pop()
            shown = (lambda t: str(html_subscripts(t))) if fmt == "html" else (lambda t: t)  # √d<sub>k</sub>
            where = [text.index(shown(content(lang, t)["title"])) for t in ex.topics]
            assert where == sorted(where), (ex.number, lang, fmt)
            assert f" {ex.number}" in text[: text.index(shown(content(lang, ex.topics[0])["title"]))]


def test_topic_id_wins_over_exercise_slug():
    topic = render_explainer("self_attention", lang="en", fmt="md")
    exercise = render_explainer("1", lang="en", fmt="md")
    assert topic.count("\n## ") == 0 and exercise.count("\n## ") == len(load_catalog().get("1").topics)


def test_six_token_numbers_match_torch():
    x = torch.tensor(EMBEDDINGS)
    scores = x @ x.T
    weights = torch.softmax(scores, dim=-1)
    expected = {"x @ x.T**": scores, "softmax(x @ x.T, dim=-1)": weights, "weights @ x": weights @ x}
    tables = md_tables(render_explainer("qkv", lang="en", fmt="md"))
    for marker, want in expected.items():
        (caption, head, rows), = [t for t in tables if t[0].rstrip("*").endswith(marker.rstrip("*"))]
        got = torch.tensor([[float(c) for c in row[1:]] for row in rows])
        assert got.shape == want.shape == (6, want.shape[1])
        assert torch.allclose(got, want, atol=5e-5), caption
    assert [row[0] for row in rows] == ["Your", "journey", "starts", "with", "one", "step"]


def test_causal_weights_match_torch():
    x = torch.tensor(EMBEDDINGS)
    mask = torch.triu(torch.ones(6, 6, dtype=torch.bool), diagonal=1)
    want = (x @ x.T / 3 ** 0.5).masked_fill(mask, float("-inf")).softmax(-1)
    (_, _, rows), = [t for t in md_tables(render_explainer("causal_mask", lang="zh", fmt="md")) if "因果权重" in t[0]]
    got = torch.tensor([[float(c) for c in row[1:]] for row in rows])
    assert torch.allclose(got, want, atol=5e-5)


def test_scaling_table_shows_variance_growing_with_d_k_and_staying_one_when_scaled():
    (_, head, rows), = md_tables(render_explainer("scaling", lang="en", fmt="md"))[:1]
    assert head[0] == "d_k" and len(rows) >= 6
    for row in rows:
        d_k, var_raw, var_scaled = int(row[0]), float(row[1]), float(row[2])
        assert abs(var_raw / d_k - 1) < 0.15 and abs(var_scaled - 1) < 0.15
    assert float(rows[-1][3]) > float(rows[0][3]) and float(rows[-1][5]) < float(rows[0][5])


def test_kv_cache_sizes_follow_the_formula():
    text = render_explainer("kv_cache", lang="en", fmt="md")
    (_, head, rows), = [t for t in md_tables(text) if t[1][0] == "model"]
    for name, layers, kv, head_dim, tokens, dtype, per_token, total in rows:
        size = torch.finfo(getattr(torch, dtype)).bits // 8
        n = 2 * int(layers) * int(kv) * int(head_dim) * int(tokens.replace(",", "")) * size
        value, unit = total.split()
        assert abs(float(value) * {"KiB": 2**10, "MiB": 2**20, "GiB": 2**30}[unit] - n) / n < 0.01, total
    assert any(r[2] == "1" for r in rows) and any(r[2] == "8" for r in rows)


def test_fp16_and_masked_row_facts_are_computed():
    text = render_explainer("fp16_fill", lang="en", fmt="md")
    rows = {r[0].strip("`"): r[1:] for _, _, rs in md_tables(text) for r in rs}
    assert rows["torch.tensor(-1e9).to(dtype)"][0] == str(torch.tensor(-1e9).to(torch.float16).item())
    assert rows["torch.finfo(dtype).min"][0] == f"{torch.finfo(torch.float16).min:.6g}"
    assert rows["x.masked_fill(m, -1e9)"][0] == "RuntimeError"
    text = render_explainer("masked_rows", lang="en", fmt="md")
    rows = {r[0].strip("`"): r[1] for _, _, rs in md_tables(text) for r in rs}
    assert rows["[-inf, -inf, -inf, -inf]"] == "[nan, nan, nan, nan]"
    assert torch.isnan(torch.full((4,), float("-inf")).softmax(-1)).all()


@pytest.mark.parametrize("lang", LANGS)
def test_markdown_tables_are_well_formed(lang):
    for topic in TOPICS:
        lines = render_explainer(topic, lang=lang, fmt="md").splitlines()
        for i, line in enumerate(lines):
            if line.startswith("|") and not lines[i - 1].startswith("|"):
                block = [l for l in lines[i:] if l.startswith("|")]
                block = block[: next((k for k, l in enumerate(lines[i:]) if not l.startswith("|")), len(block))]
                assert len(block) >= 3, (topic, line)
                assert re.fullmatch(r"\|( :?-{3,}:? \|)+", block[1]), (topic, block[1])
                counts = {len(cells(row)) for row in block}
                assert len(counts) == 1, (topic, counts, block)
        fences = [l for l in lines if l.startswith("```")]
        assert len(fences) % 2 == 0, topic


def test_content_keys_match_between_languages():
    for name in ("_ui", *TOPICS):
        en, zh = content("en", name), content("zh", name)
        assert set(en) - {"exercise_titles"} == set(zh) - {"exercise_titles"}, name
        for a, b in zip(en.get("body", []), zh.get("body", []), strict=True):
            assert set(a) == set(b), (name, a, b)
            for key in ("head", "titles", "list"):
                assert len(a.get(key, [])) == len(b.get(key, [])), (name, key)
    titles = content("zh", "_ui")["exercise_titles"]
    assert all(ex.slug in titles for ex in load_catalog().exercises)


def test_chinese_output_is_chinese_and_english_is_not():
    for topic in TOPICS:
        zh = render_explainer(topic, lang="zh", fmt="md")
        en = render_explainer(topic, lang="en", fmt="md")
        assert len(CJK.findall(zh)) > 100, topic
        assert not CJK.search(en), topic
    assert all(CJK.search(title) for _, title in list_topics("zh"))
    assert [t for t, _ in list_topics("en")] == list(TOPICS)


def test_locale_picks_the_language(monkeypatch):
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(var, raising=False)
    assert not CJK.search(render_explainer("scaling", fmt="md"))
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    assert render_explainer("scaling", fmt="md") == render_explainer("scaling", lang="zh", fmt="md")
    assert CJK.search(list_topics()[0][1])
    monkeypatch.setenv("LC_ALL", "C")
    assert not CJK.search(render_explainer("scaling", fmt="md"))
    monkeypatch.delenv("LC_ALL")
    monkeypatch.setenv("LANG", "en_US.UTF-8")
    assert not CJK.search(render_explainer("scaling", fmt="md"))


@pytest.mark.parametrize("target, kwargs", [
    ("no_such_topic", {}), ("99", {}), ("qkv", {"lang": "fr"}), ("qkv", {"fmt": "pdf"}),
])
def test_unknown_input_raises_explain_error(target, kwargs):
    with pytest.raises(ExplainError) as err:
        render_explainer(target, **kwargs)
    assert "\n" not in str(err.value) and len(str(err.value)) > 20


def test_terminal_output_fits_and_colour_is_optional():
    for lang in LANGS:
        text = render_explainer("3", lang=lang, fmt="term")
        assert "\x1b" not in text
        for line in text.splitlines():
            if not line.startswith("    "):
                assert width(line) <= 78, line
    coloured = render_explainer("causal_mask", lang="en", fmt="term", color=True)
    assert "\x1b[" in coloured and "██" in coloured and "··" in coloured


class TagBalance(HTMLParser):
    VOID = {"meta", "br", "rect", "img", "hr", "link", "input"}

    def __init__(self):
        super().__init__()
        self.stack, self.errors, self.tags = [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        if not self.stack or self.stack.pop() != tag:
            self.errors.append(tag)


@pytest.mark.parametrize("lang", LANGS)
def test_html_is_self_contained_and_balanced(lang):
    for target in (*TOPICS, "4"):
        page = render_explainer(target, lang=lang, fmt="html")
        assert not re.search(r"https?://|src=|<link|@import|url\(", page), target
        parser = TagBalance()
        parser.feed(page)
        assert not parser.errors and not parser.stack, (target, parser.errors, parser.stack)
    page = render_explainer("multi_head", lang=lang, fmt="html")
    assert page.count("<svg") == 4 and "<rect" in page and "journey" in page


@pytest.mark.parametrize("target, lang", [("scaling", "en"), ("multi_head", "zh")])
def test_html_renders_in_headless_chromium(tmp_path, target, lang):
    chromium = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
    if not chromium:
        pytest.skip("chromium not installed: apt-get install chromium")
    page = tmp_path / "page.html"
    page.write_text(render_explainer(target, lang=lang, fmt="html"), encoding="utf-8")
    shot = tmp_path / "shot.png"
    subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={shot}", "--window-size=1200,2400",
         page.as_uri()],
        capture_output=True, timeout=90, check=False,
    )
    assert shot.exists(), "chromium wrote no screenshot"
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 30_000


def test_explainers_name_their_sources_and_say_why_a_discrepancy_matters():
    from grader.explain import render_explainer

    for lang, vague, why in (("en", "one of the source tutorials", "Why it matters to you"), ("zh", "一篇源教程", "这对你的意义")):
        pages = {t: render_explainer(t, lang=lang, fmt="md") for t in ("qkv", "self_attention", "view_transpose")}
        assert not [t for t, page in pages.items() if vague in page.lower()], lang
        assert "Single Head Self-Attention" in pages["self_attention"]
        assert "Attention" in pages["view_transpose"] and why in pages["view_transpose"]
        assert "Your journey starts with one step" in pages["qkv"] and why in pages["qkv"]


# -- the terminal: a pager that just works, inline code without backticks (issue 22) --------------------------
def _explain_in_a_pty(tmp_path, *args, env: dict):
    from tests.conftest import COMMAND
    from tests.test_watch import Terminal

    keep = {k: v for k, v in os.environ.items() if k not in ("PAGER", "LESS", "LV", "NO_COLOR", "LC_ALL", "LANG")}
    return Terminal(["env", "-i", *(f"{k}={v}" for k, v in {**keep, **env}.items()), *COMMAND, "explain", *args],
                    cwd=tmp_path)


@pytest.mark.skipif(not shutil.which("less"), reason="less not installed")
def test_the_default_pager_shows_colour_not_escape_codes(tmp_path):
    """PAGER and LESS unset: less runs with LESS=FRX as git does, so the colours render instead of ESC[1;34m."""
    term = _explain_in_a_pty(tmp_path, "2", env={})
    try:
        term.wait_for("Why divide by", timeout=60)
        term.wait_for("\n:", timeout=20)  # less's prompt: the first screen is shown
        term.press("q")
        assert term.exit_code(20) == 0
    finally:
        term.close()
    assert "ESC[" not in term.text and "\x1b[1;34m" in term.raw  # the heading's colour reached the terminal
    assert "`" not in term.text  # inline code shows no backticks


@pytest.mark.skipif(not shutil.which("less"), reason="less not installed")
def test_a_users_less_and_pager_are_kept(tmp_path):
    term = _explain_in_a_pty(tmp_path, "2", env={"LESS": "-i"})  # no -R: then no colour is sent at all
    try:
        term.wait_for("Why divide by", timeout=60)
        term.press("q")
        assert term.exit_code(20) == 0
    finally:
        term.close()
    assert "ESC[" not in term.text and "\x1b[1;34m" not in term.raw and "\x1b[36m" not in term.raw
    for env, want in (({}, "LESS=[FRX]"), ({"LESS": "-iR"}, "LESS=[-iR]")):
        term = _explain_in_a_pty(tmp_path, "scaling", env={"PAGER": "sh -c 'echo LESS=[$LESS]; cat'", **env})
        try:
            term.wait_for(want, timeout=60)
            term.wait_for("Why divide by")
            assert term.exit_code(20) == 0
        finally:
            term.close()
        assert "\x1b[1;34m" in term.raw  # a pager other than less gets the colours


def test_inline_code_has_no_backticks_and_never_breaks_across_lines():
    from grader.explain.render import topic_view
    from grader.explain.textfmt import inline

    for lang in LANGS:
        for topic in TOPICS:
            view = topic_view(topic, lang, False)
            texts = [view["question"]] + [b["text"] for b in view["blocks"] if b["kind"] in ("p", "note")]
            texts += [e for b in view["blocks"] if b["kind"] == "list" for e in b["entries"]]
            spans = {part for s in texts for kind, part in inline(s) if kind == "code" and " " in part}
            for columns in (50, 78):
                page = render_explainer(topic, lang=lang, fmt="term", width=columns)
                assert "`" not in page, (topic, lang)
                for span in spans:
                    if width(span) <= columns - 6:  # wider than a line: it has to break somewhere
                        assert span in page.splitlines() or any(span in line for line in page.splitlines()), \
                            (topic, lang, columns, span)
            coloured = render_explainer(topic, lang=lang, fmt="term", color=True)
            assert "`" not in coloured and "\ue000" not in coloured


def test_html_headings_write_d_k_with_a_subscript():
    for lang in LANGS:
        page = render_explainer("2", lang=lang, fmt="html")
        headings = re.findall(r"<(h1|h2|title)>(.*?)</\1>", page) + re.findall(r"<li><a [^>]*>(.*?)</a>", page)
        text = " ".join(h[1] if isinstance(h, tuple) else h for h in headings)
        assert "d_k" not in text and "√d<sub>k</sub>" in text and "√dₖ" in page.split("</title>")[0], lang


# -- facts: what the explainers, briefs and messages claim is what the kit computes (issue 22) --------------------
def test_rope_rotation_identity_is_stated_as_computed():
    """R(b)ᵀR(a) = R(a − b), numerically; the explainer says exactly that, and its formula for the score holds
    with the kit's own rotation."""
    from grader.explain.live_rope import rotate

    def R(t: float) -> torch.Tensor:
        t = torch.tensor(t, dtype=torch.float64)
        return torch.stack([torch.stack([t.cos(), -t.sin()]), torch.stack([t.sin(), t.cos()])])

    for a, b in ((0.3, 1.1), (2.0, -0.7), (5.5, 0.25)):
        assert torch.allclose(R(b).T @ R(a), R(a - b), atol=1e-12)
        assert not torch.allclose(R(b).T @ R(a), R(b - a), atol=1e-3)  # what the explainer used to say
    for lang in LANGS:
        page = render_explainer("rope", lang=lang, fmt="md")
        assert "R(b)ᵀR(a) = R(a − b)" in page and "a − b" in page and "b − a" not in page, lang
        assert "q·R(n − m)·k" in page, lang
    g = torch.Generator().manual_seed(1)
    q, k = torch.randn(8, generator=g, dtype=torch.float64), torch.randn(8, generator=g, dtype=torch.float64)
    for m, n in ((0, 0), (3, 0), (0, 3), (1000, 1003), (17, 5)):
        score = rotate(q[None], torch.tensor([m]))[0] @ rotate(k[None], torch.tensor([n]))[0]
        assert torch.allclose(score, q @ rotate(k[None], torch.tensor([n - m]))[0], atol=1e-9), (m, n)
    from grader.explain.live_rope import rope

    rows = rope()["tables"]["offsets"]["rows"]
    by_offset: dict[int, set[str]] = {}
    for _, _, offset, value in rows:
        by_offset.setdefault(offset, set()).add(value)
    assert all(len(values) == 1 for values in by_offset.values()) and len(by_offset) > 1  # the caption's claim


def test_memory_figures_are_computed_from_the_shapes_they_name():
    """Exercise 10's brief, skeleton, contract and README row name the long case the check really runs, with the
    size of its score matrix; the online-softmax explainer's sizes follow from its own heads and tokens."""
    from grader.checks.ex10_tiled_attention import LONG, size_text
    from grader.explain.live_online import online_softmax

    B, H, T = LONG["B"], LONG["H"], LONG["T"]
    size = size_text(B * H * T * T * 4)
    assert size == "256 MiB" and size_text(2**30) == "1 GiB" and size_text(2**29) == "512 MiB"
    ex = load_catalog().get(10)
    from tests.conftest import ROOT

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    row = next(line for line in readme.splitlines() if line.startswith("| 10 |"))
    for text in (ex.brief, row):
        assert f"{B} × {H} heads × {T} tokens" in text and size in text and "GiB" not in text, text
    assert f"{B} x {H} heads x {T} tokens" in ex.contract and size in ex.contract
    skeleton = ex.skeleton_path.read_text(encoding="utf-8")
    assert f"for {B * H} heads and {T} tokens" in skeleton and f"{B} x {H} heads x {T} tokens" in skeleton
    assert size in skeleton and "4096" not in skeleton and "GiB" not in skeleton
    v = online_softmax()["values"]
    assert v["full_bytes"] == size_text(v["heads"] * v["T"] ** 2 * 4) and v["ratio"] == v["T"] ** 2 // v["blk"] ** 2
    assert v["block_bytes"] == size_text(v["heads"] * v["blk"] ** 2 * 4)
    for lang in LANGS:
        page = render_explainer("online_softmax", lang=lang, fmt="md")
        assert v["full_bytes"] in page and v["block_bytes"] in page and str(v["ratio"]) in page, lang


def test_exercise_10_out_of_memory_message_says_mib(tmp_path):
    """A submission that keeps float64 buffers the size of the whole score matrix runs out of the worker's memory:
    the message gives the matrix's real size, 256 MiB, never "0 GiB". (Scores computed from the queries and keys
    are stopped earlier, by the data flow: these buffers hold none.)"""
    from tests.conftest import grade_json

    path = tmp_path / "10_tiled_attention.py"
    path.write_text(
        "import math\n\nimport torch\n\n\n"
        "def tiled_attention(query, key, value, causal=False, block_size=64):\n"
        "    shape = tuple(query.shape[:-1]) + (key.size(-2),)\n"
        "    a = torch.ones(shape, dtype=torch.float64)\n"
        "    b = a * 2\n"
        "    c = a + b\n"
        "    d = c * b\n"
        "    return (query + d.sum() * 0).to(query.dtype)\n", encoding="utf-8")
    code, doc = grade_json("exercise", "10", path, here=True)
    long = next(t for t in doc["tests"] if "long_sequence" in t["name"])
    assert code == 1 and long["code"] == "out_of_memory", long
    assert "256 MiB" in long["message"] and "0 GiB" not in long["message"], long["message"]


def test_numbers_kept_in_the_cache_render_the_same_page_as_numbers_just_computed(tmp_path, monkeypatch):
    from grader.explain import render, topics

    monkeypatch.setenv("ATTENTION_KIT_CACHE_DIR", str(tmp_path))
    for topic in TOPICS:
        topics.live_data(topic)  # computed once and kept
    assert topics.cache_file().parent == tmp_path
    kept = topics.cache_file().read_text(encoding="utf-8")
    computed = {topic: topics.compute(topic) for topic in TOPICS}  # as computed: tuples and all
    assert any("(" in repr(data) for data in computed.values())  # the round trip has something to change
    for lang in LANGS:
        for fmt in FORMATS:
            monkeypatch.setattr(render, "live_data", computed.__getitem__)
            fresh = {t: render_explainer(t, lang=lang, fmt=fmt) for t in TOPICS}
            monkeypatch.setattr(render, "live_data", topics.live_data)
            assert {t: render_explainer(t, lang=lang, fmt=fmt) for t in TOPICS} == fresh, (lang, fmt)
    assert topics.cache_file().read_text(encoding="utf-8") == kept  # read, not written again
    for damaged in ("{not json", "[]", '{"masked_rows": [1, 2]}'):
        topics.cache_file().write_text(damaged, encoding="utf-8")
        assert topics.live_data("masked_rows") == json.loads(json.dumps(computed["masked_rows"]))
        assert "masked_rows" in json.loads(topics.cache_file().read_text(encoding="utf-8"))  # and kept again


def test_a_kept_page_opens_without_torch(tmp_path):
    script = ("import sys; from grader.explain import render_explainer; page = render_explainer('masked_rows', "
              "lang='en', fmt='md'); print('torch' in sys.modules, len(page) > 500)")
    env = {**os.environ, "ATTENTION_KIT_CACHE_DIR": str(tmp_path)}
    run = lambda: subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert run().stdout.split() == ["True", "True"]  # the first time: computed with torch
    assert run().stdout.split() == ["False", "True"]  # then kept
