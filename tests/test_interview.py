"""grade interview and grade progress: the page, the draw, the scorecard, the history, the follow-up questions
and the facts their answers state (computed here). The end-to-end runs in a pseudo-terminal grade real
files: they are gated (ATTENTION_KIT_INTERVIEW_TESTS=1, .ci/run sets it)."""
import ast
import datetime as dt
import json
import math
import os
import re
import shutil
import time
from types import SimpleNamespace

import pytest
import torch

from grader import history, workspace
from grader.catalog import kit_dir, load_catalog
from grader.interview import page as pages
from grader.interview.card import Session
from grader.interview.questions import LANGS, for_exercise, topic_questions
from tests.conftest import COMMAND, CORPUS, ROOT, grade_here

CATALOG = load_catalog()
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


# -- the page --------------------------------------------------------------------------------------
@pytest.mark.parametrize("ex", CATALOG.exercises, ids=lambda e: e.slug)
def test_the_page_has_the_contract_and_signatures_but_no_steps(ex):
    text = pages.page_text(ex)
    tree = ast.parse(text)
    assert "TODO" not in text and "Check your work" not in text and "Shapes along the way" not in text
    assert ex.entry in {n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    assert "Contract" in ast.get_docstring(tree)
    skeleton = ast.parse(ex.skeleton_path.read_text(encoding="utf-8"))
    if pages.runs_as_handed_out(skeleton):  # find-the-bug: the code is the task, kept whole
        assert [type(n) for n in ast.walk(tree) if not isinstance(n, ast.Expr)] == \
            [type(n) for n in ast.walk(skeleton) if not isinstance(n, ast.Expr)]
    else:  # every function is an empty stub: no step of the skeleton survives
        for fn in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)):
            assert len(fn.body) == 1 and isinstance(fn.body[0], ast.Raise), (ex.slug, fn.name)


def test_write_page_keeps_the_file_that_was_there(tmp_path):
    ex = CATALOG.get(3)
    folder, backups = tmp_path / "interview", tmp_path / ".backups"
    path, backup, text = pages.write_page(ex, folder, backups)
    assert backup is None and path.read_text() == text
    path.write_text("my earlier attempt\n")
    again, backup, _ = pages.write_page(ex, folder, backups)
    assert again == path and path.read_text() == text and backup.read_text() == "my earlier attempt\n"
    assert pages.write_page(ex, folder, backups)[1] is None  # the page itself is not backed up again


def test_the_draw_follows_seed_topic_and_level():
    drawn = {pages.pick(CATALOG, number=None, topic=None, level=None, seed=s).number for s in range(40)}
    assert len(drawn) > 5
    assert pages.pick(CATALOG, number=None, topic=None, level=None, seed=7) == \
        pages.pick(CATALOG, number=None, topic=None, level=None, seed=7)
    for s in range(20):
        assert "rope" in pages.pick(CATALOG, number=None, topic="rope", level=None, seed=s).topics
        assert pages.pick(CATALOG, number=None, topic=None, level="hard", seed=s).level == "hard"
    assert pages.pick(CATALOG, number=CATALOG.get(5), topic="rope", level=None, seed=0).number == 5
    with pytest.raises(pages.PickError, match="no exercise has topic 'rope' and level 'easy'.*topics: "):
        pages.pick(CATALOG, number=None, topic="rope", level="easy", seed=0)


# -- the scorecard ---------------------------------------------------------------------------------
def verdict(passed=False, score=3, state="graded", mistake=None):
    diagnoses = [SimpleNamespace(id=mistake, title=f"title of {mistake}")] if mistake else []
    return SimpleNamespace(passed=passed, score=10 if passed else score, max_score=10, state=state, diagnoses=diagnoses)


