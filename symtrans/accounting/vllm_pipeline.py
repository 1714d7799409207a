"""Pipeline parallelism as vLLM lays it out (``deploy --pipeline-parallel-size P``).

* Layers over stages: ``vllm/distributed/utils.py``, ``get_pp_indices``: N // P layers a stage;
  the N mod P left over go one each to the stages before the last, from the last but one
  backwards (``partitions[-i] += 1`` for i = 2 .. r + 1).
* What else a stage holds: the token embedding on the first stage; the final norm and the
  language-model head on the last, which keeps its own copy of a tied embedding
  (``vllm/model_executor/models/llama.py``: ``LlamaModel`` builds ``embed_tokens`` on the first
  rank, or on the last when ``tie_word_embeddings``; ``LlamaForCausalLM`` the ``lm_head`` on the
  last); the sampler's profiling run (its logits) on the last stage only.
* The KV budget: every stage sizes its cache from its own free memory and vLLM keeps the
  smallest number of blocks (``vllm/v1/core/kv_cache_utils.py``, ``get_kv_cache_configs``:
  "Change the num_blocks of each worker to the smallest among all workers").

Modelled for a decoder-only stack whose layers are all alike (every step once or once per
layer), unquantized, without windows or state layers; anything else is refused.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from symtrans.base.errors import InputError

SOURCE = "vllm/distributed/utils.py (get_pp_indices), vllm/v1/core/kv_cache_utils.py (get_kv_cache_configs)"
# what a refusal tells the user to do instead
INSTEAD = "plan it with --tensor-parallel-size instead"


def _part(node) -> str | None:
    """The model part a Cost-tree node belongs to, in the user's words (for a refusal); None for a
    step of the language model's layers."""
    from symtrans.engine.roles import Block, Role

    if Block.AUDIO_TOWER in node.blocks:  # Gemma 4's audio tower and embed_audio
        return "the audio tower and its projection into the language model (embed_audio)"
    vision = {Block.VISION_TOWER, Block.PROJECTOR}
    if vision & set(node.blocks) or node.step.role in (Role.VISION, Role.PATCH_EMBEDDING, Role.CLS_TOKEN):
        return "the vision encoder and its projector (a vision-language model)"
    words = {
        Role.POSITION_EMBEDDING: "the learned position embeddings (a table beside the token embeddings)",
        Role.TYPE_EMBEDDING: "the token-type embeddings",
        Role.EMBEDDING_PROJECTION: "the projection between the embedding width and d_model",
        Role.OUTPUT_PROJECTION: "the projection between d_model and the embedding width",
    }
    if node.step.role in words:
        return words[node.step.role]
    if Block.LAYER in node.blocks:
        return None
    inner = [b for b in node.blocks if b not in (Block.MODEL,)]
    return f"a part outside the repeated layers ({(inner[-1] if inner else Block.OTHER).value.replace('_', ' ')})"


def partition(layers: int, stages: int) -> list[int]:
    """Layers per stage, vLLM's ``get_pp_indices`` without ``VLLM_PP_LAYER_PARTITION``.

    Raises:
        InputError: more stages than layers.
    """
    if stages > layers:
        raise InputError(f"--pipeline-parallel-size {stages} exceeds the model's {layers} layers")
    out = [layers // stages] * stages
    for i in range(2, layers % stages + 2):
        out[-i] += 1
    return out


@dataclass(frozen=True)
class Stage:
    """One pipeline stage on one of its tensor-parallel devices: ``layers``, ``weights`` (bytes),
    ``kv_bytes_per_token``, ``logits`` (whether the sampler's profiling run is here)."""

    index: int
    layers: int
    weights: int
    kv_bytes_per_token: int
    logits: bool


def stages(spec, values: dict, fmt_bytes: sp.Rational, mat, vec, tp: int, pp: int, kv_tok: int) -> list[Stage]:
    """The ``pp`` stages of ``spec`` (see the module docstring).

    Args:
        fmt_bytes: bytes per parameter of the (unquantized) weights.
        mat, vec: the whole model's matrix and vector bytes (``quantization.matrix_share``).
        kv_tok: the KV cache of one token on one device, all layers.

    Raises:
        InputError: a model this layout does not cover (one line each).
    """
    from symtrans.engine.architectures import build
    from symtrans.engine.evaluate import exact
    from symtrans.engine.roles import Block, Role

    if spec.family != "decoder-only":
        raise InputError(f"--pipeline-parallel-size is planned for decoder-only models only; {INSTEAD}")
    N = values["N"]
    nodes = list(build(spec).nodes())
    if any(n.step.state != 0 for n in nodes) or any(n.step.cache_window is not None for n in nodes):
        raise InputError(
            "--pipeline-parallel-size: how vLLM splits sliding-window or state-space (Mamba, linear-attention) "
            f"layers over the stages is not modelled; {INSTEAD}"
        )
    emb = head = final = 0
    for n in nodes:
        m = int(exact(n.multiplicity, values))
        params = int(exact(n.step.params, values))
        if m == N or params == 0:
            continue
        part = _part(n)
        if part is None:  # a step of the language model's layers in fewer than all of them
            kind = "mixture-of-experts" if Block.MOE in n.blocks or Block.SHARED_EXPERT in n.blocks else "dense"
            some = f"{m} is a {kind} layer" if m == 1 else f"{m} are {kind} layers"
            raise InputError(
                f"--pipeline-parallel-size: the model's {N} layers are not all alike ({some}), and symtrans "
                f"splits only alike layers over pipeline stages; {INSTEAD}"
            )
        if m != 1:
            raise InputError(f"--pipeline-parallel-size: which stage holds {part} is not modelled; {INSTEAD}")
        if n.step.role == Role.TOKEN_EMBEDDING:
            emb += params
        elif n.step.role == Role.LM_HEAD:
            head += params
        elif n.step.role == Role.NORM:
            final += params
        else:
            raise InputError(f"--pipeline-parallel-size: which stage holds {part} is not modelled; {INSTEAD}")
    E, H, F = emb * fmt_bytes, head * fmt_bytes, final * fmt_bytes
    layer_mat, layer_vec = (sp.Rational(mat) - E - H) / N, (sp.Rational(vec) - F) / N
    if layer_mat < 0 or layer_vec < 0:
        raise InputError(
            f"--pipeline-parallel-size: the model's weights do not split into alike layers over the stages; {INSTEAD}"
        )
    head_copy = H if head else E  # a tied head: the last stage loads the embedding again
    out = []
    for i, n in enumerate(partition(N, pp)):
        first, last = i == 0, i == pp - 1
        m = n * layer_mat + (E if first else 0) + (head_copy if last else 0)
        v = n * layer_vec + (F if last else 0)
        out.append(Stage(i, n, int(sp.ceiling(m / tp + v)), int(sp.Rational(kv_tok * n, N)), last))
    return out
