"""The samplers, as a statistical property: many draws from fixed logits have the
frequencies of the softmax over the top k logits at the temperature, with and without a
proposed (draft) token, and masked (-inf) logits are never drawn: the CPython host's
(NumPy) and the page's (web/worker/sampling.mjs, in Node)."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from pathlib import Path

import pytest

np = pytest.importorskip("numpy")
pytest.importorskip("onnxruntime")

from py_runtime.engine.vocabulary import SAMPLING_MODES, Sampling  # noqa: E402
from py_runtime.hosts.onnxruntime_backend import choose  # noqa: E402

DRAWS = 20_000


def expected(logits: np.ndarray, sampling: Sampling) -> np.ndarray:
    """The softmax of the top k finite logits at the temperature; 0 elsewhere."""
    finite = np.flatnonzero(np.isfinite(logits))
    top = finite[np.argsort(-logits[finite], kind="stable")[: sampling.top_k]]
    out = np.zeros(len(logits))
    weights = np.exp((logits[top] - logits[top].max()) / sampling.temperature)
    out[top] = weights / weights.sum()
    return out


def assert_matches(counts: np.ndarray, probabilities: np.ndarray) -> None:
    """Every token's frequency within 5 standard errors of its probability (a false
    alarm about once in 10^5 tokens), and tokens of probability 0 never drawn."""
    n = counts.sum()
    for token, (count, p) in enumerate(zip(counts, probabilities, strict=True)):
        if p == 0:
            assert count == 0, f"token {token} drawn {count} times with probability 0"
            continue
        tolerance = 5 * math.sqrt(p * (1 - p) / n) + 1 / n
        assert abs(count / n - p) <= tolerance, (token, count / n, p)


@pytest.mark.parametrize("mode", [m for m in SAMPLING_MODES if m != "most-predictable"])
@pytest.mark.parametrize("seed", [0, 1])
def test_draws_follow_the_top_k_softmax(mode: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    logits = rng.normal(0, 2, 48).astype(np.float32)
    logits[rng.choice(48, 6, replace=False)] = -np.inf  # a grammar's mask
    sampling = SAMPLING_MODES[mode]  # type: ignore[index]
    counts = np.bincount([choose(logits, sampling, rng) for _ in range(DRAWS)], minlength=48)
    assert_matches(counts, expected(logits, sampling))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_proposed_token_leaves_the_distribution_unchanged(seed: int) -> None:
    """Speculative decoding's rule: whatever is proposed (in the top k, outside it,
    masked), the draws have the sampler's distribution."""
    rng = np.random.default_rng(seed)
    logits = rng.normal(0, 1.5, 32).astype(np.float32)
    logits[:3] = -np.inf
    sampling = Sampling(top_k=6, temperature=0.8)
    probabilities = expected(logits, sampling)
    proposals = rng.integers(0, 32, DRAWS)
    draws = [choose(logits, sampling, rng, int(p)) for p in proposals]
    assert_matches(np.bincount(draws, minlength=32), probabilities)


def test_greedy_takes_the_argmax() -> None:
    rng = np.random.default_rng(0)
    logits = rng.normal(0, 1, 64).astype(np.float32)
    for sampling in (Sampling(top_k=1, temperature=0.7), Sampling(top_k=8, temperature=0)):
        assert choose(logits, sampling, rng) == int(np.argmax(logits))


# -- the page's sampler (web/worker/sampling.mjs), run in Node -----------------------------

SAMPLING_MJS = Path(__file__).resolve().parents[2] / "web" / "worker" / "sampling.mjs"
NODE_DRAWS = """
const { choose, judge } = await import(process.argv[1]);
const { logits, topK, temperature, draws, proposals } = JSON.parse(process.argv[2]);
const values = Float32Array.from(logits.map((v) => (v === null ? -Infinity : v)));
const counts = new Array(values.length).fill(0);
for (let i = 0; i < draws; i++) {
  const proposed = proposals ? proposals[i % proposals.length] : null;
  counts[proposed === null ? choose(values, topK, temperature)
                           : judge(values, topK, temperature, proposed)]++;
}
console.log(JSON.stringify(counts));
"""


def node_counts(logits: np.ndarray, sampling: Sampling, proposals: list[int] | None = None):
    if shutil.which("node") is None:
        pytest.skip("needs Node")
    case = {
        "logits": [None if not np.isfinite(v) else float(v) for v in logits],
        "topK": sampling.top_k,
        "temperature": sampling.temperature,
        "draws": DRAWS,
        "proposals": proposals,
    }
    out = subprocess.run(
        ["node", "--input-type=module", "-e", NODE_DRAWS, SAMPLING_MJS.as_uri(), json.dumps(case)],
        capture_output=True,
        text=True,
        check=True,
    )
    return np.array(json.loads(out.stdout))


@pytest.mark.parametrize("mode", ["predictable", "balanced", "most-creative"])
def test_the_pages_draws_follow_the_top_k_softmax(mode: str) -> None:
    rng = np.random.default_rng(3)
    logits = rng.normal(0, 2, 48).astype(np.float32)
    logits[rng.choice(48, 6, replace=False)] = -np.inf
    sampling = SAMPLING_MODES[mode]  # type: ignore[index]
    assert_matches(node_counts(logits, sampling), expected(logits, sampling))


def test_the_pages_judged_draft_leaves_the_distribution_unchanged() -> None:
    rng = np.random.default_rng(4)
    logits = rng.normal(0, 1.5, 32).astype(np.float32)
    logits[:3] = -np.inf
    sampling = Sampling(top_k=6, temperature=0.8)
    proposals = [int(p) for p in rng.integers(0, 32, 997)]
    counts = node_counts(logits, sampling, proposals)
    assert_matches(counts, expected(logits, sampling))