def test_the_scorecard_counts_attempts_mistakes_in_order_hints_and_time():
    now = [100.0]
    s = Session(3, minutes=30, hints_allowed=True, page="PAGE", clock=lambda: now[0])
    assert s.note(verdict(), "PAGE", 1) is None  # the page saved unchanged
    assert s.note(verdict(state="not_started"), "class A: pass", 2) is None
    for at, mistake in ((60, "no_scaling"), (90, "no_scaling"), (120, "mask_inverted"), (150, "no_scaling")):
        s.note(verdict(mistake=mistake, score=4), f"code {at}", at)
    s.hints = 1
    now[0] += 200
    s.note(verdict(passed=True), "final", 200)
    card = s.card()
    assert card["passed"] and card["ended"] == "passed" and card["time_to_pass_s"] == 200
    assert card["attempts"] == 5 and card["failing_attempts"] == 4
    assert [(m["id"], m["attempt"]) for m in card["mistakes"]] == [("no_scaling", 1), ("mask_inverted", 3),
                                                                   ("no_scaling", 4)]
    assert card["score"] == 100 - 4 * 5 - 10 and card["breakdown"] == {"base": 100, "attempts": 20, "hints": 10}


def test_without_a_pass_the_best_attempt_counts_half_and_costs_are_capped():
    s = Session(1, minutes=1, hints_allowed=False, page="PAGE", clock=lambda: 0.0)
    for n in range(9):
        s.note(verdict(score=8 if n == 4 else 2, mistake="no_scaling"), f"v{n}", n)
    assert not s.card()["passed"] and s.breakdown() == {"base": 40, "attempts": 30, "hints": 0}
    assert s.score() == 10
    assert Session(1, minutes=1, hints_allowed=False, page="", clock=lambda: 0.0).score() == 0


# -- the history -----------------------------------------------------------------------------------
def at(day, hour=10):
    return dt.datetime(2026, 3, day, hour, tzinfo=dt.timezone.utc)


def test_history_first_seen_attempts_time_to_pass_and_streaks(tmp_path):
    ex = CATALOG.get(2)
    store = history.Store(tmp_path)
    store.update(lambda h: h.grade(ex, passed=False, started=False, when=at(1)))  # not started: no attempt
    store.update(lambda h: h.grade(ex, passed=False, started=True, when=at(2)))
    first, _ = store.update(lambda h: h.grade(ex, passed=True, started=True, when=at(3, 12)))
    again, _ = store.update(lambda h: h.grade(ex, passed=True, started=True, when=at(5)))
    assert first is True and again is False
    past, problem = store.load()
    entry = past.exercises["kit/scaled_dot_product"]
    assert problem is None and entry["attempts"] == 2 and entry["grades"] == 4
    assert entry["time_to_pass_s"] == (at(3, 12) - at(1)).total_seconds()
    assert history.streaks(past.days, dt.date(2026, 3, 5)) == (1, 2)
    assert history.streaks(past.days, dt.date(2026, 3, 6)) == (1, 2)  # practised yesterday: still running
    assert history.streaks(past.days, dt.date(2026, 3, 8)) == (0, 2)
    assert history.streaks({"2026-03-01", "2026-03-02", "2026-03-03", "2026-03-05"}, dt.date(2026, 3, 5)) == (1, 3)
    assert history.streaks({"2026-03-01", "2026-03-02", "2026-03-03"}, dt.date(2026, 3, 4)) == (3, 3)
    assert history.streaks(set(), dt.date(2026, 3, 4)) == (0, 0)
    rows = history.summary(past, CATALOG, dt.date(2026, 3, 5))["exercises"]
    assert rows[1]["slug"] == "scaled_dot_product" and rows[1]["days_practised"] == 3  # not day 1: not started


@pytest.mark.parametrize("damage", ["{not json", '{"version": 1, "exercises": {"kit/x": {"number": "one"}}}',
                                    '{"version": 1, "interviews": [{"score": "<b>"}]}', "[]"])
