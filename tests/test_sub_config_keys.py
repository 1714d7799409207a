"""A misspelt key inside a sub-config (``vision_config.num_hiden_layers``) is refused in one
line naming its path, on the curated wrappers and on the generic path (issue 22).

Oracles, all transformers 5.24's own:
- the keys of each sub-config class: its ``__init__`` arguments, ``attribute_map`` and a
  default instance's ``to_dict()``, read here with ``inspect`` (``SUB_CONFIG_KEYS`` must equal
  them less PretrainedConfig's common keys);
- that a misspelt key is silently given the class default: the config class built from the
  misspelt sub-config has the default value of the real key, not the file's;
- that the published wrapper configs in tests/fixtures are not refused (their sources are in
  tests/test_hf_config.py's REFERENCE).
"""

from __future__ import annotations

import copy
import inspect
import json

import pytest
from conftest import CONFIG_DIR, FIXTURES, require

torch = require("torch")
transformers = require("transformers")

from symtrans.base.errors import InputError  # noqa: E402
from symtrans.catalog.hf_config import COMMON_KEYS, spec_from_config  # noqa: E402
from symtrans.catalog.sub_keys import SUB_CONFIG_KEYS, near_misses  # noqa: E402

transformers.logging.set_verbosity_error()


def _class_keys(cls) -> set[str]:
    keys = {
        n
        for n, p in inspect.signature(cls.__init__).parameters.items()
        if n != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    }
    keys |= set(getattr(cls, "attribute_map", None) or {})
    return keys | set(cls().to_dict())


@pytest.mark.parametrize("cls", sorted(SUB_CONFIG_KEYS))
def test_table_is_transformers_own(cls):
    assert SUB_CONFIG_KEYS[cls] == _class_keys(getattr(transformers, cls)) - COMMON_KEYS


def _load(name: str) -> dict:
    path = CONFIG_DIR / f"{name}.json"
    if not path.exists():
        path = FIXTURES / "gemma4" / f"{name}.json"
    return json.loads(path.read_text())


# (fixture, sub-config, the key it gives, a misspelling, the sub-config's transformers class)
TYPOS = [
    ("llava-1.5-7b", "vision_config", "num_hidden_layers", "num_hiden_layers", "CLIPVisionConfig"),
    ("llava-v1.6-mistral-7b", "vision_config", "intermediate_size", "intermediate_sise", "CLIPVisionConfig"),
    ("gemma-3-12b-it", "vision_config", "num_hidden_layers", "num_hidden_layer", "SiglipVisionConfig"),
    ("colpali-v1.2-merged-paligemma-448", "vision_config", "hidden_size", "hiden_size", "SiglipVisionConfig"),
    ("mistral-small-3.1-24b", "vision_config", "hidden_size", "Hidden_Size", "PixtralVisionConfig"),
    ("qwen2-vl-7b", "vision_config", "embed_dim", "embed_dims", "Qwen2VLVisionConfig"),
    ("qwen2.5-vl-7b", "vision_config", "depth", "deepth", "Qwen2_5_VLVisionConfig"),
    ("qwen3-vl-4b", "vision_config", "num_heads", "num_head", "Qwen3VLVisionConfig"),
    ("qwen3-vl-30b-a3b", "vision_config", "depth", "deepth", "Qwen3VLMoeVisionConfig"),
    ("qwen3.5-0.8b", "vision_config", "intermediate_size", "intermediate_sizes", "Qwen3_5VisionConfig"),
    ("qwen3.6-35b-a3b", "vision_config", "depth", "deepth", "Qwen3_5MoeVisionConfig"),
    ("llama-4-scout-17b-16e", "vision_config", "num_hidden_layers", "num_hiden_layers", "Llama4VisionConfig"),
    ("smolvlm-256m-instruct", "vision_config", "num_hidden_layers", "num_hiden_layers", "Idefics3VisionConfig"),
    ("smolvlm2-500m-video-instruct", "vision_config", "hidden_size", "hiden_size", "SmolVLMVisionConfig"),
    ("gemma-4-31b-it", "vision_config", "num_hidden_layers", "num_hiden_layers", "Gemma4VisionConfig"),
]


def _misspelt(name: str, sub: str, key: str, typo: str) -> tuple[dict, dict]:
    cfg = copy.deepcopy(_load(name))
    s = cfg[sub]
    s[typo] = s.pop(key)
    return cfg, s


