"""Issue 21's encoders and encoder-decoders (catalog/models/encoders.py, t5.py): the published
configs (tests/fixtures/configs, sources in SOURCES.md) built with the transformers class that
``symtrans model-types`` names, on the meta device, count exactly what symtrans counts.

Oracles: ``sum(p.numel())`` of the class built from the same file on the meta device (for the
T5 family with ``tie_word_embeddings: false``, plus the lm_head that from_pretrained keeps:
hf_reference.reference_total), and the published size where the model card states one.
"""

from __future__ import annotations

import pytest
from conftest import require

require("transformers")
from hf_reference import HF_CLASSES, reference_total  # noqa: E402

from symtrans.catalog.hf_config import CLASSES, spec_from_config  # noqa: E402
from symtrans.engine.architectures import build  # noqa: E402
from symtrans.engine.evaluate import exact  # noqa: E402

PUBLISHED = [
    # a fine-tune of camembert-base (TextToKids/CamemBERT-base-EmoTextToKids), as transformers 5.0
    # printed it: CamembertModel 110,621,952 = 12 x 7,087,872 (layers) + 24,580,608 (embeddings:
    # 32005 x 768 + 514 x 768 + 768 + 1536) + 590,592 (pooler); camembert-base's card: 110M
    ("camembert-base-emotexttokids", 110_621_952),
    # google/mt5-small: MT5ForConditionalGeneration 172,119,424 on the meta device (head tied to
    # `shared` in a fresh 5.x model) + its own lm_head 250,112 x 512 = 128,057,344 (untied in the
    # checkpoint) = 300,176,768; Xue et al. 2021 Table 1: mT5-Small 300M
    ("mt5-small", 300_176_768),
    # sentence-transformers/all-mpnet-base-v2 (microsoft/mpnet-base's shape): MPNetModel 109,486,464 =
    # 12 x 7,087,872 + 23,837,184 (embeddings: 30527 x 768 + 514 x 768 + 1536) + 384 (32 buckets x 12
    # heads) + 590,592 (pooler); the sentence-transformers card: 109M
    ("all-mpnet-base-v2", 109_486_464),
    # MoritzLaurer/ModernBERT-large-zeroshot-v2.0 (answerdotai/ModernBERT-large's shape): ModernBertModel
    # 394,781,696 = 50368 x 1024 (tokens) + 1024 (embedding norm, no bias) + 28 x (4 x 1024^2 + 3 x 1024 x
    # 2624 + 2 x 1024) - 1024 (layer 0 has no attention norm) + 1024 (final norm); the card of ModernBERT-large: 395M
    ("modernbert-large-zeroshot-v2.0", 394_781_696),
    # umt5-xxl as ComfyUI ships it (umt5_config_xxl.json): UMT5ForConditionalGeneration 11,922,382,848 on the
    # meta device (head tied in a fresh 5.x model) + its own lm_head 256,384 x 4,096 = 12,972,531,712; by
    # hand: 2 V d + 24 x (4 d^2 + 32 x 64 + d + 3 d x 10,240 + d) + d  (encoder)
    #          + 24 x (8 d^2 + 32 x 64 + 3 d + 3 d x 10,240) + d          (decoder: a bias table per layer)
    ("umt5-xxl-comfyui", 12_972_531_712),
    # facebook/wav2vec2-base-960h: Wav2Vec2Model 94,371,712, written out in tests/test_audio_types.py (with
    # masked_spec_embed); HuBERT-base as Higgs Audio v3's semantic model: the same less masked_spec_embed (768)
    ("wav2vec2-base-960h", 94_371_712),
    ("higgs-audio-v3-semantic-hubert", 94_370_944),
    # long-t5-tglobal-base's shape (pszemraj's book-summary fine-tune, reconstructed, SOURCES.md):
    # LongT5ForConditionalGeneration 222,913,152 on the meta device, the head tied (LongT5's checkpoints
    # store only shared.weight, transformers#47620) = google/t5-v1_1-base's 247,577,856 less its own lm_head
    # 32,128 x 768 (24,674,304) + the transient-global weights: 32 buckets x 12 heads (global bias table)
    # + 12 x 768 (a global-input RMSNorm per encoder layer): 247,577,856 - 24,674,304 + 384 + 9,216
    ("long-t5-tglobal-base-16384-book-summary", 222_913_152),
    # an LED config as a public conversion script writes it (SOURCES.md): LEDForConditionalGeneration 214,195,200
    # on the meta device = V d (shared, tied) + (16,384 + 1,024) d (two position tables) + 2 x 2 d (embedding
    # norms) + 6 x (7 (d^2 + d) + 2 d f + f + d + 4 d) (encoder: q, k, v, their global copies, output)
    # + 6 x (8 (d^2 + d) + 2 d f + f + d + 6 d) (decoder), d = 1,024, f = 2,048, V = 50,265
    ("led-16384-converted", 214_195_200),
]


@pytest.mark.parametrize(("name", "total"), PUBLISHED, ids=[n for n, _ in PUBLISHED])
def test_published_configs_count_as_transformers_builds_them(hf, read_fixture, name, total):
    cfg = read_fixture(name)
    mt = cfg["model_type"]
    assert CLASSES[mt][1] == HF_CLASSES[mt]  # the class model-types names is the class built
    model = hf.build(mt, cfg)
    assert reference_total(hf, mt, cfg, model) == total
    spec, notes = spec_from_config(cfg, name)
    assert exact(build(spec).params, spec.values) == total
    assert notes[0] == f"counted as transformers {CLASSES[mt][1]} (defaults from {CLASSES[mt][0]}, transformers 5.x)"
    assert not any("not known to" in n for n in notes), notes  # every key of the published file is known


def test_nomic_checkpoints_of_their_own_code_are_refused():
    """nomic-ai's nomic-embed configs carry the GPT-2-style keys of Nomic's own modeling code
    (auto_map); transformers 5.x's NomicBertConfig reads none of them (it would build its defaults),
    so symtrans refuses them in one line instead of counting the defaults."""
    from symtrans.catalog.hf_config import ConfigError

    cfg = {"model_type": "nomic_bert", "n_embd": 768, "n_layer": 12, "n_head": 12, "n_inner": 3072}
    with pytest.raises(ConfigError) as e:
        spec_from_config(cfg, "nomic-embed")
    assert "\n" not in str(e.value) and "n_embd, n_layer, n_head, n_inner" in str(e.value)