def test_a_damaged_history_is_a_warning_and_is_kept_aside(tmp_path, damage):
    (tmp_path / history.FILE).write_text(damage)
    store = history.Store(tmp_path)
    _, problem = store.update(lambda h: h.grade(CATALOG.get(1), passed=True, started=True, when=at(1)))
    assert "damaged" in problem and "\n" not in problem
    assert [p.read_text() for p in tmp_path.glob(history.FILE + ".damaged-*")] == [damage]
    assert history.Store(tmp_path).load() == (store.load()[0], None)


def test_progress_command_warns_in_one_line_on_a_damaged_or_unwritable_history(tmp_path):
    (tmp_path / history.FILE).write_text("{oops")
    env = {"ATTENTION_KIT_DATA_DIR": str(tmp_path), "NO_COLOR": "1"}
    proc = grade_here("progress", "--json", env=env)
    assert proc.returncode == 0 and json.loads(proc.stdout)["streak"] == {"current": 0, "longest": 0}
    assert proc.stderr.count("\n") == 1 and "damaged" in proc.stderr and "Traceback" not in proc.stderr
    blocked = tmp_path / "file-not-folder"
    blocked.write_text("")
    problem = history.Store(blocked / "sub").update(lambda h: None)[1]
    assert problem.startswith("progress history not saved:") and "\n" not in problem


def test_progress_lists_grades_and_interviews(tmp_path):
    store = history.Store(tmp_path)
    store.update(lambda h: h.grade(CATALOG.get(4), passed=True, started=True, when=history.now()))
    card = {"passed": False, "ended": "time", "score": 35, "attempts": 3, "time_to_pass_s": None,
            "mistakes": [{"id": "heads_split_wrong", "title": "t", "attempt": 1}]}
    store.update(lambda h: h.interview(CATALOG.get(4), card, when=history.now()))
    proc = grade_here("progress", env={"ATTENTION_KIT_DATA_DIR": str(tmp_path), "NO_COLOR": "1", "COLUMNS": "200"})
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"4 multihead_attention\s+✓ passed in 0 s, 1 attempt · 1 day · interviews 1 \(best 35\)", proc.stdout)
    assert "streak: 1 day" in proc.stdout and "not passed, 3 attempts, mistakes: heads_split_wrong" in proc.stdout
    data = json.loads(grade_here("progress", "--json", env={"ATTENTION_KIT_DATA_DIR": str(tmp_path)}).stdout)
    assert data["interviews"][0]["score"] == 35 and data["exercises"][3]["best_interview_score"] == 35
    pack = json.loads(grade_here("progress", "--json", "--pack", ROOT / "examples" / "alibi-pack",
                                 env={"ATTENTION_KIT_DATA_DIR": str(tmp_path)}).stdout)
    assert [r["key"] for r in pack["exercises"]] == ["alibi-pack/alibi"] and pack["interviews"] == []


# -- the command line ------------------------------------------------------------------------------
def test_interview_usage_errors_are_one_line(tmp_path):
    outside = grade_here("interview", cwd=tmp_path)
    assert outside.returncode == 2 and "not inside an attention-kit workspace" in outside.stderr
    ws = workspace.create(tmp_path / "ws", CATALOG).root
    unknown = grade_here("interview", "--topic", "nope", "--allow-weak-sandbox", cwd=ws)
    assert unknown.returncode == 2 and "no exercise has topic 'nope'" in unknown.stderr
    assert unknown.stderr.count("\n") == 1
    no_number = grade_here("interview", "--questions", cwd=ws)
    assert no_number.returncode == 2 and "which exercise?" in no_number.stderr


def test_questions_alone_with_and_without_answers():
    shown = grade_here("interview", "8", "--questions", "--lang", "en", env={"NO_COLOR": "1"})
    assert shown.returncode == 0 and "Q1/" in shown.stdout and "A:" not in shown.stdout
    assert "grade interview 8 --questions --reveal" in shown.stdout  # no terminal to press a key on
    revealed = grade_here("interview", "8", "--questions", "--reveal", "--lang", "zh", env={"NO_COLOR": "1"})
    assert revealed.stdout.count("A:") == len(for_exercise(CATALOG.get(8), "zh")) and "512 KiB" in revealed.stdout


