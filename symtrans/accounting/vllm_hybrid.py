"""vLLM's KV cache layout for a hybrid model: attention layers beside state layers (Mamba, gated
DeltaNet, short convolutions), as vLLM v1 allocates them (``deploy --engine vllm``).

vLLM gives every layer pages of one size from one pool (issue 23, build 1; the sources, read at
vllm-project/vllm main):

* The state page of a layer (``MambaSpec.page_size_bytes``): the layer's conv state, (d_conv − 1)
  inputs per channel, and its recurrent state, split over tensor parallelism, in the model's
  dtype (``mamba_cache_dtype`` and ``mamba_ssm_cache_dtype`` ``auto``):
  ``vllm/model_executor/layers/mamba/mamba_utils.py``, ``MambaStateShapeCalculator``
  (``mamba1_state_shape``, ``mamba2_state_shape``, ``gated_delta_net_state_shape``,
  ``short_conv_state_shape``) and ``MambaStateDtypeCalculator``.  symtrans's Cost tree keeps
  transformers' conv cache of d_conv inputs (``Step.state``); vLLM keeps d_conv − 1.
* The attention block (``vllm/model_executor/models/config.py``,
  ``HybridAttentionMambaModelConfig.verify_and_update_config``, prefix caching off, i.e.
  ``mamba_cache_mode`` ``none``): b = 16 · cdiv(state page, 16 · a) tokens, a the attention
  bytes of one token in one layer; the attention page b · a; the state page padded to it.
* Zamba2 (``vllm/model_executor/models/zamba2.py``): every layer of ``layers_block_type`` keeps a
  Mamba 2 state (a hybrid layer's ``mamba_decoder`` too), and each hybrid layer its own K/V cache of
  ``num_attention_heads`` heads of ``attention_head_dim`` (``Zamba2ModelArchConfigConvertor`` in
  ``vllm/transformers_utils/model_arch_config_convertor.py`` gives that head size to config.py).
* Groups (``vllm/v1/core/kv_cache_utils.py``, ``_get_kv_cache_groups_uniform_page_size``): the
  group size g is the smaller layer count, or the larger when it is under 1.5 times the smaller;
  each kind makes cdiv(layers, g) groups.
* Blocks (``get_kv_cache_config_from_groups``, ``get_num_blocks``): available // page // g.
* The log (``_report_kv_cache_config``): 'GPU KV cache size' = blocks // groups · b tokens;
  'Maximum concurrency' (``get_max_concurrency_for_kv_cache_config``) = blocks / (attention
  groups · cdiv(max_model_len, b) + state groups), one state page per request per state group.
* Start-up (``_check_enough_kv_cache_memory`` with ``max_memory_usage_bytes`` over every
  layer): vLLM refuses to start when (attention layers · cdiv(max_model_len, b) + state layers)
  pages exceed the available memory.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from symtrans.base.errors import InputError

ALIGNMENT = 16  # FlashAttention's kernel block alignment (config.py: kernel_block_alignment_size = 16)
# config.py: on compute capability 10.x with head size 256 (FlashInfer, the default there) the
# alignment is 32 (flashinfer-ai/flashinfer#1993: block size 16 unsupported)
SM100 = frozenset({"b200", "gb200", "b100", "b300", "gb300"})
SOURCE = (
    "vllm/model_executor/models/config.py (HybridAttentionMambaModelConfig.verify_and_update_config), "
    "vllm/v1/core/kv_cache_utils.py (_get_kv_cache_groups_uniform_page_size, get_kv_cache_config_from_groups, "
    "_report_kv_cache_config, get_max_concurrency_for_kv_cache_config)"
)


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class HybridLayout:
    """The page layout vLLM gives a hybrid model on one device.

    Attributes:
        attention_layers, state_layers: layer counts of each kind.
        attention_bytes: bytes of one token in one attention layer on the device.
        state_bytes: one state layer's state on the device, vLLM's shapes, unpadded.
        block_size: the attention block, tokens; ``page`` its bytes (= the padded state page).
        group_size: layers per group (g); ``attention_groups``, ``state_groups`` the groups of each kind.
    """

    attention_layers: int
    state_layers: int
    attention_bytes: int
    state_bytes: int
    block_size: int
    page: int
    group_size: int
    attention_groups: int
    state_groups: int
    alignment: int = ALIGNMENT

    @property
    def groups(self) -> int:
        return self.attention_groups + self.state_groups

    def blocks(self, available: int) -> int:
        """Blocks of the pool: available // page // g (``get_num_blocks``)."""
        return max(available // self.page // self.group_size, 0)

    def token_budget(self, blocks: int) -> int:
        """vLLM's 'GPU KV cache size': blocks // groups · block_size tokens."""
        return blocks // self.groups * self.block_size

    def blocks_per_request(self, max_model_len: int) -> int:
        """Blocks one request of ``max_model_len`` tokens may take over all groups."""
        return self.attention_groups * _cdiv(max_model_len, self.block_size) + self.state_groups

    def concurrency(self, blocks: int, max_model_len: int) -> Fraction:
        """vLLM's 'Maximum concurrency': blocks / blocks per request."""
        return Fraction(blocks, self.blocks_per_request(max_model_len))

    def start_bytes(self, max_model_len: int) -> int:
        """The memory vLLM requires to start: every layer's pages for one request of ``max_model_len``."""
        return (self.attention_layers * _cdiv(max_model_len, self.block_size) + self.state_layers) * self.page

    @property
    def padding(self) -> Fraction:
        """The state page's padding, a fraction of the state (vLLM logs it as a percentage)."""
        return Fraction(self.page - self.state_bytes, self.state_bytes)


def _layers(nodes, what: str, values: dict) -> int:
    from symtrans.engine.evaluate import exact

    counts = {int(exact(n.multiplicity, values)) for n in nodes}
    if len(counts) != 1:
        raise InputError(
            f"--engine vllm: {what} steps in layers of different counts ({', '.join(map(str, sorted(counts)))}): "
            "vLLM's hybrid page layout is not modelled for such a model"
        )
    return counts.pop()


def _state(nodes, values: dict) -> tuple[int, Fraction]:
    """The state layers and one layer's state elements in vLLM's shapes.

    The steps of one set of state layers share their enclosing blocks and their layer count.
    Zamba2 has two such sets, its Mamba 2 layers and its hybrid layers' Mamba 2 mixers
    (``zamba2.py``: every layer of ``layers_block_type`` has a ``MambaMixer2``): their layers add
    up when one layer's state is the same in both.

    Raises:
        InputError: sets of different states per layer, or a set whose steps differ in layer count.
    """
    from symtrans.engine.evaluate import exact
    from symtrans.engine.roles import Role

    sets: dict[tuple, list] = {}
    for n in nodes:
        sets.setdefault(n.blocks, []).append(n)
    if len(sets) == 1 or len({int(exact(n.multiplicity, values)) for n in nodes}) == 1:
        sets = {(): list(nodes)}  # one set of layers (Jamba, Qwen3-Next, ...)
    layers, per_layer = 0, set()
    for members in sets.values():
        count = _layers(members, "state", values)
        elements = Fraction(0)
        for n in members:
            s = Fraction(int(exact(n.multiplicity * n.step.state, values)), count)
            if n.step.role == Role.MIXER_CONV:  # vLLM keeps d_conv − 1 inputs per channel, transformers d_conv
                s = s * (values["d_conv"] - 1) / values["d_conv"]
            elements += s
        layers += count
        per_layer.add(elements)
    if len(per_layer) != 1:
        raise InputError("--engine vllm: state layers of different state sizes: vLLM's page layout is not modelled")
    return layers, per_layer.pop()


def layout(
    spec,
    values: dict,
    tp: int,
    kv_bytes_per_token: int,
    state_dtype: str,
    block_size: int | None,
    accelerator: str = "",
) -> HybridLayout | None:
    """vLLM's layout for ``spec`` on one of ``tp`` devices, or ``None`` when no layer keeps a state.

    Args:
        kv_bytes_per_token: the attention cache of one token on one device, all layers (bytes).
        state_dtype: the model's dtype (vLLM's ``auto`` state dtypes).
        block_size: the user's ``--block-size``; vLLM raises a smaller one to its hybrid block.
        accelerator: the accelerator's name (``SM100`` with head size 256 aligns blocks to 32).

    Raises:
        InputError: windowed attention beside state layers, state or cache steps of different
            layer counts (sets of state layers of one state each add up: Zamba2), Zamba2 with
            num_key_value_heads unlike num_attention_heads, a Mamba-2 group count tensor parallelism does not divide, or a state
            tensor parallelism does not divide: not modelled.
    """
    from symtrans.accounting.memory import get_dtype
    from symtrans.engine.architectures import build

    nodes = list(build(spec).nodes())
    state = [n for n in nodes if n.step.state != 0]
    if not state:
        return None
    caching = [n for n in nodes if n.step.cache != 0]
    if any(n.step.cache_window is not None for n in caching):
        raise InputError(
            "--engine vllm: sliding-window attention beside state layers is not modelled (vLLM groups three kinds "
            "of layer); give --engine none"
        )
    if tp > 1 and "g_ssm" in values and values["g_ssm"] % tp:
        # mamba_utils.mamba2_state_shape widens the groups to tp (extra_groups_for_head_shards)
        raise InputError(
            f"--engine vllm: {values['g_ssm']} Mamba-2 groups over --tensor-parallel {tp} are not modelled"
        )
    n_attn = _layers(caching, "attention", values)
    from symtrans.engine.zamba2 import SOURCE as ZAMBA2

    if any(n.step.source == ZAMBA2 for n in caching) and values.get("h_kv", values["h"]) != values["h"]:
        # zamba2.py: each hybrid layer's Attention caches num_attention_heads K/V heads, while the page vLLM
        # sizes (config.py) reads num_key_value_heads: the two disagree
        raise InputError(
            f"--engine vllm: Zamba2 with num_key_value_heads {values['h_kv']} unlike num_attention_heads "
            f"{values['h']}: vLLM's Zamba2Attention caches {values['h']} heads, not modelled"
        )
    n_state, elements = _state(state, values)
    per_device = elements / tp
    if per_device.denominator != 1:
        raise InputError(f"--engine vllm: the state of a layer does not split over --tensor-parallel {tp}")
    state_bytes = int(per_device * get_dtype(state_dtype).bytes)
    if kv_bytes_per_token % n_attn:
        raise InputError("--engine vllm: attention layers of different cache sizes beside state layers: not modelled")
    a = kv_bytes_per_token // n_attn
    align = 2 * ALIGNMENT if accelerator in SM100 and values.get("d_k") == 256 else ALIGNMENT
    b = align * _cdiv(state_bytes, align * a)
    if block_size is not None and block_size > b:
        b = block_size  # config.py keeps a user's block size when it is large enough (user block multiple: kept)
    if b * a < state_bytes:  # cannot happen with the aligned block; vLLM's second branch, kept for --block-size
        b = _cdiv(state_bytes, a)
    lo, hi = min(n_attn, n_state), max(n_attn, n_state)
    g = hi if hi < lo * 1.5 else lo
    return HybridLayout(
        attention_layers=n_attn,
        state_layers=n_state,
        attention_bytes=a,
        state_bytes=state_bytes,
        block_size=b,
        page=b * a,
        group_size=g,
        attention_groups=_cdiv(n_attn, g),
        state_groups=_cdiv(n_state, g),
        alignment=align,
    )


@dataclass(frozen=True)
class WindowLayout:
    """The page layout vLLM gives attention layers with sliding windows (beside full-attention
    layers or alone) on one device (``vllm/v1/core/kv_cache_utils.py``, ``get_kv_cache_groups``).

    Layers of one kind (full attention, or one window size) share a spec.  One kind only (every
    layer windowed alike, as Mistral-7B-v0.1): one group of all layers.  Several kinds (Gemma 2's
    alternation): ``_get_kv_cache_groups_uniform_page_size`` groups them as for a hybrid model.
    A request of ``max_model_len`` tokens takes, in each group of its kind
    (``vllm/v1/kv_cache_interface.py``, ``max_memory_usage_bytes``):

    * full attention: cdiv(max_model_len, b) blocks (``FullAttentionSpec``);
    * a window w: cdiv(min(w − 1 + max_num_batched_tokens, max_model_len), b) + 1 blocks
      (``SlidingWindowSpec``: the chunked prefill's new tokens beside the window, and one block
      more since the window need not start on a block boundary).

    'Maximum concurrency' (``get_max_concurrency_for_kv_cache_config``) = blocks / the blocks
    of one request over all groups; 'GPU KV cache size' = blocks // groups · b.

    Attributes:
        kinds: (window or None for full attention, layers) per kind.
        layer_bytes: one token in one layer on the device (bytes); ``page`` = b · layer_bytes.
        block_size: b, tokens.
        group_size: layers per group (g).
        groups: the window (None: full attention) of each group.
        max_num_batched_tokens: the scheduler's tokens per step.
    """

    kinds: tuple[tuple[int | None, int], ...]
    layer_bytes: int
    block_size: int
    group_size: int
    groups: tuple[int | None, ...]
    max_num_batched_tokens: int

    @property
    def page(self) -> int:
        return self.block_size * self.layer_bytes

    def blocks(self, available: int) -> int:
        """Blocks of the pool: available // page // g (``get_num_blocks``)."""
        return max(available // self.page // self.group_size, 0)

    def token_budget(self, blocks: int) -> int:
        """vLLM's 'GPU KV cache size': blocks // groups · block_size tokens."""
        return blocks // len(self.groups) * self.block_size

    def group_blocks(self, window: int | None, max_model_len: int) -> int:
        """Blocks one request of ``max_model_len`` tokens takes in a group of ``window``."""
        if window is None:
            return _cdiv(max_model_len, self.block_size)
        return _cdiv(min(window - 1 + self.max_num_batched_tokens, max_model_len), self.block_size) + 1

    def blocks_per_request(self, max_model_len: int) -> int:
        """Blocks one request of ``max_model_len`` tokens takes over all groups."""
        return sum(self.group_blocks(w, max_model_len) for w in self.groups)

    def concurrency(self, blocks: int, max_model_len: int) -> Fraction:
        """vLLM's 'Maximum concurrency': blocks / blocks per request."""
        return Fraction(blocks, self.blocks_per_request(max_model_len))

    def request_bytes(self, max_model_len: int) -> int:
        """The memory one request of ``max_model_len`` tokens takes, padding layers included; vLLM
        refuses to start when it exceeds the available memory (``_max_memory_usage_bytes_from_groups``)."""
        return self.group_size * self.page * self.blocks_per_request(max_model_len)


def window_layout(
    spec, values: dict, heads_share: Fraction, kv_bytes: int, block_size: int, max_num_batched_tokens: int
) -> WindowLayout | None:
    """vLLM's layout for a model with sliding-window layers, or ``None`` when no layer has a window.

    Args:
        heads_share: the share of the KV heads one device keeps (max(1, h_kv / tp) / h_kv).
        kv_bytes: bytes of one cached element (the KV cache dtype).

    Raises:
        InputError: layers of different cache sizes per token (vLLM then scales block sizes to one
            page: not modelled), or K and V of a kind in different layer counts.
    """
    from symtrans.engine.architectures import build
    from symtrans.engine.evaluate import exact

    caching = [n for n in build(spec).nodes() if n.step.cache != 0]
    if all(n.step.cache_window is None for n in caching):
        return None
    layers: dict[int | None, set[int]] = {}
    per_layer: dict[int | None, Fraction] = {}
    for n in caching:
        w = None if n.step.cache_window is None else int(exact(n.step.cache_window, values))
        layers.setdefault(w, set()).add(int(exact(n.multiplicity, values)))
        per_layer[w] = per_layer.get(w, Fraction(0)) + int(exact(n.step.cache, values))
    if any(len(c) != 1 for c in layers.values()):
        raise InputError("--engine vllm: cached keys and values in different layer counts: not modelled")
    # full attention first, then the windows; a kind of no layers (N − N_w = 0) makes no group
    count = {w: min(c) for w, c in layers.items()}
    kinds = tuple((w, count[w]) for w in sorted(count, key=lambda w: -1 if w is None else w) if count[w] > 0)
    sizes = {per_layer[w] * kv_bytes * heads_share for w, _ in kinds}
    if len(sizes) != 1 or next(iter(sizes)).denominator != 1:
        raise InputError(
            "--engine vllm: windowed and full-attention layers of different cache sizes per token: vLLM's page "
            "unification is not modelled; give --engine none"
        )
    counts = [c for _, c in kinds]
    lo, hi = min(counts), max(counts)
    g = hi if len(kinds) == 1 or hi < lo * 1.5 else lo  # kv_cache_utils._get_kv_cache_groups_uniform_page_size
    groups = tuple(w for w, c in kinds for _ in range(_cdiv(c, g)))
    return WindowLayout(kinds, int(sizes.pop()), block_size, g, groups, max_num_batched_tokens)