@pytest.mark.parametrize(("name", "sub", "key", "typo", "cls"), TYPOS)
def test_curated_refuses_a_misspelt_sub_config_key(name, sub, key, typo, cls):
    cfg, s = _misspelt(name, sub, key, typo)
    # transformers builds the real key's default, not the file's value: the typo would change the count
    klass = getattr(transformers, cls)
    built = klass(**{k: v for k, v in s.items() if k not in ("model_type", "transformers_version")})
    assert getattr(built, key) == getattr(klass(), key)
    assert typo not in SUB_CONFIG_KEYS[cls]
    with pytest.raises(InputError) as e:
        spec_from_config(cfg, name)
    msg = str(e.value)
    assert "\n" not in msg
    assert f"{sub}.{typo}: unknown key; did you mean {key}?" in msg
    assert cls in msg


def test_gemma4_audio_config():
    audio = _load("gemma-4-e4b-audio-config")["audio_config"]
    base = {**_load("gemma-4-31b-it"), "audio_config": audio}  # Gemma 4's audio tower sits beside its vision tower
    spec_from_config(base, "gemma4-audio")
    bad = copy.deepcopy(base)
    bad["audio_config"]["conv_kernel_sise"] = bad["audio_config"].pop("conv_kernel_size")
    with pytest.raises(
        InputError, match=r"audio_config\.conv_kernel_sise: unknown key; did you mean conv_kernel_size\?"
    ):
        spec_from_config(bad, "gemma4-audio")


WRAPPER_FIXTURES = sorted(
    p.stem
    for p in CONFIG_DIR.glob("*.json")
    if any(k.endswith("_config") and isinstance(v, dict) for k, v in json.loads(p.read_text()).items())
)


@pytest.mark.parametrize("name", WRAPPER_FIXTURES)
def test_published_wrappers_are_not_refused(name):
    spec_from_config(_load(name), name)


def test_whole_words_more_are_not_a_typo():
    # keys of the published Qwen3.5 (mtp_num_hidden_layers) and Kimi-K2.5 (vt_hidden_size) configs
    near, rest = near_misses(
        ["mtp_num_hidden_layers", "vt_hidden_size", "num_hiden_layers", "HIDDEN_SIZE"],
        {"num_hidden_layers", "hidden_size"},
    )
    assert near == [("num_hiden_layers", "num_hidden_layers"), ("HIDDEN_SIZE", "hidden_size")]
    assert rest == ["mtp_num_hidden_layers", "vt_hidden_size"]


# --- the generic path: owlvit has no curated record; its default config is OwlViTConfig's own
def _owlvit() -> dict:
    from transformers import OwlViTConfig

    return OwlViTConfig().to_dict()


def test_generic_default_wrapper_is_counted():
    """No key of OwlViTConfig's own to_dict() is unknown; the total is OwlViTModel's meta count."""
    from symtrans.catalog.generic.model import count

    cfg = _owlvit()
    m = count(cfg, "owlvit")
    config = transformers.OwlViTConfig(
        **{k: v for k, v in cfg.items() if k not in ("model_type", "transformers_version")}
    )
    with torch.device("meta"):
        model = transformers.OwlViTModel._from_config(config)
    assert m.counted_class == "OwlViTModel"
    assert m.total == sum(p.numel() for p in model.parameters())
    assert not any("not known" in n for n in m.notes)


@pytest.mark.parametrize(
    ("sub", "key", "typo", "cls"),
    [
        ("vision_config", "num_hidden_layers", "num_hiden_layers", "OwlViTVisionConfig"),
        ("text_config", "intermediate_size", "intermediate_sise", "OwlViTTextConfig"),
    ],
)
def test_generic_refuses_a_misspelt_sub_config_key(sub, key, typo, cls):
    from symtrans.catalog.generic.model import count

    cfg = _owlvit()
    cfg[sub][typo] = cfg[sub].pop(key)
    klass = getattr(transformers, cls)
    assert getattr(klass(**{typo: 1}), key) == getattr(klass(), key)  # transformers keeps its default
    with pytest.raises(InputError) as e:
        count(cfg, "owlvit")
    msg = str(e.value)
    assert "\n" not in msg
    assert msg.startswith(f"{sub}.{typo}: unknown key; did you mean {key}? ({cls} has no such key")


def test_generic_notes_an_unknown_sub_config_key():
    from symtrans.catalog.generic.model import count

    cfg = _owlvit()
    cfg["vision_config"]["vt_hidden_size"] = 7  # whole words more than hidden_size: not a typo
    m = count(cfg, "owlvit")
    assert any("vision_config.vt_hidden_size not known to its sub-config's class" in n for n in m.notes)


def test_generic_refuses_a_typo_in_a_published_wrapper():
    """CLIP's published config through the generic path (as test_generic_curated counts it)."""
    from symtrans.catalog.generic.model import count

    cfg, _ = _misspelt("clip-vit-base-patch32", "vision_config", "num_hidden_layers", "num_hiden_layers")
    with pytest.raises(
        InputError, match=r"^vision_config\.num_hiden_layers: unknown key; did you mean num_hidden_layers\?"
    ):
        count(cfg, "clip", class_name="CLIPModel")