# -- the questions and the facts in their answers ---------------------------------------------------
def test_every_exercise_has_follow_up_questions_in_both_languages():
    for ex in CATALOG.exercises:
        ids = {lang: [q.id for q in for_exercise(ex, lang)] for lang in LANGS}
        assert len(ids["en"]) >= 2 and ids["en"] == ids["zh"], ex.slug
    for path in sorted((kit_dir("templates") / "interview" / "en").glob("*.toml")):
        assert (kit_dir("templates") / "explain" / "en" / path.name).is_file(), f"{path.name}: no such topic"
        for lang in LANGS:
            assert all(q.q and q.a for q in topic_questions(path.stem, lang))


def answer(qid: str, lang: str) -> str:
    found = [q.a for ex in CATALOG.exercises for q in for_exercise(ex, lang) if q.id == qid]
    assert found, qid
    return found[0]


def says(qid: str, *facts: str) -> None:
    """Each fact (a number as computed here) is in the answer, in both languages."""
    for lang in LANGS:
        text = answer(qid, lang)
        for fact in facts:
            assert fact in text, f"{qid} ({lang}) should say {fact!r}"


def kib(n: int) -> str:
    return f"{n // 1024} KiB"


def test_kv_cache_numbers():
    from grader.explain.live_memory import SEVEN_B, cache_bytes, llama_params

    layers, heads, hd, tokens = SEVEN_B["layers"], SEVEN_B["heads"], SEVEN_B["head_dim"], SEVEN_B["tokens"]
    per_token = cache_bytes(layers, heads, hd, 1, torch.float16)
    assert per_token == 2 * layers * heads * hd * 2
    total = cache_bytes(layers, heads, hd, tokens, torch.float16)
    batch = cache_bytes(layers, heads, hd, tokens, torch.float16, batch=16)
    weights = llama_params(SEVEN_B) * 2
    assert batch > weights
    says("kv_cache_size", f"{per_token:,}", kib(per_token), f"{total // 2**30} GiB", f"{tokens:,}",
         f"{batch // 2**30} GiB", f"{weights / 2**30:.2f} GiB")
    says("gqa_tradeoff", kib(per_token), kib(cache_bytes(layers, 8, hd, 1, torch.float16)),
         kib(cache_bytes(layers, 1, hd, 1, torch.float16)))
    assert f"{llama_params(SEVEN_B) / 1e9:.2f}" in answer("kv_cache_size", "en")
    assert f"{llama_params(SEVEN_B) / 1e8:.1f}" in answer("kv_cache_size", "zh")  # 67.4 亿


