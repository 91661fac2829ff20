"""Small random models of each common family's real shape, exported as the ONNX
folders people bring are exported, with transformers' own greedy answers beside them.

Runs in the model tools' venv (``prepare.py`` makes it)::

    python make_families.py OUT_DIR

For each family (``FAMILIES``) ``OUT_DIR/<family>/`` gets a Transformers.js-layout
folder: ``config.json``, ``generation_config.json`` (16 new tokens at most),
``tokenizer.json`` + ``tokenizer_config.json`` (the test fixture's byte-level BPE with the
family's own special tokens and a chat template in the family's form), and
``onnx/model.onnx``, exported

- by Optimum (``text-generation-with-past``), as onnx-community's Transformers.js folders
  are: Llama 3.2, Qwen3, Gemma 3 (no ``position_ids``), Phi-3/4;
- by onnxruntime-genai's model builder, as the ``-GQA`` / genai folders are:
  GroupQueryAttention (a Qwen2), and LFM2 (convolution states beside the KV cache);
- as SmolLM2 is prepared (``convert_smollm2.py``): the model builder's graph of a
  Llama of SmolLM2's kind with its attention made plain (``plain_attention``).

``expected.json`` holds, for each prompt of ``PROMPTS``, the ids transformers renders
(``apply_chat_template``), the day it rendered them on (Llama 3.2's template prints
it), and its greedy answer's ids (``generate``, PyTorch, float32): the runtime must give
both, token for token.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from datetime import date
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run as a script, in its venv

FIXTURE_TOKENIZER = (
    Path(__file__).resolve().parents[3]
    / "tests"
    / "fixtures"
    / "tiny-qwen2-toolcall"
    / "tokenizer.json"
)
PROMPTS = ["Hello!", "What is the capital of France? Answer in one word, please.", "12 + 30 ="]
MAX_NEW_TOKENS = 16
#: Shared small sizes: every family keeps its own structure (GQA ratio, explicit head
#: dims, norms, sliding windows, convolutions, tied embeddings) at a size CI can run.
HIDDEN, HEADS, KV_HEADS, HEAD_DIM, FFN = 64, 4, 2, 16, 128

QWEN3_TEMPLATE = """{%- for message in messages %}
{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}
{%- endfor %}
{%- if add_generation_prompt %}
{{- '<|im_start|>assistant\\n' }}
{%- if enable_thinking is defined and enable_thinking is false %}
{{- '<think>\\n\\n</think>\\n\\n' }}
{%- endif %}
{%- endif %}"""

GEMMA3_TEMPLATE = """{{ bos_token }}
{%- if messages[0]['role'] == 'system' -%}
{%- set first_user_prefix = messages[0]['content'] + '\\n\\n' -%}
{%- set loop_messages = messages[1:] -%}
{%- else -%}
{%- set first_user_prefix = "" -%}
{%- set loop_messages = messages -%}
{%- endif -%}
{%- for message in loop_messages -%}
{%- if (message['role'] == 'assistant') -%}{%- set role = "model" -%}
{%- else -%}{%- set role = message['role'] -%}{%- endif -%}
{{ '<start_of_turn>' + role + '\\n' + (first_user_prefix if loop.first else "") }}
{{- message['content'] | trim }}
{{ '<end_of_turn>\\n' }}
{%- endfor -%}
{%- if add_generation_prompt -%}{{ '<start_of_turn>model\\n' }}{%- endif -%}"""

LLAMA3_TEMPLATE = """{{- bos_token }}
{%- if strftime_now is defined %}{%- set date_string = strftime_now("%d %b %Y") %}
{%- else %}{%- set date_string = "26 Jul 2024" %}{%- endif %}
{%- if messages[0]['role'] == 'system' %}
{%- set system_message = messages[0]['content']|trim %}{%- set messages = messages[1:] %}
{%- else %}{%- set system_message = "" %}{%- endif %}
{{- "<|start_header_id|>system<|end_header_id|>\\n\\n" }}
{{- "Cutting Knowledge Date: December 2023\\n" }}
{{- "Today Date: " + date_string + "\\n\\n" }}
{{- system_message }}
{{- "<|eot_id|>" }}
{%- for message in messages %}
{{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n'+ message['content'] | trim + '<|eot_id|>' }}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{%- endif %}"""  # noqa: E501

PHI3_TEMPLATE = """{% for message in messages %}{{ '<|' + message['role'] + '|>' + message['content'] + '<|end|>' }}{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>' }}{% else %}{{ eos_token }}{% endif %}"""  # noqa: E501

CHATML_TEMPLATE = """{{- bos_token -}}
{%- for message in messages -%}
{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}"""

#: family -> how it is made: its config (beyond the shared sizes), exporter, special
#: tokens (the first ones are BOS and the EOS ids, by name), chat template.
FAMILIES: dict[str, dict[str, Any]] = {
    "llama3.2": {
        "config": {
            "architectures": ["LlamaForCausalLM"],
            "model_type": "llama",
            "num_hidden_layers": 3,
            "rope_theta": 500000.0,
            "rope_scaling": {
                "factor": 32.0,
                "high_freq_factor": 4.0,
                "low_freq_factor": 1.0,
                "original_max_position_embeddings": 8192,
                "rope_type": "llama3",
            },
            "tie_word_embeddings": True,
            "rms_norm_eps": 1e-5,
        },
        "exporter": "optimum",
        "keep_input": "logits_to_keep",  # the graph keeps the last positions' logits
        "specials": [
            "<|begin_of_text|>",
            "<|end_of_text|>",
            "<|eot_id|>",
            "<|start_header_id|>",
            "<|end_header_id|>",
        ],
        "bos": "<|begin_of_text|>",
        "eos": ["<|eot_id|>", "<|end_of_text|>"],
        "template": LLAMA3_TEMPLATE,
    },
    "qwen3": {
        "config": {
            "architectures": ["Qwen3ForCausalLM"],
            "model_type": "qwen3",
            "num_hidden_layers": 3,
            "head_dim": 32,  # Qwen3 sets head_dim apart from hidden / heads
            "rope_theta": 1000000.0,
            "tie_word_embeddings": True,
            "rms_norm_eps": 1e-6,
        },
        "exporter": "optimum",
        "specials": ["<think>", "</think>"],
        "bos": None,
        "eos": ["<|im_end|>", "<|endoftext|>"],
        "template": QWEN3_TEMPLATE,
    },
    "gemma3": {
        "config": {
            "architectures": ["Gemma3ForCausalLM"],
            "model_type": "gemma3_text",
            "num_hidden_layers": 6,  # five sliding-window layers, then a global one
            "sliding_window": 8,  # shorter than the prompts: the window is exercised
            "query_pre_attn_scalar": 16,
            "rope_theta": 1000000.0,
            "rope_local_base_freq": 10000.0,
            "hidden_activation": "gelu_pytorch_tanh",
            "tie_word_embeddings": True,
            "rms_norm_eps": 1e-6,
        },
        "exporter": "optimum",
        "specials": ["<pad>", "<eos>", "<bos>", "<start_of_turn>", "<end_of_turn>"],
        "bos": "<bos>",
        "eos": ["<eos>", "<end_of_turn>"],
        "template": GEMMA3_TEMPLATE,
    },
    "phi3": {
        "config": {
            "architectures": ["Phi3ForCausalLM"],
            "model_type": "phi3",
            "num_hidden_layers": 3,
            "partial_rotary_factor": 0.75,  # Phi-4-mini's partial rotary embedding
            "rope_theta": 10000.0,
            "tie_word_embeddings": True,
            "original_max_position_embeddings": 2048,
            "rms_norm_eps": 1e-5,
        },
        "exporter": "optimum",
        "specials": ["<|system|>", "<|user|>", "<|assistant|>", "<|end|>"],
        "bos": None,
        "eos": ["<|end|>", "<|endoftext|>"],
        "template": PHI3_TEMPLATE,
    },
    "qwen2-gqa": {
        "config": {
            "architectures": ["Qwen2ForCausalLM"],
            "model_type": "qwen2",
            "num_hidden_layers": 3,
            "rope_theta": 1000000.0,
            "tie_word_embeddings": True,
            "rms_norm_eps": 1e-6,
        },
        "exporter": "genai",
        "specials": [],
        "bos": None,
        "eos": ["<|im_end|>", "<|endoftext|>"],
        "template": CHATML_TEMPLATE,
    },
    "llama-plain": {
        "config": {
            "architectures": ["LlamaForCausalLM"],
            "model_type": "llama",
            "num_hidden_layers": 3,
            "rope_theta": 100000.0,
            "tie_word_embeddings": True,
            "rms_norm_eps": 1e-5,
        },
        "exporter": "genai-plain",
        "specials": [],
        "bos": None,
        "eos": ["<|im_end|>", "<|endoftext|>"],
        "template": CHATML_TEMPLATE,
    },
    "lfm2": {
        "config": {
            "architectures": ["Lfm2ForCausalLM"],
            "model_type": "lfm2",
            "num_hidden_layers": 6,
            "layer_types": ["conv", "conv", "full_attention", "conv", "full_attention", "conv"],
            "conv_L_cache": 3,
            "conv_bias": False,
            "block_auto_adjust_ff_dim": False,
            "block_ff_dim": FFN,
            "norm_eps": 1e-5,
            "rope_theta": 1000000.0,
            # transformers 5's name, which the model builder reads (4.57 keeps it as is)
            "rope_parameters": {"rope_theta": 1000000.0, "rope_type": "default"},
            "tie_word_embeddings": True,
        },
        "exporter": "genai",
        "specials": ["<|startoftext|>"],
        "bos": "<|startoftext|>",
        "eos": ["<|im_end|>"],
        "template": CHATML_TEMPLATE,
    },
}


def log(message: str) -> None:
    print(f"[families] {message}", flush=True)


def write_tokenizer(family: dict[str, Any], out: Path) -> tuple[int, int | None, list[int]]:
    """The fixture's tokenizer with the family's special tokens; its size, BOS, EOS ids."""
    from tokenizers import AddedToken, Tokenizer

    tokenizer = Tokenizer.from_file(str(FIXTURE_TOKENIZER))
    tokenizer.add_special_tokens(
        [AddedToken(t, special=True, normalized=False) for t in family["specials"]]
    )
    tokenizer.save(str(out / "tokenizer.json"))
    ids = {name: tokenizer.token_to_id(name) for name in [*family["eos"], family["bos"]] if name}
    config = {
        "add_bos_token": False,
        "add_prefix_space": False,
        "bos_token": family["bos"],
        "eos_token": family["eos"][0],
        "pad_token": family["eos"][-1],
        "chat_template": family["template"],
        "clean_up_tokenization_spaces": False,
        "model_max_length": 2048,
        "tokenizer_class": "PreTrainedTokenizerFast",
    }
    (out / "tokenizer_config.json").write_text(json.dumps(config, indent=2) + "\n")
    bos = ids[family["bos"]] if family["bos"] else None
    return tokenizer.get_vocab_size(), bos, [ids[name] for name in family["eos"]]


def make_torch_model(name: str, family: dict[str, Any], hf: Path) -> Any:
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, GenerationConfig

    vocab, bos, eos = write_tokenizer(family, hf)
    spec = {
        "hidden_size": HIDDEN,
        "intermediate_size": FFN,
        "num_attention_heads": HEADS,
        "num_key_value_heads": KV_HEADS,
        "head_dim": HEAD_DIM,
        "max_position_embeddings": 2048,
        "vocab_size": vocab,
        "bos_token_id": bos,
        "eos_token_id": eos,
        "pad_token_id": eos[-1],
        "torch_dtype": "float32",
        **family["config"],
    }
    model_type = spec.pop("model_type")
    config = AutoConfig.for_model(model_type, **spec)
    torch.manual_seed(sum(map(ord, name)))
    model = AutoModelForCausalLM.from_config(config, torch_dtype=torch.float32).eval()
    with torch.no_grad():  # random weights that give varied, deterministic answers
        for parameter in model.parameters():
            parameter.normal_(0.0, 0.3 if parameter.dim() > 1 else 0.1)
            if parameter.dim() == 1:
                parameter.add_(1.0)
    model.generation_config = GenerationConfig(
        bos_token_id=bos,
        eos_token_id=eos,
        pad_token_id=eos[-1],
        max_new_tokens=MAX_NEW_TOKENS,
        do_sample=False,
    )
    model.save_pretrained(hf)
    return model


def expected_answers(model: Any, hf: Path) -> list[dict[str, Any]]:
    """transformers' rendered prompt ids and greedy answer ids for each prompt."""
    import torch
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(hf)
    cases = []
    for prompt in PROMPTS:
        # A template may print today's date (strftime_now): keep the day it rendered on,
        # rendering again if midnight passed in between.
        day, ids = None, []
        while day != date.today().isoformat():
            day = date.today().isoformat()
            ids = tokenizer.apply_chat_template(
                [{"role": "user", "content": prompt}],
                add_generation_prompt=True,
                tokenize=True,
                enable_thinking=False,
            )
        with torch.no_grad():
            out = model.generate(torch.tensor([ids]), generation_config=model.generation_config)
        cases.append(
            {
                "prompt": prompt,
                "rendered_on": day,
                "prompt_ids": list(ids),
                "answer_ids": out[0, len(ids) :].tolist(),
            }
        )
    return cases


def export_optimum(hf: Path, out: Path, keep_input: str | None) -> None:
    from convert_smollm2 import logits_to_keep
    from optimum.exporters.onnx import main_export

    with tempfile.TemporaryDirectory() as work:
        main_export(str(hf), output=work, task="text-generation-with-past", opset=18)
        shutil.copy(Path(work) / "model.onnx", out / "onnx" / "model.onnx")
    if keep_input:
        logits_to_keep(out / "onnx" / "model.onnx", keep_input)


def export_genai(hf: Path, out: Path, plain: bool = False) -> None:
    """onnxruntime-genai's model builder (its command line), float32 on CPU; the
    weights moved into the graph, which stays small; ``plain``: its attention then made
    plain, as SmolLM2's is."""
    import onnx
    from convert_smollm2 import build_genai, plain_attention

    with tempfile.TemporaryDirectory() as work, tempfile.TemporaryDirectory() as cache:
        build_genai(hf, Path(work), Path(cache))
        model = onnx.load(str(Path(work) / "model.onnx"))
        onnx.save(model, str(out / "onnx" / "model.onnx"))
    if plain:
        plain_attention(out / "onnx" / "model.onnx")


def make(name: str, out: Path) -> None:
    family = FAMILIES[name]
    folder = out / name
    shutil.rmtree(folder, ignore_errors=True)
    (folder / "onnx").mkdir(parents=True)
    with tempfile.TemporaryDirectory() as work:
        hf = Path(work)
        model = make_torch_model(name, family, hf)
        cases = expected_answers(model, hf)
        if family["exporter"] == "optimum":
            export_optimum(hf, folder, family.get("keep_input"))
        else:
            export_genai(hf, folder, plain=family["exporter"] == "genai-plain")
        for file in (
            "config.json",
            "generation_config.json",
            "tokenizer.json",
            "tokenizer_config.json",
        ):
            shutil.copy(hf / file, folder / file)
    (folder / "expected.json").write_text(json.dumps(cases, indent=1) + "\n")
    log(f"{name}: {[len(c['answer_ids']) for c in cases]} answer tokens")


def main() -> None:
    out = Path(sys.argv[1])
    names = sys.argv[2:] or list(FAMILIES)
    for name in names:
        make(name, out)


if __name__ == "__main__":
    main()
