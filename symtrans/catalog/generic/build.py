"""Build a transformers model class on PyTorch's meta device from a config dict.

The generic path's only contact with transformers: the config class of ``model_type``
(``CONFIG_MAPPING``), the model class chosen by the curated records' rule (causal LM,
then image-text-to-text, then seq2seq, then the bare ``AutoModel`` class), and
``_from_config`` under ``torch.device("meta")`` (shapes only, no memory, no weights).
``trust_remote_code`` is never passed and nothing is downloaded: a type transformers
lacks is refused, whatever ``auto_map`` says, so no code from a config's folder runs.

torch and transformers are imported here, on first use only: curated presets never pay.
"""

from __future__ import annotations

import contextlib
import io
from typing import Any

from symtrans.base.errors import EnvironmentProblem, InputError

EXTRA = "pip install 'symtrans[transformers]'"
# The order in which the model class is chosen (the curated records' rule).
MAPPINGS = (
    "MODEL_FOR_CAUSAL_LM_MAPPING_NAMES",
    "MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES",
    "MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES",
    "MODEL_MAPPING_NAMES",
)
# Keys of a config.json that are not the config class's arguments (or must not be
# passed): model_type is given separately, auto_map would name code in the folder.
_DROP = ("model_type", "auto_map", "transformers_version", "architectures", "_name_or_path")


class GenericUnavailable(EnvironmentProblem):
    """torch or transformers cannot be imported: the generic path is off."""


def modules():
    """``(torch, transformers)``, imported now.

    Raises:
        GenericUnavailable: naming the extra that installs them.
    """
    try:
        import torch
        import transformers
    except ImportError as e:
        raise GenericUnavailable(f"{e.name or 'transformers'} is not installed ({EXTRA})") from None
    transformers.logging.set_verbosity_error()  # config warnings would break the one-line contract
    return torch, transformers


def version() -> str:
    """transformers' version as ``X.Y`` (the notes name the modeling code counted)."""
    _, tf = modules()
    return ".".join(tf.__version__.split(".")[:2])


def known_type(model_type: str) -> bool:
    """Whether the installed transformers has a config class for ``model_type``."""
    modules()
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES

    return model_type in CONFIG_MAPPING_NAMES


def model_class_name(model_type: str) -> str | None:
    """The model class counted for ``model_type`` (the rule of ``MAPPINGS``), or None."""
    modules()
    from transformers.models.auto import modeling_auto

    for table in MAPPINGS:
        name = getattr(modeling_auto, table, {}).get(model_type)
        if name:
            return name if isinstance(name, str) else name[0]
    return None


def config_object(model_type: str, cfg: dict[str, Any]):
    """The transformers config of ``model_type`` built from ``cfg`` (a config.json dict).

    Raises:
        InputError: the config class refuses the values (its message, one line).
    """
    modules()
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    kwargs = {k: v for k, v in cfg.items() if k not in _DROP}
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            return CONFIG_MAPPING[model_type](**kwargs)
    except Exception as e:  # a config class validates in its own way (ValueError, TypeError, ...)
        raise InputError(f"transformers' {model_type} config refuses it: {_one_line(e)}") from None


def class_keys(model_type: str) -> tuple[str, frozenset[str]]:
    """The name of ``model_type``'s config class and the keys it takes: its ``__init__``'s
    named arguments, its ``attribute_map`` (aliases such as ``n_embd``) and the keys of its
    default ``to_dict()`` (keys set in ``__post_init__``)."""
    modules()
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    return config_class_keys(CONFIG_MAPPING[model_type])


def config_class_keys(cls) -> tuple[str, frozenset[str]]:
    """``class_keys`` of a transformers config class ``cls`` (a wrapper's sub-config class,
    such as ``CLIPVisionConfig``, as well as a model_type's own)."""
    import inspect

    keys = {
        n
        for n, p in inspect.signature(cls.__init__).parameters.items()
        if n != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    }
    keys |= set(getattr(cls, "attribute_map", None) or {})
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            keys |= set(cls().to_dict())
    except Exception:  # noqa: BLE001 - a class whose defaults do not validate: its arguments suffice
        pass
    return cls.__name__, frozenset(keys)


def build_meta(model_type: str, config, class_name: str | None = None):
    """The model class of ``model_type`` (or ``class_name``, a transformers class) built
    from ``config`` on the meta device.

    Returns:
        ``(model, class_name)``.

    Raises:
        InputError: no model class, or the class cannot be built from this config.
    """
    torch, transformers = modules()
    name = class_name or model_class_name(model_type)
    if name is None:
        raise InputError(f"transformers has no model class for model_type {model_type!r}")
    cls = getattr(transformers, name, None)
    if cls is None:
        raise InputError(f"transformers {transformers.__version__} cannot import {name}")
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            with _no_torch_init(), torch.device("meta"):
                model = cls._from_config(config)
    except Exception as e:  # the modeling code refuses the config: say so in one line
        raise InputError(f"transformers' {name} cannot be built from this config: {_one_line(e)}") from None
    return model, name


@contextlib.contextmanager
def _no_torch_init():
    """torch's initializers (``nn.init.*``) as no-ops while a model is built: on meta they
    only cost time (half of a build).  transformers' own ``init_weights`` still runs, so
    weights are tied as in a real load (``no_init_weights`` would skip the tying too)."""
    import sys

    from transformers import initialization as init

    saved = []
    for name in getattr(init, "TORCH_MODULES_TO_PATCH", ("torch.nn.init",)):
        module = sys.modules.get(name)
        for fn in init.TORCH_INIT_FUNCTIONS if module is not None else ():
            if hasattr(module, fn):
                saved.append((module, fn, getattr(module, fn)))
                setattr(module, fn, _keep)
    try:
        yield
    finally:
        for module, fn, original in saved:
            setattr(module, fn, original)


def _keep(tensor=None, *args, **kwargs):
    return tensor


def _one_line(e: BaseException) -> str:
    text = " ".join(str(e).split()) or type(e).__name__
    return text if len(text) <= 300 else text[:297] + "..."