def test_gqa_weights_and_head_grouping():
    d, heads, kv = 4096, 32, 8
    hd = d // heads
    full, grouped = torch.nn.Linear(d, d, bias=False, device="meta"), torch.nn.Linear(d, kv * hd, bias=False, device="meta")
    saved = 2 * (full.weight.numel() - grouped.weight.numel())
    says("gqa_params", f"{hd}", f"{kv * hd}", f"{grouped.weight.numel():,}", f"{full.weight.numel():,}", f"{saved:,}")
    assert f"{saved * 32 / 1e9:.2f}" in answer("gqa_params", "en") and f"{saved * 32 / 1e8:.1f} 亿" in answer("gqa_params", "zh")
    k = torch.arange(kv).view(1, kv, 1, 1)
    g = heads // kv
    assert k.repeat_interleave(g, dim=1).flatten().tolist() == [h // g for h in range(heads)]
    assert k.repeat(1, g, 1, 1).flatten().tolist() == [h % kv for h in range(heads)]
    says("gqa_repeat", "repeat_interleave", "h // (num_heads // num_kv_heads)", "h % num_kv_heads")


def test_scaling_numbers():
    torch.manual_seed(0)
    d = 64
    q, k = torch.randn(20_000, d, dtype=torch.float64), torch.randn(20_000, d, dtype=torch.float64)
    dots = (q * k).sum(-1)
    assert abs(dots.std().item() - math.sqrt(d)) < 0.2
    assert abs((dots / math.sqrt(d)).std().item() - 1) < 0.03 and abs((dots / d).std().item() - 1 / math.sqrt(d)) < 0.004
    says("sqrt_dk_not_dk", f"d_k = {d}", f"{math.sqrt(d):g}",
         f"{1 / math.sqrt(d):g}")
    says("scale_which_dim", "512 / 8 = 64", "√64 = 8", f"{math.sqrt(512):.2f}", f"{math.sqrt(8):.2f}")


def test_masking_numbers():
    says("mask_fill_zero", ", ".join(f"{w:.3f}" for w in torch.softmax(torch.tensor([2.0, 1.0, 0.0]), -1).tolist()),
         ", ".join(f"{w:.3f}" for w in torch.softmax(torch.tensor([2.0, 1.0]), -1).tolist()))
    assert round(torch.softmax(torch.tensor([2.0, 1.0, 0.0]), -1)[2].item() * 100) == 9
    row = torch.full((4,), float("-inf"))
    assert torch.softmax(row, -1).isnan().all()
    assert torch.softmax(torch.full((4,), -1e9), -1).tolist() == [0.25] * 4
    says("fully_masked_row", "1/S", "0.25", "torch.finfo(dtype).min")
    scores = torch.zeros(4, dtype=torch.float16)
    with pytest.raises(RuntimeError) as raised:
        scores.masked_fill(torch.tensor([True, False, False, False]), -1e9)
    message = str(raised.value)
    assert torch.tensor(-1e9).half().item() == float("-inf")
    says("fp16_fill_value", message, f"{torch.finfo(torch.float16).max:g}", f"{-torch.finfo(torch.bfloat16).min:.3g}".replace("e+", "e"))


def test_module_and_tensor_facts():
    single, eight = torch.nn.MultiheadAttention(512, 1), torch.nn.MultiheadAttention(512, 8)
    count = sum(p.numel() for p in single.parameters())
    assert count == sum(p.numel() for p in eight.parameters()) == 4 * 512 * 512 + 4 * 512
    says("heads_params", f"{count:,}", "head_dim = 64")
    x = torch.randn(2, 3, 4, 5).transpose(1, 2)
    assert not x.is_contiguous()
    with pytest.raises(RuntimeError) as raised:
        x.view(2, 4, 15)
    says("view_after_transpose", str(raised.value).split(" (")[0])

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("mask", torch.ones(2, 2).triu(1).bool())
            self.register_buffer("scratch", torch.ones(2), persistent=False)
    m = M()
    assert "mask" in m.state_dict() and "scratch" not in m.state_dict() and not list(m.parameters())
    assert m.to("meta").mask.device.type == "meta"
    says("why_buffer", "persistent=False", "state_dict", "module.parameters()")

    c = 6
    fused = torch.nn.Linear(c, 3 * c)
    x = torch.randn(2, 4, c)
    q, k, v = fused(x).split(c, dim=-1)
    wq, wk, wv = fused.weight.split(c, dim=0)
    assert fused.weight.shape == (3 * c, c)
    assert torch.allclose(k, x @ wk.T + fused.bias[c:2 * c]) and torch.allclose(q, x @ wq.T + fused.bias[:c])
    says("fused_qkv", "(3C, C)", "split(C, dim=-1)", "torch.cat([W_q, W_k, W_v], dim=0)")

    q, k, v = torch.randn(1, 1, 2, 4), torch.randn(1, 1, 3, 4), torch.randn(1, 1, 3, 4)
    allowed = torch.tensor([[True, False, False], [True, True, False]])
    manual = torch.softmax((q @ k.transpose(-1, -2) / 2).masked_fill(~allowed, float("-inf")), -1) @ v
    assert torch.allclose(torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=allowed), manual, atol=1e-6)
    says("flash_attention", "True", "is_causal=True")


