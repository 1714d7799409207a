"""The report gallery: ``reports/<preset>.md``, ``.tex``, ``.html`` and ``.pdf`` for every preset.

    python -m symtrans.render.gallery            # regenerate (PDFs only where TeX is installed)
    python -m symtrans.render.gallery --check    # exit 1 listing stale or missing files

Markdown, LaTeX and HTML are compared as text; a PDF is only checked to exist (its bytes
depend on the TeX installation).  Reports are in English (``--lang en``).  A PDF is rebuilt when its ``.tex`` changed or is
newer than it, when it is missing, or with ``--force``; builds run in parallel and are reproducible
(``SOURCE_DATE_EPOCH=0``, ``FORCE_SOURCE_DATE=1``, ``\\pdftrailerid{}``).
Every file is written atomically, all in one transaction.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from symtrans.base.atomic import Transaction
from symtrans.catalog import presets
from symtrans.catalog.resolve import resolve
from symtrans.render.report import build_context, build_pdf, make_environment, render_context, tex_available
from symtrans.render.report.pdf import DEBIAN_PACKAGES, XETEX_PACKAGES

TEXT_FORMATS = (("md", "markdown"), ("tex", "latex"), ("html", "html"))


def default_dir() -> Path:
    """``reports/`` of the source checkout, or of the working directory if installed."""
    repo = Path(__file__).resolve().parents[2]
    if (repo / "pyproject.toml").exists():
        return repo / "reports"
    return Path.cwd() / "reports"


def expected(name: str, envs: dict | None = None) -> dict[str, str]:
    """The freshly rendered reports of preset ``name``: ``{"md": ..., "tex": ..., "html": ...}``.

    The same as ``report.render(resolve(name), fmt)``; ``envs`` maps a format to a
    reusable environment so that many presets compile the templates once.
    """
    context = build_context(resolve(name))
    envs = envs or {}
    return {ext: render_context(context, fmt, envs.get(fmt)) for ext, fmt in TEXT_FORMATS}


def environments() -> dict:
    """One environment per text format, for rendering many presets."""
    return {fmt: make_environment(fmt) for _, fmt in TEXT_FORMATS}


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def stale(directory: Path, names: list[str] | None = None, pdf: bool = True) -> list[str]:
    """Files of the gallery that are missing or differ from a fresh rendering."""
    out = []
    envs = environments()
    for name in names or list(presets.PRESETS):
        for ext, text in expected(name, envs).items():
            path = directory / f"{name}.{ext}"
            if _read(path) != text:
                out.append(str(path))
        if pdf and not (directory / f"{name}.pdf").exists():
            out.append(str(directory / f"{name}.pdf"))
    return out


def regenerate(
    directory: Path,
    names: list[str] | None = None,
    pdf: bool = True,
    force: bool = False,
    jobs: int | None = None,
    log=print,
) -> list[str]:
    """Write the gallery into ``directory``; returns the files that changed.

    Every changed file is written in one ``atomic.Transaction`` after all of them are
    built: a failed PDF build (or Ctrl-C) leaves the gallery as it was.
    """
    from symtrans.render.report.pdf import stop_all

    directory.mkdir(parents=True, exist_ok=True)
    out = Transaction()
    changed: list[str] = []
    envs = environments()

    def build(item: tuple[Path, str]) -> tuple[Path, bytes | None]:
        path, source = item
        data = build_pdf(source)
        old = path.read_bytes() if path.exists() else None
        return path, (data if old != data else None)

    # A PDF starts building (a TeX process) as soon as its LaTeX is rendered, while the
    # next presets render: the rendering and the TeX runs overlap on the cores.
    workers = jobs or os.cpu_count() or 1
    pool = ThreadPoolExecutor(max_workers=workers)
    futures = []
    try:
        for name in names or list(presets.PRESETS):
            texts = expected(name, envs)
            tex_changed = False
            for ext, text in texts.items():
                path = directory / f"{name}.{ext}"
                if _read(path) != text:
                    out.add(path, text)
                    changed.append(str(path))
                    tex_changed |= ext == "tex"
            pdf_path = directory / f"{name}.pdf"
            tex_path = directory / f"{name}.tex"
            if pdf and (
                force or tex_changed or not pdf_path.exists() or pdf_path.stat().st_mtime < tex_path.stat().st_mtime
            ):
                futures.append(pool.submit(build, (pdf_path, texts["tex"])))
        built = [f.result() for f in futures]
    except BaseException:  # a failed build, or Ctrl-C (which reaches the main thread only)
        for f in futures:
            f.cancel()
        while not all(f.done() for f in futures):  # end the builds running in the other threads
            stop_all()
            time.sleep(0.05)
        raise
    finally:
        pool.shutdown(wait=True)
    for path, data in built:
        if data is not None:
            out.add(path, data)
            changed.append(str(path))
    out.commit()
    for p in changed:
        log(f"wrote {p}")
    return changed


def main(argv: list[str] | None = None) -> int:
    """Regenerate or check the gallery; returns the exit status (0, 1 stale, 2 bad use)."""
    parser = argparse.ArgumentParser(prog="python -m symtrans.render.gallery", description=__doc__.split("\n\n")[0])
    parser.add_argument("presets", nargs="*", help="only these presets (default: all)")
    parser.add_argument("--check", action="store_true", help="list stale files and exit 1 if any")
    parser.add_argument("--dir", type=Path, default=None, help="gallery directory (default: reports/)")
    parser.add_argument("--no-pdf", action="store_true", help="skip PDFs")
    parser.add_argument("--force", action="store_true", help="rebuild every PDF")
    parser.add_argument("--jobs", type=int, default=None, help="parallel PDF builds (default: CPUs)")
    args = parser.parse_args(argv)
    unknown = [n for n in args.presets if n not in presets.PRESETS]
    if unknown:
        print(f"gallery: unknown preset {unknown[0]!r}; see 'symtrans presets'", file=sys.stderr)
        return 2
    directory = args.dir or default_dir()
    names = args.presets or None
    started = time.monotonic()
    if args.check:
        bad = stale(directory, names, pdf=not args.no_pdf)
        for p in bad:
            print(f"stale: {p}")
        if bad:
            print("gallery: regenerate with 'python -m symtrans.render.gallery'", file=sys.stderr)
            return 1
        print(f"gallery is up to date ({time.monotonic() - started:.1f} s)")
        return 0
    want_pdf = not args.no_pdf and tex_available()
    if not args.no_pdf and not want_pdf:
        print(
            "gallery: no TeX installation, PDFs skipped (install the Debian packages "
            f"{', '.join(DEBIAN_PACKAGES + XETEX_PACKAGES)}, fonts-noto-cjk)",
            file=sys.stderr,
        )
    try:
        changed = regenerate(directory, names, pdf=want_pdf, force=args.force, jobs=args.jobs)
    except (OSError, RuntimeError, ValueError) as e:
        print(f"gallery: {e}", file=sys.stderr)
        return 2
    print(f"gallery: {len(changed)} file(s) written in {time.monotonic() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
