"""The teaching articles' hand counts, as data (tracker issue 2).

Four Chinese teaching articles (``ARTICLES``: title and author as data) show how
people count Transformer parameters by hand.  Each hand count here is a ``Preset`` of
kind ``"hand count"`` whose Spec reproduces the article's figures exactly under the
article's stated assumptions, plus the article's line items (``ITEMS``: quote,
printed figure, the component of the Cost tree that holds it).  ``compare`` puts the
exact count under the article's assumptions next to the real implementation's
(``Preset.real`` with ``Preset.real_set``) and splits the gap into named terms
(attention biases, FFN biases, norms, vocabulary, ...).

Units: parameters (scalars of trainable tensors, tied tensors counted once).
Sources of the real figures: ``torch.nn.Transformer`` (torch 2.13) and Hugging Face
``transformers`` ``BertModel`` counted with ``sum(p.numel() for p in m.parameters())``
on the meta device.  Article 004 prints no count and its tables were images (lost in the
scrape): its preset holds the toy model its text states (V 23, d_model 6, one head with a
6 x 4 W_Q, 7 input words) and names the slips of its text.

``symtrans presets`` lists these under "hand counts"; ``symtrans params NAME`` prints
the item table and the comparison.  ``presets`` registers them; ``comparison`` compares them with
the real implementation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from symtrans.base.errors import UnknownNameError
from symtrans.catalog.preset import Preset
from symtrans.engine.roles import ATTENTION_BLOCKS, STACKS, Block, Role
from symtrans.engine.spec import Spec

if TYPE_CHECKING:  # pragma: no cover - SymPy is imported where the counts are built
    import sympy as sp

    from symtrans.engine.cost import Cost, Node

KIND = "hand count"


@dataclass(frozen=True)
class Article:
    """A teaching article a hand count reproduces (the texts are the seeds of tracker issue 2).

    Attributes:
        id: ``"000"``, ``"001"``, ``"003"``, ``"004"``.
        title: the title as the article prints it; ``title_en`` its English translation.
        author: the author as the article names them, or ``None`` when the text we have
            names none (the copies are scrapes of blog posts without a byline).
        language: the article's language (a report language of ``render.report.i18n``:
            ``symtrans report --lang auto`` writes its hand count's report in it).
        script: ``"Hans"`` or ``"Hant"`` (simplified or traditional characters).
    """

    id: str
    title: str
    title_en: str
    author: str | None
    language: str
    script: str

    def citation(self) -> str:
        """``article 000 「title」 (English title), author not named in the text``."""
        by = f"by {self.author}" if self.author else "author not named in the text"
        return f"article {self.id} 「{self.title}」 ({self.title_en}), {by}"


ARTICLES: dict[str, Article] = {
    a.id: a
    for a in (
        Article(
            "000",
            "自己动手计算Transformer模型参数，深入了解模型内部机制",
            "Compute the Transformer's parameters yourself, and understand the model's inner workings",
            None,
            "zh",
            "Hans",
        ),
        Article(
            "001",
            "大模型-Transformer（解碼器層）/ 大模型-參數",
            "Large models: the Transformer decoder layer; parameters",
            None,
            "zh",
            "Hant",
        ),
        Article("003", "Transformer模型参数解析", "Transformer parameters explained", None, "zh", "Hans"),
        Article(
            "004",
            "【AI大模型】一图胜千言，手撕图解 Transformer",
            "A picture is worth a thousand words: the Transformer worked out by hand",
            None,
            "zh",
            "Hans",
        ),
    )
}

_A000 = ARTICLES["000"].citation()
_A001 = ARTICLES["001"].citation()
_A003 = ARTICLES["003"].citation()
_A004 = ARTICLES["004"].citation()


# The article's model in each case: Transformer-base (Vaswani et al. 2017, Table 3) or BERT-base.
SPEC_000 = Spec(
    family="encoder-decoder",
    sizes=dict(d_model=512, d_ff=2048, h=8, N_enc=6, N_dec=6, V=32000, L=512),
    bias=False,
    norm="none",
    final_norm=False,
    positional="sinusoidal",
    share_embeddings=True,
    tie_output=True,
)
SPEC_001 = Spec(
    family="encoder-decoder",
    sizes=dict(d_model=512, d_ff=2048, h=8, N_enc=6, N_dec=6, V=32768, L=512),
    bias=False,
    norm="layernorm",
    final_norm=False,
    positional="sinusoidal",
    share_embeddings=False,
    tie_output=True,
)
SPEC_001_SHARED = SPEC_001.replace(share_embeddings=True)
SPEC_003 = Spec(
    family="encoder-only",
    sizes=dict(d_model=768, d_ff=3072, h=12, N=12, V=30000, L_max=512, L=512),
    bias=True,
    attention_bias=False,
    norm="layernorm",
    positional="learned",
    token_types=0,
    embedding_norm=False,
    pooler=True,
    pooler_bias=False,
)

# Article 004's toy model, as its text states it: 23 unique words, 6-wide embeddings, one head
# (「单头注意力」) whose W_Q, W_K, W_V are 6 x 4 (「我们假设权重矩阵中的列4」), so d_k = 4;
# 7 input words with sinusoidal positions; one encoder and one decoder layer; its normalization
# subtracts the row mean and divides by the row std (no learned gamma/beta: norm=none).
SPEC_004 = Spec(
    family="encoder-decoder",
    sizes=dict(d_model=6, d_ff=6, h=1, d_k=4, N_enc=1, N_dec=1, V=23, L=7),
    bias=False,
    norm="none",
    final_norm=False,
    positional="sinusoidal",
    share_embeddings=True,
    tie_output=True,
)


@dataclass(frozen=True)
class Item:
    """One figure an article prints, and where the Cost tree holds it.

    Attributes:
        id: the article and item, e.g. ``"001-5"``.
        quote: a short quote (001's mojibake, e.g. 參數(shù), is cleaned to 參數).
        printed: the figure as printed; ``value`` its number (parameters) and
            ``tolerance`` the rounding the printed digits allow (0 for exact figures).
        components: paths in the Cost tree whose parameters sum to the figure, e.g.
            ``"encoder/layer/ffn/ffn_up"``: Cost names found depth first, then
            optionally a Step label; a stack's Cost already includes its N layers.
        variant: ``--set NAME=VALUE`` changes for a figure the article counts aside
            (e.g. a learned positional table it does not add to its total).
        up_to: the unit of a figure printed rounded up (110M for 109,040,640: 1,000,000),
            0 for figures rounded to nearest; such a figure is "rounded up", not a slip.
    """

    id: str
    quote: str
    printed: str
    value: int
    components: tuple[str, ...]
    tolerance: int = 0
    variant: tuple[str, ...] = ()
    up_to: int = 0


ITEMS: dict[str, tuple[Item, ...]] = {
    "handcount-000-transformer-base": (
        Item(
            "000-1",
            "这意味着词嵌入层有 16,384,000 个可训练的参数",
            "16,384,000",
            16_384_000,
            ("embeddings",),
        ),
        Item(
            "000-2",
            "这意味着位置编码层将有262,144个可训练的参数 (learned variant, not added)",
            "262,144",
            262_144,
            ("encoder_embeddings",),
            variant=("positional=learned", "L_max=512"),
        ),
        Item("000-3", "整个Transformer编码器的参数总数大约为18,874,368个参数", "18,874,368", 18_874_368, ("encoder",)),
        Item("000-4", "整个解码器的参数总量约为 25,165,824 个参数", "25,165,824", 25_165_824, ("decoder",)),
        Item(
            "000-5",
            "输出层的线性变换包含大约 16.38 百万个参数 (tied, not added)",
            "16.38 百万",
            16_380_000,
            ("lm_head",),
            tolerance=5_000,
            variant=("tie_output=false",),
        ),
        Item(
            "000-6",
            "Transformer Base模型的总参数量大约为60M参数",
            "60M",
            60_000_000,
            ("embeddings", "encoder", "decoder", "lm_head"),
            tolerance=500_000,
        ),
    ),
    "handcount-001-transformer": (
        Item("001-1", "嵌入矩陣層參數數量：16777216", "16777216", 16_777_216, ("encoder_embeddings",)),
        Item("001-2", "多頭自注意力層參數數量：1048576", "1048576", 1_048_576, ("encoder/layer/self_attention",)),
        Item("001-3", "前饋網絡層參數數量：2097152", "2097152", 2_097_152, ("encoder/layer/ffn",)),
        Item(
            "001-4",
            "2次層歸一化：2048，2 x 2 x d_model",
            "2048",
            2_048,
            ("encoder/layer/norm",),
        ),
        Item("001-5", "單層編碼器層參數總數：3147776", "3147776", 3_147_776, ("encoder/layer",)),
        Item("001-6", "所有編碼器參數總數：18886656， 6 x 3147776", "18886656", 18_886_656, ("encoder",)),
        Item("001-7", "編碼器層參數總數：35663872", "35663872", 35_663_872, ("encoder_embeddings", "encoder")),
        Item(
            "001-8",
            "3次歸一化層：3072",
            "3072",
            3_072,
            ("decoder/layer/norm",),
        ),
        Item("001-9", "單層解碼器層參數總數：4197376", "4197376", 4_197_376, ("decoder/layer",)),
        Item("001-10", "所有解碼器層參數總數：25184256,6 x 4197376", "25184256", 25_184_256, ("decoder",)),
        Item(
            "001-11",
            "線性輸出層參數：d_model x V = 512 x 32768 = 16777216 (tied, not added)",
            "16777216",
            16_777_216,
            ("lm_head",),
            variant=("tie_output=false",),
        ),
        Item(
            "001-12", "解碼器層參數總數：41961472", "41961472", 41_961_472, ("decoder_embeddings", "decoder", "lm_head")
        ),
        Item(
            "001-13",
            "Transformer總參數 =0.0776B，77625344",
            "77625344",
            77_625_344,
            ("encoder_embeddings", "encoder", "decoder_embeddings", "decoder", "lm_head"),
        ),
    ),
    "handcount-003-bert-base": (
        Item(
            "003-1",
            "单个投影矩阵参数量768 × (64×12) = 768 × 768 = 589,824",
            "589,824",
            589_824,
            ("encoder/layer/self_attention/q_proj",),
        ),
        Item(
            "003-2",
            "三个矩阵总参数量589,824 × 3 = 1,769,472",
            "1,769,472",
            1_769_472,
            (
                "encoder/layer/self_attention/q_proj",
                "encoder/layer/self_attention/k_proj",
                "encoder/layer/self_attention/v_proj",
            ),
        ),
        Item(
            "003-3",
            "该矩阵维度为[d_head × num_heads, d_model]…包含589,824个参数",
            "589,824",
            589_824,
            ("encoder/layer/self_attention/o_proj",),
        ),
        Item(
            "003-4",
            "第一层扩展矩阵W1…参数量768 × 3072 = 2,359,296",
            "2,359,296",
            2_359_296,
            ("encoder/layer/ffn/ffn_up",),
        ),
        Item(
            "003-5",
            "b1 参数量3072, b2 参数量768",
            "3,072 + 768",
            3_840,
            ("encoder/layer/ffn/ffn_up.bias", "encoder/layer/ffn/ffn_down.bias"),
        ),
        Item(
            "003-6",
            "单个FFN层的总参数量约为4,721,856 (2,359,296×2 + 3,072 + 768)",
            "4,721,856",
            4_721_856,
            ("encoder/layer/ffn",),
        ),
        Item(
            "003-7",
            "单个LayerNorm参数量为1,536两个共3,072个参数",
            "3,072",
            3_072,
            ("encoder/layer/norm",),
        ),
        Item(
            "003-8",
            "vocab_size≈30,000…参数量30,000 × 768 = 23,040,000",
            "23,040,000",
            23_040_000,
            ("embeddings/token_embedding",),
        ),
        Item("003-9", "位置嵌入512 × 768 = 393,216", "393,216", 393_216, ("embeddings/position_embedding",)),
        Item("003-10", "单层总计7,084,800", "7,084,800", 7_084_800, ("encoder/layer",)),
        Item("003-11", "12层总计7,084,800 ×12 = 85,017,600", "85,017,600", 85_017_600, ("encoder",)),
        Item("003-12", "池化层768×768 = 589,824", "589,824", 589_824, ("pooler",)),
        Item(
            "003-13",
            "总参数量约110M",
            "110M",
            110_000_000,
            ("embeddings", "encoder", "pooler"),
            tolerance=500_000,
            up_to=1_000_000,  # its items sum to 109,040,640: 109.04M rounded up to whole millions
        ),
    ),
    # Article 004 prints shapes, not counts: each figure is the product of the shape its text states.
    "handcount-004-toy": (
        Item(
            "004-1",
            "词汇量为23…这里选用6嵌入向量的维度",
            "23 x 6 (embedding)",
            23 * 6,
            ("embeddings/token_embedding",),
        ),
        Item(
            "004-2",
            "我们假设权重矩阵中的列4",
            "6 x 4 (W_Q)",
            6 * 4,
            ("encoder/layer/self_attention/q_proj",),
        ),
        Item(
            "004-3",
            "我们可以使用相同的程序计算键和值矩阵，但权重矩阵中的值必须不同",
            "2 x 6 x 4 (W_K, W_V)",
            2 * 6 * 4,
            ("encoder/layer/self_attention/k_proj", "encoder/layer/self_attention/v_proj"),
        ),
        Item(
            "004-4",
            "确保线性权重矩阵的列数必须等于我们之前计算的矩阵（词嵌入+位置嵌入）矩阵的列数",
            "4 x 6 (W_O)",
            4 * 6,
            ("encoder/layer/self_attention/o_proj",),
        ),
    ),
}
ITEMS["handcount-001-shared"] = ()


def handcount_presets() -> list[Preset]:
    """The hand-count presets (kind ``"hand count"``), in article order.

    Each Spec reproduces the article's figures exactly under its stated assumptions;
    ``real``/``real_set`` name the real implementation to compare with.
    """
    return [
        Preset(
            "handcount-000-transformer-base",
            SPEC_000,
            _A000,
            "the article's hand count: 16,384,000 + 18,874,368 + 25,165,824 = 60,424,192",
            "60M",
            60e6,
            (
                "Assumptions: Transformer-base (Vaswani et al. 2017 Table 3): N = 6 + 6, d_model 512, d_ff 2048, h 8, "
                "d_k = d_v = 64; V = 32,000 (never printed: the formulas were lost in the scrape, 16,384,000 / 512 = 32,000); "
                "no biases; LayerNorm not counted (norm=none); one embedding shared by encoder input, decoder input and "
                "output projection (paper §3.4); sinusoidal positions (0 parameters).",
                "Its items sum exactly to 16,384,000 + 18,874,368 + 25,165,824 = 60,424,192, printed as ≈60M.",
                "Counted aside and not added: a learned 512 x 512 positional table, 262,144 (--set positional=learned "
                "adds one per stack: 60,948,480); the untied output layer 512 x 32,000 = 16,384,000, printed "
                "'16.38 百万' (--set tie_output=false: 76,808,192).",
                "Gap to the real implementation, torch.nn.Transformer(512, 8, 6, 6, 2048) + one shared 32,000 x 512 "
                "embedding = 60,524,544: +100,352 = attention biases 36,864 (6·4·512 + 6·8·512) + FFN biases 30,720 "
                "(12·(2,048 + 512)) + per-layer LayerNorms 30,720 (6·2·1,024 + 6·3·1,024) + final LayerNorms 2,048. "
                "The paper prints 65M with its ~37,000-token vocabulary (preset transformer-base: 63,084,544).",
                "Slip: 「在经典的Transformer模型（如BERT和GPT）中，通常使用12层编码器」: GPT's 12 blocks are decoder blocks.",
                "Slip: 「一些大型语言模型（例如GPT-3）使用词嵌入长度为1024或更高」: GPT-3 Small uses d_model 768 "
                "(Brown et al. 2020 Table 2.1: d_model 768 for GPT-3 Small, 125M parameters).",
            ),
            kind=KIND,
            real="transformer-base",
            real_set=("V=32000",),
        ),
        Preset(
            "handcount-001-transformer",
            SPEC_001,
            _A001,
            "the article's hand count: 35,663,872 + 41,961,472 = 77,625,344 (the embedding counted in encoder and decoder)",
            "0.0776B (77625344)",
            77_625_344,
            (
                "Assumptions (the article's table): V 32,768, N = 6 + 6, d_model 512, h 8, d_ff 2048, sinusoidal positions "
                "(period 10000), length 512; no biases (「原文…的注意力層中並沒有提及偏置參數」); LayerNorm γ and β counted, "
                "2 per encoder layer and 3 per decoder layer, no final norm.",
                "The total adds the embedding once in the encoder and again in the decoder, with the output projection "
                "tied to the decoder's: separate input embeddings (share_embeddings=false). Its own structure list says "
                "the decoder input embedding is 「與編碼器輸入嵌入層共享」; under that sharing the count is 60,848,128 "
                "(handcount-001-shared).",
                "Slips: 'W_q/W_k/W_v/W_o 參數數量（3 x d_model x d_model）' counts three matrices and adds W_o as "
                "投影參數 (the sum 1,048,576 is right); W2 is printed 'd_ff × d_model = 512 x 2048' (factors swapped, "
                "value right). The scrape is mojibake (參數(shù) for 參數); quotes here are cleaned.",
                "FLOPs: '2×77,600,000×512 = 79,411,200,000 FLOPs = 79.41 TFLOPs' has two slips: the product is "
                "79,462,400,000 (off by 51,200,000) and that is 79.5 GFLOP, not TFLOP (x1000), so the T4 time is "
                "1.75 ms, not 1.74 s. Exact forward matmul FLOPs at B = 1, L_src = L_tgt = 512 "
                "(symtrans flops handcount-001-transformer): 71,940,702,208 = encoder 22,548,578,304 + decoder "
                "32,212,254,720 + head 17,179,869,184. 2·P·L = 79,488,352,256 with the exact P charges the encoder's "
                "embedding lookup (17,179,869,184) and the LayerNorm parameters (31,457,280) as matmuls and omits the "
                "attention score and value products (9,663,676,416).",
                "Memory: '77,600,000 × 2（FP16）÷ 1024³ ≈ 155.2MB ≈ 0.145GB' mixes decimal MB and binary GB "
                "(155,200,000 B = 148.0 MiB = 0.145 GiB; exact 77,625,344 x 2 = 155,250,688 B); a 20-request batch "
                "at 1GB x 1.2 each is 24 GB, not ≈20GB.",
                "Worked example (8 dimensions, 3 tokens '<bos> i love'): its printed inputs do not give its printed "
                "outputs. Q = X·W_Q from its X after positions (row 0 [0.12, 1.34, -0.05, 1.27, -0.18, 1.41, -0.23, "
                "1.09]) and its W_Q has row 0 [2.24, 1.845, 2.506, 1.855, 2.476, 1.937, 2.454, 1.859], printed "
                "[3.02, 2.84, 2.07, ...]; e^2.0146 is 7.498, printed 7.598 (its sum 45.149 and 0.1683 carry the slip). "
                "Slip: its logits do not follow from its printed W (8 x 10) and b: its own written-out "
                "logits[0][0] = (-1.4823×0.2134) + ... + (0.8876×0.3987) + 0.05 is 1.6801, printed 1.6893; row 0 "
                "is [1.6801, 0.9961, 0.6094, 0.7896, 1.4736, 0.3616, 1.0523, 0.3469, 1.4578, 0.4191], printed "
                "[1.6893, 1.2457, 0.9872, 1.8321, 0.7654, 2.0146, ...]: its winner logits[0][5] is 0.3616, not "
                "2.0146; none of its 30 printed logits is X·W + b to 4 decimals (the closest, [0][0] and [2][1], are "
                "0.009 off), and all three rows of X·W + b peak at index 0 (<pad>), where it prints peaks at 5, 4 "
                "and 9.",
                "Gap to the real implementation, torch.nn.Transformer(512, 8, 6, 6, 2048) + two 32,768 x 512 input "
                "embeddings (the decoder's tied to the output) = 77,694,976: +69,632 = attention biases 36,864 "
                "(6·4·512 + 6·8·512) + FFN biases 30,720 (12·(2,048 + 512)) + final LayerNorms 2,048.",
            ),
            kind=KIND,
            real="transformer-base",
            real_set=("V=32768", "share_embeddings=false"),
        ),
        Preset(
            "handcount-001-shared",
            SPEC_001_SHARED,
            _A001,
            "the article's assumptions with its own sharing statement: 77,625,344 - 16,777,216 = 60,848,128",
            "not printed (its total 77,625,344 counts the shared matrix twice)",
            None,
            (
                "Same assumptions as handcount-001-transformer, with one 32,768 x 512 matrix shared by encoder input, "
                "decoder input and output projection, as the article states (decoder input embedding "
                "「與編碼器輸入嵌入層共享」, output projection 「與嵌入矩陣共享」) and the paper does (§3.4).",
                "Gap to the real implementation, torch.nn.Transformer(512, 8, 6, 6, 2048) + one shared 32,768 x 512 "
                "embedding = 60,917,760: +69,632 = attention biases 36,864 + FFN biases 30,720 + final LayerNorms 2,048.",
                # (no "% " before a letter: gettext catalogs read "% h", "% o" as printf placeholders)
                "Its claim that biases cost <1% (of 60,917,760) holds: 67,584 linear biases (+32,768 for an output "
                "bias) are 0.165%.",
            ),
            kind=KIND,
            real="transformer-base",
            real_set=("V=32768",),
        ),
        Preset(
            "handcount-003-bert-base",
            SPEC_003,
            _A003,
            "the article's hand count: 23,040,000 + 393,216 + 85,017,600 + 589,824 = 109,040,640",
            "110M",
            110e6,
            (
                "Assumptions: BERT-base, d_model 768, h 12, d_head 64, d_ff 3072, N 12, V ≈ 30,000, 512 learned "
                "positions, 2 LayerNorms per layer, FFN biases counted; no attention biases, no token-type embedding, "
                "no embedding LayerNorm, pooler weight without its bias (pooler_bias=false).",
                "Its items sum to 109,040,640 (109.0M), printed '约110M' (rounded up, not a slip). Slip: '单个FFN层的总参数量约为4,721,856' "
                "(2,359,296 × 2 + 3,072 + 768) is 4,722,432 (off by 576); its per-layer total 7,084,800 uses the "
                "right value.",
                "Gap to the real implementation, transformers BertModel (bert-base-uncased) = 109,482,240: +441,600 = "
                "vocabulary 30,522 vs 30,000 (522·768 = 400,896) + attention biases 36,864 (12·4·768) + token-type "
                "embedding 1,536 (2·768) + embedding LayerNorm 1,536 + pooler bias 768. BertModel(vocab_size=30000) "
                "= 109,081,344; the paper's 110M is closest to BertForPreTraining (110,106,428).",
                "Slip: a decoder's cross-attention has its own Q, K, V and O projections, not only 'an extra K, V pair'.",
            ),
            kind=KIND,
            real="bert-base",
        ),
        Preset(
            "handcount-004-toy",
            SPEC_004,
            _A004,
            "the toy model its text states: V 23, d_model 6, h 1 with d_k 4, one encoder and one decoder layer",
            "not printed (its matrices were images, lost in the scrape)",
            None,
            (
                "Assumptions (the article's text): 3 sentences with 23 unique words (「词汇量为23」), 6-wide "
                "embeddings (「这里选用6嵌入向量的维度」), input 'when you play the game of thrones' (7 words, pos "
                "0 to 6) with sinusoidal positions; one head (「单头注意力」) with W_Q, W_K, W_V of 6 x 4 "
                "(「权重矩阵中的列4」), so h = 1 and d_k = 4; W_O 4 x 6 back to the embedding width; no attention "
                "biases; its normalization has no learned gamma/beta (norm=none); the output layer is the "
                "embedding transposed (tied). Its feed-forward is one 6 x 6 linear layer with a bias and a ReLU; "
                "symtrans's FFN has W_1 and W_2 (d_ff = 6), so the totals hold two 6 x 6 matrices per layer and "
                "no FFN bias. Its flattened output layer (all rows x 6 -> 23) is not modelled.",
                "Positions: 「起始索引（POS）值为0，维度（d）为6，因此i是从0 到5」 reads i as the column index; in "
                "Vaswani et al. 2017 §3.5 i is the pair index (columns 2i and 2i+1), i = 0, 1, 2. Position 0 "
                "('when') is [0, 1, 0, 1, 0, 1] either way (symtrans walk --pe-table prints all 7 rows exactly).",
                "Slip: 「为了缩放结果矩阵，我们必须重用嵌入向量的维度，即6」 divides Q K^T by 6, the model width. "
                "Vaswani et al. 2017 eq. 1 divides by sqrt(d_k); its walk-through has one head (h = 1) whose "
                "W_Q has 4 columns, so d_k = 4 and sqrt(d_k) = 2: its scores are 3 times too small (6 / 2). "
                "Even d_k = d_model / h = 6 would give sqrt(6) = 2.449, not 6. Its caption 「将结果矩阵缩放至5维」 "
                "names yet another divisor, 5.",
                "Slip: 「该残差连接和归一化步骤的输出矩阵将作为解码器部分中…多头注意力机制之一中的Query和Key矩阵」 "
                "and 「而Value矩阵则来自解码器」: the encoder supplies K and V to the decoder's cross-attention and "
                "the decoder supplies Q (Vaswani et al. 2017 §3.2.3: 'the queries come from the previous decoder "
                "layer, and the memory keys and values come from the output of the encoder').",
                "Slip: 「Meta 的 LLaMA LLM 在编码器架构中使用了 32 个单头注意力」: LLaMA is decoder-only (Touvron "
                "et al. 2023: an autoregressive language model, a stack of Transformer decoder blocks); its 32 heads are right for "
                "LLaMA-7B (Table 2: d_model 4096, 32 heads, 32 layers).",
                "Slip: its input is 「when you play the game of thrones」 (7 words) in step 5 and 「when you play "
                "game of thrones」 (6 words) in step 11.",
                "Gap to the real implementation, torch.nn.Transformer(6, 1, 1, 1, 6) + one shared 23 x 6 embedding "
                "= 894: its one head is d_model / h = 6 wide, not 4 (12 attention matrices 6 x 6 instead of 6 x 4: +144), "
                "attention biases 4·6 + 8·6 = 72 (d_k 6), FFN biases 2·(6 + 6) = 24, per-layer LayerNorms "
                "2·12 + 3·12 = 60 and final LayerNorms 24.",
            ),
            kind=KIND,
            real="transformer-base",
            real_set=("d_model=6", "d_ff=6", "h=1", "N=1", "V=23", "L=7"),
            context_source="the 7 words of its input 'when you play the game of thrones' (pos 0 to 6)",
        ),
    ]


# -- evaluation ---------------------------------------------------------------------


def _locate(model: "Cost", path: str) -> sp.Expr:
    """Parameters of one instance of the component at ``path`` (see ``Item.components``).

    Raises:
        KeyError: if no Cost or Step has that path, or a part names no Block or Role.
    """
    import sympy as sp

    *inner, last = path.split("/")
    node = model
    for part in inner:
        block = Block(part)
        node = next((c for c in node.children if c.block == block), None)
        if node is None:
            raise UnknownNameError(f"no component {path!r} in the model")
    if last in Block._value2member_map_:
        found = [c.params_each for c in node.children if c.block == Block(last)]
    else:
        role, _, bias = last.partition(".")
        found = [s.params for s in node.steps if s.role == Role(role) and s.bias == (bias == "bias")]
    if not found:
        raise UnknownNameError(f"no component {path!r} in the model")
    return sp.Add(*found)


def _spec_with(spec: Spec, settings: tuple[str, ...]) -> Spec:
    from symtrans.catalog.settings import apply_settings

    return apply_settings(spec, list(settings))[0] if settings else spec


def item_value(spec: Spec, item: Item) -> int:
    """The exact count (parameters) the engine gives for ``item`` under ``spec``.

    Raises:
        KeyError: if a component path does not exist; ValueError for a bad variant.
    """
    import sympy as sp

    from symtrans.engine.architectures import build
    from symtrans.engine.evaluate import exact

    s = _spec_with(spec, item.variant)
    model = build(s)
    return exact(sp.Add(*[_locate(model, p) for p in item.components]), s.values)


def verdict(printed: int, exact_value: int, tolerance: int, up_to: int = 0) -> str:
    """``"exact"``, ``"rounded"`` (|difference| <= tolerance), ``"rounded up"`` (the exact
    value rounded up to a multiple of ``up_to`` is the printed figure) or ``"slip"``."""
    diff = exact_value - printed
    if diff == 0:
        return "exact"
    if abs(diff) <= tolerance:
        return "rounded"
    if up_to and printed % up_to == 0 and 0 < printed - exact_value < up_to:
        return "rounded up"
    return "slip"


# Gap terms: every Step of a Cost tree falls in one category (by its role and blocks).
def category(node: "Node") -> str:
    """The gap term a step belongs to, e.g. ``"attention biases"`` or ``"token embedding"``."""
    step = node.step
    if step.role in (Role.Q_NORM, Role.K_NORM):
        return "QK norms"
    if step.role == Role.NORM:
        if node.within(Block.MLM_HEAD):
            return "MLM head"
        if node.within(Block.LAYER, Block.SHARED_LAYER_WEIGHTS):
            return "per-layer norms"
        if node.within(*STACKS):
            return "final norms"
        return "embedding norm"
    if step.bias:
        if node.within(*ATTENTION_BLOCKS):
            return "attention biases"
        if node.within(Block.FFN, Block.MOE):
            return "FFN biases"
        if node.within(Block.POOLER):
            return "pooler bias"
        return "head biases"
    return _ROLE_TERMS.get(step.role, "weight matrices")


_ROLE_TERMS = {
    Role.TOKEN_EMBEDDING: "token embedding (V x d_model)",
    Role.POSITION_EMBEDDING: "learned positions",
    Role.TYPE_EMBEDDING: "token-type embedding",
}


def gap_terms(hand: Spec, real: Spec) -> list[tuple[str, int]]:
    """Nonzero differences real - hand in parameters, per ``category``, largest first.

    The terms sum to the difference of the two totals (every Step has a category).
    """
    import sympy as sp

    from symtrans.engine.architectures import build
    from symtrans.engine.evaluate import exact

    def by_category(spec: Spec) -> dict[str, int]:
        sums: dict[str, sp.Expr] = {}
        for node in build(spec).nodes():
            c = category(node)
            sums[c] = sums.get(c, sp.Integer(0)) + node.multiplicity * node.step.params
        return {c: exact(e, spec.values) for c, e in sums.items()}

    a, b = by_category(hand), by_category(real)
    diffs = [(c, b.get(c, 0) - a.get(c, 0)) for c in dict.fromkeys([*a, *b])]
    return sorted([d for d in diffs if d[1]], key=lambda d: -abs(d[1]))


# The article each hand-count preset reproduces.
ARTICLE_OF: dict[str, str] = {
    "handcount-000-transformer-base": "000",
    "handcount-001-transformer": "001",
    "handcount-001-shared": "001",
    "handcount-003-bert-base": "003",
    "handcount-004-toy": "004",
}


def article_of(preset_name: str) -> Article | None:
    """The article the hand-count preset ``preset_name`` reproduces, else None."""
    key = ARTICLE_OF.get(preset_name)
    return ARTICLES[key] if key is not None else None