def test_complexity_numbers():
    d = 768
    assert 2 * (2 * d) ** 2 * d == 4 * (2 * d) * d * d  # attention's multiply-adds equal the projections' at T = 2d
    one = 4096 * 4096 * 4
    says("attention_cost", f"{2 * d:,}", f"{one // 2**20} MiB", f"{one * 32 * 8 // 2**30} GiB")


def test_online_softmax_and_rope_facts():
    torch.manual_seed(1)
    s, v = torch.randn(10, dtype=torch.float64) * 3, torch.randn(10, 3, dtype=torch.float64)
    m, l, acc = torch.tensor(float("-inf"), dtype=torch.float64), 0.0, torch.zeros(3, dtype=torch.float64)
    for block in range(0, 10, 4):
        sb, vb = s[block:block + 4], v[block:block + 4]
        m_new = torch.maximum(m, sb.max())
        correction = torch.exp(m - m_new)
        p = torch.exp(sb - m_new)
        l, acc, m = l * correction + p.sum(), acc * correction + p @ vb, m_new
    assert torch.allclose(acc / l, torch.softmax(s, 0) @ v)
    inf = torch.tensor(float("-inf"))
    assert torch.exp(inf).item() == 0 and torch.exp(inf - inf).isnan()
    says("online_softmax", "exp(m − m′)", "acc / l")
    says("online_softmax_masked_block", "exp(−inf − (−inf))")

    def rotate(x, angle):
        c, s_ = math.cos(angle), math.sin(angle)
        return torch.tensor([x[0] * c - x[1] * s_, x[0] * s_ + x[1] * c])

    q, k = torch.tensor([0.3, -1.2], dtype=torch.float64), torch.tensor([0.7, 0.4], dtype=torch.float64)
    theta = 0.37
    dots = [rotate(q, m_ * theta) @ rotate(k, n * theta) for m_, n in ((3, 8), (20, 25), (103, 108))]
    assert max(dots) - min(dots) < 1e-12  # only n - m = 5 matters
    assert abs(dots[0] - rotate(q, 0) @ rotate(k, 5 * theta)) < 1e-12
    says("rope_relative", "R((n − m)θ)", "θ_i = base^(−2i/d)")
    assert torch.tensor(3000.0).to(torch.bfloat16).item() == 3008.0
    assert torch.tensor(3001.0).half().item() == 3000.0 and torch.tensor(3003.0).half().item() == 3004.0
    spacing = {dtype: (torch.tensor(2048.0, dtype=dtype).nextafter(torch.tensor(4096.0, dtype=dtype)) - 2048).item()
               for dtype in (torch.bfloat16, torch.float16)}
    assert spacing == {torch.bfloat16: 16.0, torch.float16: 2.0}
    says("rope_precision", "3008", "16", "2048", "4096", "8")


# -- end to end, in a pseudo-terminal --------------------------------------------------------------
slow = pytest.mark.skipif(not os.environ.get("ATTENTION_KIT_INTERVIEW_TESTS"),
                          reason="grades real files in a pseudo-terminal (a minute): .ci/run sets "
                                 "ATTENTION_KIT_INTERVIEW_TESTS=1")


def spawn(args, cwd, data, **env):
    pexpect = pytest.importorskip("pexpect")
    environ = {**os.environ, "ATTENTION_KIT_DATA_DIR": str(data), "TERM": "xterm-256color", "LANG": "C.UTF-8", **env}
    child = pexpect.spawn(COMMAND[0], [*COMMAND[1:], *args], cwd=str(cwd), env=environ, dimensions=(24, 80),
                          encoding="utf-8", timeout=120)
    child.screen = ""
    return child


def expect(child, text: str, timeout: float = 120) -> str:
    """Wait until text (colours removed) has appeared; returns the screen so far."""
    import pexpect

    deadline = time.monotonic() + timeout
    while text not in ANSI.sub("", child.screen):
        try:
            child.screen += child.read_nonblocking(65536, timeout=max(0.1, min(1.0, deadline - time.monotonic())))
        except pexpect.TIMEOUT:
            if time.monotonic() > deadline:
                raise AssertionError(f"{text!r} never appeared:\n{ANSI.sub('', child.screen)[-3000:]}") from None
        except pexpect.EOF:
            raise AssertionError(f"ended before {text!r}:\n{ANSI.sub('', child.screen)[-3000:]}") from None
    return ANSI.sub("", child.screen)


@slow
def test_a_whole_interview_in_a_terminal(tmp_path):
    ws = workspace.create(tmp_path / "ws", CATALOG).root
    data = tmp_path / "data"
    child = spawn(["interview", "3", "--minutes", "10", "--hints"], ws, data)
    page = ws / "interview" / CATALOG.get(3).file
    try:
        screen = expect(child, "end the interview")
        assert "each hint costs 10" in screen
        expect(child, "/ 10:00 · attempts 0 · waiting for a save")
        assert "TODO" not in page.read_text() and "Contract:" in page.read_text()
        child.send("h")
        expect(child, "Hint 1/")
        page.write_text(page.read_text() + "\n")  # saved unchanged in substance: not an attempt
        expect(child, "the page is unchanged")
        shutil.copyfile(CORPUS / "03" / "mask_inverted.py", page)
        screen = expect(child, "✗ attempt 1 at ")
        assert "mask_inverted" not in screen and "inverted" not in screen.lower()  # named only at the end
        shutil.copyfile(CATALOG.get(3).solution_path, page)
        screen = expect(child, "Follow-up questions")
        card = screen[screen.index("Scorecard"):]
        assert re.search(r"result:\s+passed in 00:\d\d \(limit 10:00\)", card)
        assert re.search(r"attempts:\s+2 \(1 failing\)", card)
        assert re.search(r"mistakes:\s+1\. The mask is inverted.*\s+\(mask_inverted, attempt 1\)", card, re.S)
        assert re.search(r"hints:\s+1\b", card) and re.search(r"score:\s+85/100", card)
        expect(child, "Q1/")
        assert "A:" not in ANSI.sub("", child.screen).split("Q1/")[1]
        child.send(" ")
        expect(child, "A: The mask must act before the softmax")
        child.send("n")
        expect(child, "Q2/")
        child.send("q")
        child.expect(__import__("pexpect").EOF, timeout=30)
    finally:
        child.close()
    assert child.exitstatus == 0
    saved = history.Store(data).load()[0].interviews
    assert len(saved) == 1 and saved[0]["score"] == 85 and saved[0]["mistakes"][0]["id"] == "mask_inverted"


@slow
def test_time_up_and_q_end_an_interview_with_a_scorecard(tmp_path):
    data = tmp_path / "data"
    child = spawn(["interview", "--level", "easy", "--seed", "3", "--minutes", "0.2", "--dir", str(tmp_path / "page"),
                   "--lang", "zh"], tmp_path, data)
    try:
        screen = expect(child, "end the interview")
        assert "seed 3" in screen
        number = int(re.search(r"exercise (\d+) \(", screen)[1])
        assert CATALOG.get(number).level == "easy"
        screen = expect(child, "Follow-up questions", timeout=60)
        assert re.search(r"result:\s+not passed: time was up at 00:12", screen) and re.search(r"score:\s+0/100", screen)
        expect(child, "Q1/")
        child.send("a")
        expect(child, "A: ")
        child.send("q")
        child.expect(__import__("pexpect").EOF, timeout=30)
    finally:
        child.close()
    assert child.exitstatus == 1
    child = spawn(["interview", "1", "--dir", str(tmp_path / "page")], tmp_path, data)
    try:
        expect(child, "end the interview")
        child.send("q")
        screen = expect(child, "Follow-up questions")
        assert re.search(r"result:\s+not passed: ended at 00:0\d", screen)
        child.send("q")
        child.expect(__import__("pexpect").EOF, timeout=30)
    finally:
        child.close()
    assert child.exitstatus == 1 and len(history.Store(data).load()[0].interviews) == 2


@slow
def test_a_first_pass_offers_the_follow_up_questions_once(tmp_path):
    ws = workspace.create(tmp_path / "ws", CATALOG).root
    env = {"ATTENTION_KIT_DATA_DIR": str(tmp_path / "data"), "NO_COLOR": "1", "LANG": "C.UTF-8"}
    shutil.copyfile(CATALOG.get(2).solution_path, ws / "exercises" / CATALOG.get(2).file)
    first = grade_here("exercise", "2", cwd=ws, env=env)
    assert first.returncode == 0 and "grade interview 2 --questions" in first.stdout
    assert for_exercise(CATALOG.get(2), "en")[0].q.split(" ")[0] in first.stdout
    again = grade_here("exercise", "2", cwd=ws, env=env)
    assert again.returncode == 0 and "grade interview" not in again.stdout
    entry = history.Store(tmp_path / "data").load()[0].exercises["kit/scaled_dot_product"]
    assert entry["attempts"] == 1 and entry["grades"] == 2 and entry["passed_at"]


def passing_verdict(ex):
    from grader.results import Status, TestResult, Verdict

    return Verdict(ex.number, ex.slug, ex.title, [TestResult("api", "api", Status.PASSED)], [], "cpu", 0.1)


def test_the_first_pass_offers_follow_up_questions_once_and_json_stays_one_document(tmp_path, monkeypatch):
    from grader import runner

    ex = CATALOG.get(9)
    monkeypatch.setattr(runner, "grade", lambda **kwargs: passing_verdict(ex))
    env = {"ATTENTION_KIT_DATA_DIR": str(tmp_path), "NO_COLOR": "1", "LANG": "zh_CN.UTF-8", "COLUMNS": "300"}
    first = grade_here("exercise", "9", ex.solution_path, env=env)
    asked = [q.q for q in for_exercise(ex, "zh")[:2]]
    assert first.returncode == 0 and all(q in first.stdout for q in asked) and "grade interview 9 --questions" in first.stdout
    again = grade_here("exercise", "9", ex.solution_path, env=env)
    assert again.returncode == 0 and "grade interview" not in again.stdout
    as_json = grade_here("exercise", "9", ex.solution_path, "--json", env={**env, "ATTENTION_KIT_DATA_DIR": str(tmp_path / "new")})
    assert json.loads(as_json.stdout)["passed"] and as_json.stdout.count("\n") == 1


def test_what_a_submission_controls_is_shown_as_text_on_the_interview_screen():
    from rich.console import Console

    from grader.interview.screen import macros
    from grader.render import show
    from grader.results import Status, TestResult, Verdict

    ex = CATALOG.get(2)
    bad = TestResult("numerics", "numerics", Status.FAILED, message="[bold red]FORGED[/] [link=http://x]y[/link]")
    v = Verdict(2, ex.slug, ex.title, [bad], [], "cpu", 0.1)
    console = Console(record=True, width=120, color_system="truecolor", force_terminal=True)
    attempt = Session(2, 5, False, "PAGE", clock=lambda: 0.0).note(v, "code", 3)
    show(console, macros().attempt(1, attempt, v, v.failures(), "00:03"))
    assert "[bold red]FORGED[/] [link=http://x]y[/link]" in console.export_text()
    assert "\x1b]8;" not in console.export_text(styles=True)  # no hyperlink escape made from the message
