"""Adversarial files, streams and signals (issue 15: "Data loss", readers, Ctrl-C, messages).

Each example of the issue is a case here, with the generalisations of its fault class:

* ``-o`` at anything but a regular file the shell could write: a device node (``/dev/full``
  and ``/dev/null`` are re-made as nodes in the test directory, never touched in /dev), a
  FIFO (also with a reader waiting on it), a socket, a standard-stream alias (``/dev/stdout``,
  ``/dev/fd/1``, ``/proc/self/fd/1``, a symbolic link to one), a read-only file;
* a report whose chart cannot be written leaves the report and every other chart as they
  were; a chart file, or ``-o`` under another name, that is an input is refused;
* inputs that are not regular files (FIFO, ``/dev/zero``, a socket, a directory) are
  refused before a byte is read, for a config and for ``sweep --csv`` alike;
* config and CSV readers take UTF-8 with or without a byte-order mark and UTF-16 with one,
  and refuse anything else with the same sentence naming the file;
* Ctrl-C, SIGTERM and SIGHUP end any command with one line and 128 + the signal number;
  during a PDF build (a real latexmk run, killed mid-way) no TeX process and no
  ``symtrans-tex-*`` folder survives;
* control characters in paths and keys are shown escaped; Markdown (Jupyter's included)
  escapes names.

The right value of an accepted encoding is the count of the same file in plain UTF-8,
and the published count of GPT-2 small as transformers counts it: 124,439,808 with the
tied LM head (``GPT2LMHeadModel(GPT2Config()).num_parameters()``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
from conftest import (  # noqa: E402  (tests/adversarial/conftest.py)
    SENTINEL,
    Outcome,
    assert_one_line_exit_2,
    default_signals,
    device,
    fifo,
    hard_link,
    mode,
    run_subprocess,
    snapshot,
    symlink,
    unix_socket,
)

REPO = Path(__file__).resolve().parents[2]
GPT2 = json.dumps({"model_type": "gpt2"})  # every other key from GPT2Config's defaults: GPT-2 small
GPT2_PARAMS = 124_439_808
TO_STDOUT = "-o -"  # every refusal of a non-regular target points there


def _can_mknod() -> bool:
    d = tempfile.mkdtemp()
    try:
        os.mknod(os.path.join(d, "n"), 0o600 | stat.S_IFCHR, os.makedev(1, 3))
        return True
    except OSError:
        return False
    finally:
        shutil.rmtree(d, ignore_errors=True)


needs_mknod = pytest.mark.skipif(not _can_mknod(), reason="making device nodes needs root (CAP_MKNOD)")
needs_tex = pytest.mark.skipif(
    shutil.which("latexmk") is None and shutil.which("pdflatex") is None, reason="PDF tests need latexmk or pdflatex"
)

# ---------------------------------------------------------------------------------
# -o at something that is not a regular file the shell could write: (id, argv, files, needle)

OUTPUT_CASES = [
    ("o-fifo", ["params", "gpt2", "-o", "f"], {"f": fifo()}, "f: it is a FIFO"),
    ("o-fifo-report", ["report", "gpt2", "-o", "f.md"], {"f.md": fifo()}, "FIFO"),
    ("o-socket", ["params", "gpt2", "-o", "s"], {"s": unix_socket()}, "s: it is a socket"),
    ("o-symlink-to-fifo", ["params", "gpt2", "-o", "l"], {"f": fifo(), "l": symlink("f")}, "FIFO"),
    ("o-readonly", ["params", "gpt2", "-o", "prot.txt"], {"prot.txt": mode("prot\n", 0o444)}, "read-only"),
    ("o-readonly-0400", ["flops", "gpt2", "-o", "p"], {"p": mode("p\n", 0o400)}, "read-only"),
    ("o-readonly-via-link", ["params", "gpt2", "-o", "l"], {"p": mode("p\n", 0o444), "l": symlink("p")}, "read-only"),
    ("o-readonly-pdf", ["report", "gpt2", "-o", "r.pdf"], {"r.pdf": mode("%PDF old", 0o444)}, "read-only"),
    ("o-readonly-plot", ["plot", "gpt2", "-o", "c.png"], {"c.png": mode("old png", 0o444)}, "read-only"),
    (
        "o-readonly-sweep",
        ["sweep", "gpt2", "--grid", "N=12", "-o", "s.csv"],
        {"s.csv": mode("old", 0o444)},
        "read-only",
    ),
    ("o-link-to-dev-stdout", ["params", "gpt2", "-o", "l"], {"l": symlink("/dev/stdout")}, TO_STDOUT),
    ("o-link-to-proc-fd", ["params", "gpt2", "-o", "l"], {"l": symlink("/proc/self/fd/2")}, TO_STDOUT),
    ("o-dev-stderr", ["params", "gpt2", "-o", "/dev/stderr"], {}, TO_STDOUT),
    ("o-dev-fd-5", ["params", "gpt2", "-o", "/dev/fd/5"], {}, TO_STDOUT),
    # a report and its charts are one unit: nothing of it is written when one chart cannot be
    (
        "report-chart-is-a-directory",  # echo OLD > out.md; mkdir out-scaling.png; symtrans report gpt2 -o out.md
        ["report", "gpt2", "-o", "out.md"],
        {"out.md": "OLD\n", "out-scaling.png/": None},
        "out-scaling.png: it is a directory",
    ),
    (
        "report-chart-is-a-fifo",
        ["report", "gpt2", "-o", "out.md"],
        {"out.md": "OLD\n", "out-shares.png": fifo()},
        "out-shares.png: it is a FIFO",
    ),
    (
        "report-chart-is-read-only",
        ["report", "gpt2", "-o", "out.md"],
        {"out.md": "OLD\n", "out-shares.png": "old shares", "out-scaling.png": mode("old", 0o444)},
        "out-scaling.png: the file is read-only",
    ),
    (
        "report-chart-in-a-subdirectory",
        ["report", "gpt2", "-o", "sub/out.md"],
        {"sub/": None, "sub/out.md": "OLD\n", "sub/out-shares.png/": None},
        "sub/out-shares.png: it is a directory",
    ),
    (
        "report-chart-is-the-input",  # cp cfg.json r-shares.png; symtrans report r-shares.png -o r.md
        ["report", "r-shares.png", "-o", "r.md"],
        {"r-shares.png": GPT2},
        "r-shares.png: it is the input file",
    ),
    (
        "report-chart-is-the-input-by-a-link",
        ["report", "c.json", "-o", "r.md"],
        {"c.json": GPT2, "r-scaling.png": symlink("c.json")},
        "it is the input file",
    ),
    # -o is the input under another name
    ("o-hard-link-to-input", ["params", "c.json", "-o", "h"], {"c.json": GPT2, "h": hard_link("c.json")}, "input file"),
    ("o-symlink-to-input", ["params", "c.json", "-o", "l"], {"c.json": GPT2, "l": symlink("c.json")}, "input file"),
    ("o-is-diff-b", ["diff", "gpt2", "c.json", "-o", "c.json"], {"c.json": GPT2}, "input file"),
    ("o-is-diff-variant-file", ["diff", "c.json:N=2", "gpt2", "-o", "c.json"], {"c.json": GPT2}, "input file"),
    ("o-is-sweep-csv", ["sweep", "gpt2", "--csv", "g.csv", "-o", "g.csv"], {"g.csv": "N\n12\n"}, "input file"),
    ("o-is-config-in-dir", ["params", "m", "-o", "m/config.json"], {"m/": None, "m/config.json": GPT2}, "input file"),
    (
        "o-is-dir-config-by-path",
        ["params", "m/", "-o", "./m/config.json"],
        {"m/": None, "m/config.json": GPT2},
        "input",
    ),
]


# A path the kernel would take as a directory (issue 27.1): "-o existing.txt/." exited 0 and
# replaced existing.txt, because the path was normalised before it was opened; open() of the
# path itself fails with ENOTDIR, as the shell's '>' does.  Every writer, one check.
_DIR_SUFFIXED = ["existing_file/.", "existing_file//.", "d/../existing_file/.", "existing_file/", "./existing_file/.."]
_WRITERS = [
    ["params", "gpt2"],
    ["flops", "gpt2"],
    ["memory", "gpt2"],
    ["report", "gpt2"],
    ["report", "gpt2", "--format", "html"],
    ["sweep", "gpt2", "--grid", "N=12"],
    ["diff", "gpt2", "gpt2-medium"],
    ["walk", "gpt2"],
    ["identities"],
    ["plot", "gpt2"],
]
OUTPUT_CASES += [
    (f"o-dir-suffix-{' '.join(w[:1] + w[2:])}-{path}", [*w, "-o", path], {"d/": None}, "cannot write")
    for w in _WRITERS
    for path in (_DIR_SUFFIXED if w == ["params", "gpt2"] else _DIR_SUFFIXED[:1])
]
OUTPUT_CASES += [
    # an extension naming another format (issue 25.11): report -o report.docx wrote Markdown there
    ("report-o-docx", ["report", "gpt2", "-o", "report.docx"], {}, "-o report.docx: the extension .docx is not"),
    ("report-o-png", ["report", "gpt2", "--no-charts", "-o", "r.png"], {}, "give --format"),
    ("report-o-json", ["report", "gpt2", "-o", "r.JSON"], {}, "extension .json"),
    ("o-missing-dir-then-dotdot", ["params", "gpt2", "-o", "nodir/../existing_file"], {}, "does not exist"),
    # A symbolic link at the final component is never followed (issue 27.2): a chart name planted
    # as a link to another file rewrote that file (62,551 bytes changed).
    (
        "report-chart-is-a-link-to-a-file",
        ["report", "gpt2", "-o", "r.md"],
        {"r.md": "OLD\n", "victim.txt": "victim\n", "r-shares.png": symlink("victim.txt")},
        "r-shares.png: it is a symbolic link",
    ),
    (
        "report-tex-chart-is-a-link-to-a-file",
        ["report", "gpt2", "-o", "r.tex"],
        {"r.tex": "OLD\n", "victim.txt": "victim\n", "r-scaling.pdf": symlink("victim.txt")},
        "symbolic link",
    ),
    ("o-link-to-a-file", ["params", "gpt2", "-o", "l"], {"victim.txt": "victim\n", "l": symlink("victim.txt")}, "link"),
    ("o-dangling-link", ["params", "gpt2", "-o", "l"], {"l": symlink("nowhere.txt")}, "symbolic link"),
    ("plot-o-link", ["plot", "gpt2", "-o", "c.png"], {"v.png": "v", "c.png": symlink("v.png")}, "symbolic link"),
]


@pytest.mark.parametrize("name,argv,files,needle", OUTPUT_CASES, ids=[c[0] for c in OUTPUT_CASES])
def test_output_that_is_not_a_writable_regular_file_is_refused(reject, name, argv, files, needle):
    o = reject(argv, files=files, needle=needle)
    if needle in (TO_STDOUT,) or "FIFO" in needle or "socket" in needle:
        assert TO_STDOUT in o.err


@needs_mknod
@pytest.mark.parametrize(
    "name,major,minor",
    [("full", 1, 7), ("null", 1, 3), ("zero", 1, 5)],
    ids=["dev-full", "dev-null", "dev-zero"],
)
def test_device_node_as_output_is_left_a_device(reject, name, major, minor):
    # symtrans params gpt2 -o /dev/full turned the node into a regular file (run as root);
    # the same node made here (mknod -m666 d c 1 7) must still be that node afterwards.
    reject(["params", "gpt2", "-o", name], files={name: device(major, minor)}, needle="character device")


@needs_mknod
def test_device_node_named_by_a_link_and_in_a_report(reject):
    reject(
        ["report", "gpt2", "-o", "r.md"],
        files={"d": device(1, 7), "r-shares.png": symlink("d"), "r.md": "OLD\n"},
        needle="r-shares.png: it is a character device",
    )


# ---------------------------------------------------------------------------------
# standard streams: -o /dev/stdout must not replace what the shell appends to


@pytest.mark.parametrize("alias", ["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"])
def test_stdout_alias_on_an_appended_file_keeps_its_contents(tmp_path, alias):
    # printf 'old\n' > log; symtrans params gpt2 -o /dev/stdout >> log  lost "old".
    log = tmp_path / "log"
    log.write_bytes(b"old\n")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    with open(log, "ab") as out:
        p = subprocess.run(
            [sys.executable, "-m", "symtrans", "params", "gpt2", "-o", alias],
            stdout=out,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=default_signals,
            env=env,
            cwd=tmp_path,
            timeout=120,
        )
    assert_one_line_exit_2(Outcome(p.returncode, "", p.stderr), TO_STDOUT)
    assert log.read_bytes() == b"old\n"
    assert sorted(os.listdir(tmp_path)) == ["log"]


def test_stdout_alias_on_a_pipe_is_one_clear_line(tmp_path):
    # On a pipe the same command failed with "cannot write /proc/NNN/fd/pipe:[...]".
    o = run_subprocess(["params", "gpt2", "-o", "/dev/stdout"], tmp_path)
    assert_one_line_exit_2(o, "cannot write /dev/stdout: it is an alias of an open file descriptor")
    assert "pipe:[" not in o.err and TO_STDOUT in o.err


def test_dash_writes_standard_output(tmp_path):
    # The way out the messages point to: -o - is standard output, exactly as without -o.
    plain = run_subprocess(["params", "gpt2", "--format", "json"], tmp_path)
    dash = run_subprocess(["params", "gpt2", "--format", "json", "-o", "-"], tmp_path)
    assert dash.code == plain.code == 0 and dash.err == ""
    assert json.loads(dash.out)["total"] == GPT2_PARAMS
    assert dash.out == plain.out
    assert os.listdir(tmp_path) == []


def test_fifo_with_a_waiting_reader_is_not_replaced(tmp_path):
    # A FIFO with a reader waiting on it was replaced by a regular file: the reader never
    # got the data. Now the FIFO stays a FIFO, the command writes nothing, and the reader
    # is still waiting (released here by opening the FIFO for writing and closing it).
    f = tmp_path / "f"
    os.mkfifo(f)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(f.read_bytes()), daemon=True)
    reader.start()
    o = run_subprocess(["params", "gpt2", "-o", "f"], tmp_path)
    assert_one_line_exit_2(o, "f: it is a FIFO")
    assert stat.S_ISFIFO(os.lstat(f).st_mode)
    assert reader.is_alive()  # nobody opened the FIFO for writing
    with open(f, "wb"):
        pass
    reader.join(10)
    assert got == [b""]


# ---------------------------------------------------------------------------------
# inputs that are not regular files: refused at once, for every reader

INPUT_CASES = [
    # (id, argv, files, needle); all run as real processes: a blocking read would time out there
    ("config-fifo", ["params", "c.json", "-o", "out.md"], {"c.json": fifo()}, "c.json: is a FIFO (named pipe)"),
    ("config-fifo-in-dir", ["params", "m", "-o", "out.md"], {"m/": None, "m/config.json": fifo()}, "FIFO"),
    ("config-fifo-diff-b", ["diff", "gpt2", "c.json"], {"c.json": fifo()}, "c.json: is a FIFO"),
    ("config-fifo-report", ["report", "c.json", "-o", "r.pdf"], {"c.json": fifo()}, "FIFO"),
    ("config-socket", ["params", "c.json"], {"c.json": unix_socket()}, "c.json: is a socket"),
    ("config-link-to-fifo", ["params", "c.json"], {"f": fifo(), "c.json": symlink("f")}, "c.json: is a FIFO"),
    ("config-dev-zero", ["params", "/dev/zero"], {}, "/dev/zero: is a character device, not a regular file"),
    ("config-dev-stdin", ["params", "/dev/stdin"], {}, "/dev/stdin"),
    ("csv-fifo", ["sweep", "gpt2", "--csv", "c.csv", "-o", "s.csv"], {"c.csv": fifo()}, "c.csv: is a FIFO"),
    ("csv-dev-zero", ["sweep", "gpt2", "--csv", "/dev/zero"], {}, "/dev/zero: is a character device"),
    ("csv-directory", ["sweep", "gpt2", "--csv", "d"], {"d/": None}, "d: is a directory"),
    ("csv-socket", ["sweep", "gpt2", "--csv", "s"], {"s": unix_socket()}, "s: is a socket"),
    ("csv-missing", ["sweep", "gpt2", "--csv", "absent.csv"], {}, "absent.csv: no such file"),
]


@pytest.mark.parametrize("name,argv,files,needle", INPUT_CASES, ids=[c[0] for c in INPUT_CASES])
def test_input_that_is_not_a_regular_file_is_refused_at_once(reject, name, argv, files, needle):
    reject(argv, files=files, needle=needle, inprocess=False)


@needs_mknod
def test_device_node_as_config_and_csv(reject):
    reject(["sweep", "gpt2", "--csv", "z"], files={"z": device(1, 5)}, needle="z: is a character device")


def test_csv_larger_than_the_cap(reject, tmp_path):
    # A sparse 65 MiB file: past the 64 MiB cap of a CSV of configurations; refused by size,
    # before it is read.
    big = tmp_path / "big.csv"
    with open(big, "wb") as f:
        f.write(b"N\n")
        f.truncate(65 * 2**20)
    reject(["sweep", "gpt2", "--csv", str(big)], needle="too large for a CSV file")


# ---------------------------------------------------------------------------------
# encodings: UTF-8 with or without a byte-order mark, UTF-16 with one; one message otherwise


def _encodings(text: str) -> dict[str, bytes]:
    return {
        "utf-8": text.encode("utf-8"),
        "utf-8-bom": b"\xef\xbb\xbf" + text.encode("utf-8"),
        "utf-16-le-bom": b"\xff\xfe" + text.encode("utf-16-le"),
        "utf-16-be-bom": b"\xfe\xff" + text.encode("utf-16-be"),
    }


@pytest.mark.parametrize("encoding", list(_encodings("")))
def test_config_in_every_accepted_encoding_counts_the_same(tmp_path, capsys, encoding):
    from symtrans.cli.main import main

    (tmp_path / "c.json").write_bytes(_encodings(json.dumps({"model_type": "gpt2", "n_layer": 12}))[encoding])
    assert main(["params", str(tmp_path / "c.json"), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["total"] == GPT2_PARAMS


@pytest.mark.parametrize("encoding", list(_encodings("")))
def test_csv_in_every_accepted_encoding_reads_the_same(tmp_path, capsys, encoding):
    # A UTF-8 CSV with a byte-order mark reported an unknown column '\ufeffd_model'; a
    # UTF-16 one printed a bare codec error.
    from symtrans.cli.main import main

    (tmp_path / "c.csv").write_bytes(_encodings("d_model,N\r\n768,12\r\n1536,24\r\n")[encoding])
    assert main(["sweep", "gpt2", "--csv", str(tmp_path / "c.csv"), "--quantity", "params"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "d_model,N,params"
    assert out[1] == f"768,12,{GPT2_PARAMS}"
    assert len(out) == 3


BAD_TEXT = [
    # (id, bytes of a file holding {"model_type": "gpt2"} or "N\n12\n" in a wrong encoding)
    ("latin-1", lambda t: t.encode("latin-1") + b"\xe9"),
    ("utf-16-without-bom", lambda t: t.encode("utf-16-le")),
    ("utf-32-with-bom", lambda t: t.encode("utf-32")),
    ("utf-16-odd-length", lambda t: b"\xff\xfe" + t.encode("utf-16-le") + b"x"),
    ("utf-8-encoded-surrogate", lambda t: t.encode("utf-8") + b"\xed\xa0\x80"),
    ("utf-16-lone-surrogate", lambda t: b"\xff\xfe" + t.encode("utf-16-le") + b"\x00\xd8"),
]


@pytest.mark.parametrize("name,make", BAD_TEXT, ids=[c[0] for c in BAD_TEXT])
def test_config_and_csv_in_another_encoding_get_the_same_message(reject, tmp_path, name, make):
    cfg = reject(["params", "c.json", "-o", "out.md"], files={"c.json": make('{"model_type": "gpt2"}')})
    assert_one_line_exit_2(cfg, "c.json: is not UTF-8 or UTF-16 text")
    (tmp_path / "c.csv").write_bytes(make("N\n12\n"))
    from symtrans.analysis.sweep import read_csv_file

    with pytest.raises(ValueError) as e:
        read_csv_file(str(tmp_path / "c.csv"))
    csv_msg = str(e.value)
    cfg_msg = cfg.err.strip().removeprefix("symtrans: error: ")
    assert csv_msg.startswith(f"{tmp_path / 'c.csv'}: is not UTF-8 or UTF-16 text")

    def sentence(msg: str, path: str, kind: str) -> str:
        """The message without the file's name, its kind and the closing "(byte ... at offset N)"."""
        return msg.rsplit(" (", 1)[0].replace(path, "F", 1).replace(kind, "X")

    assert sentence(cfg_msg, "c.json", "a config.json") == sentence(csv_msg, str(tmp_path / "c.csv"), "a CSV file")


@pytest.mark.parametrize(
    "content,needle",
    [
        ('{"model_type": "gpt2", "\\ud800": 1}', r"c.json: key '\ud800' holds a lone surrogate"),
        ('{"model_type": "gpt2", "\\udfff\\u001b": 1}', r"c.json: key '\udfff\x1b' holds a lone surrogate"),
        ('{"model_type": "gpt2", "rope_scaling": {"\\ud83d": 1}}', r"key 'rope_scaling.\ud83d'"),
        ('{"model_type": "gpt2", "architectures": ["\\udc00"]}', r"the value of key 'architectures.0'"),
        ('{"model_type": "\\ud800gpt2"}', r"the value of key 'model_type'"),
    ],
    ids=["key", "key-with-escape", "nested-key", "list-value", "model-type"],
)
def test_lone_surrogate_names_the_file_and_the_key(reject, content, needle):
    # It gave a codec error that named neither the file nor the key.
    reject(["params", "c.json"], files={"c.json": content}, needle=needle)


def test_a_surrogate_pair_is_a_character(tmp_path, capsys):
    # "\ud83d\ude00" is one character (U+1F600), not two lone halves: accepted as any unknown key.
    from symtrans.cli.main import main

    (tmp_path / "c.json").write_text('{"model_type": "gpt2", "\\ud83d\\ude00": 1}', encoding="utf-8")
    assert main(["params", str(tmp_path / "c.json")]) == 0
    assert "\U0001f600" in capsys.readouterr().out


# ---------------------------------------------------------------------------------
# names: control characters escaped in messages and text; a 253-byte -o name works

ESC = "\x1b[31m"


def test_escape_sequence_in_a_path_is_shown_escaped(reject):
    o = reject(["params", f"{ESC}x.json"], needle=r"\x1b[31mx.json: no such file")
    assert "\x1b" not in o.err


def test_escape_sequence_in_an_output_path_is_shown_escaped(reject):
    o = reject(["params", "gpt2", "-o", f"no/{ESC}/x.md"], needle=r"no/\x1b[31m/x.md")
    assert "\x1b" not in o.err


def test_bidi_override_and_c1_controls_in_a_path_are_shown_escaped(reject):
    o = reject(["params", "a\u202eb\x9bc.json"], needle=r"a\u202eb\x9bc.json: no such file")
    assert "\u202e" not in o.err and "\x9b" not in o.err


def test_escape_sequence_in_a_config_key_reaches_no_terminal(tmp_path, capsys):
    from symtrans.cli.main import main

    (tmp_path / "c.json").write_text(json.dumps({"model_type": "gpt2", f"{ESC}red": 1}), encoding="utf-8")
    assert main(["params", str(tmp_path / "c.json")]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and r"key \x1b[31mred not known" in out


def test_escape_sequence_in_a_config_file_name_reaches_no_terminal(tmp_path, capsys):
    from symtrans.cli.main import main

    (tmp_path / f"{ESC}m.json").write_text(GPT2, encoding="utf-8")
    for fmt in ("text", "json"):
        assert main(["params", str(tmp_path / f"{ESC}m.json"), "--format", fmt]) == 0
        out = capsys.readouterr().out
        assert "\x1b" not in out
    assert json.loads(out)["model"] == f"{ESC}m"  # JSON keeps the name, escaped by JSON itself


@pytest.mark.parametrize("length", [253, 255])
def test_long_output_name_works(tmp_path, capsys, length):
    # A 253-character -o name failed because the temporary name was longer.
    from symtrans.cli.main import main

    name = "a" * (length - 3) + ".md"
    assert main(["report", "gpt2", "--no-charts", "-o", str(tmp_path / name)]) == 0
    assert os.listdir(tmp_path) == [name]
    assert (tmp_path / name).read_text(encoding="utf-8").startswith("# gpt2")


def test_long_output_name_whose_chart_names_do_not_fit(reject):
    # The report fits the file system's 255 bytes, its chart names do not: one line, and
    # nothing written (not the report either).
    name = "b" * 245 + ".md"
    reject(["report", "gpt2", "-o", name], needle="File name too long")


# ---------------------------------------------------------------------------------
# Markdown writers escape names: Jupyter's, diff's, the walk's

HOSTILE = "<img src=x onerror=alert(1)>"
UNESCAPED_TAG = re.compile(r"(?<!\\)<img")  # a tag Markdown would pass through as HTML


def test_jupyter_markdown_escapes_the_model_name(tmp_path):
    import symtrans

    path = tmp_path / f"{HOSTILE}.json"
    path.write_text(GPT2, encoding="utf-8")
    md = symtrans.model(str(path))._repr_markdown_()
    heading = md.splitlines()[0]
    assert not UNESCAPED_TAG.search(md)
    assert heading == r"### \<img src=x onerror=alert(1)\>: 124,439,808 parameters (124.4M)"


def test_jupyter_latex_escapes_the_model_name(tmp_path):
    import symtrans

    path = tmp_path / "x}$\\input{y}.json"
    path.write_text(GPT2, encoding="utf-8")
    tex = symtrans.model(str(path))._repr_latex_()
    assert "\\input{y}" not in tex and "x}$" not in tex


def test_diff_markdown_escapes_the_labels(tmp_path, capsys):
    from symtrans.cli.main import main

    path = tmp_path / f"{HOSTILE}.json"
    path.write_text(GPT2, encoding="utf-8")
    assert main(["diff", "gpt2", str(path), "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    assert not UNESCAPED_TAG.search(out) and r"\<img src=x onerror=alert(1)\>" in out


def test_walk_markdown_escapes_the_model_name(tmp_path, capsys):
    from symtrans.cli.main import main

    path = tmp_path / f"{HOSTILE}.json"
    path.write_text(GPT2, encoding="utf-8")
    assert main(["walk", str(path), "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    assert not UNESCAPED_TAG.search(out) and out.startswith(r"\<img src=x onerror=alert(1)\>: shape walk")


# ---------------------------------------------------------------------------------
# Ctrl-C, SIGTERM, SIGHUP: one line, status 128 + N, nothing written

ALL_COMMANDS = [
    ["presets"],
    ["params", "gpt2"],
    ["flops", "gpt2"],
    ["flops", "gpt2", "--mode", "training"],
    ["memory", "gpt2"],
    ["time", "gpt2", "--accelerator", "h100-sxm"],
    ["report", "gpt2"],
    ["walk", "gpt2"],
    ["solve", "gpt2", "--for", "N", "--params", "1e9"],
    ["plan", "--compute", "1e21"],
    ["sweep", "gpt2", "--grid", "N=1:4"],
    ["diff", "gpt2", "gpt2-medium"],
    ["identities"],
]


@pytest.mark.parametrize("argv", ALL_COMMANDS, ids=[a[0] + str(i) for i, a in enumerate(ALL_COMMANDS)])
def test_ctrl_c_in_any_command_is_one_line_and_status_130(tmp_path, capsys, monkeypatch, argv):
    # Ctrl-C in any command printed a KeyboardInterrupt traceback. Here it arrives when the
    # command hands over its output: after all the work, before anything is written.
    import symtrans.cli.main as cli

    def interrupted(args, data):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "_emit", interrupted)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "out.txt").write_bytes(SENTINEL)
    code = cli.main([*argv, "-o", "out.txt"])
    cap = capsys.readouterr()
    assert code == 130 and cap.out == ""
    assert cap.err == "symtrans: interrupted (Ctrl-C); no output file was left half-written\n"
    assert os.listdir(tmp_path) == ["out.txt"] and (tmp_path / "out.txt").read_bytes() == SENTINEL


_SELF_SIGNAL = """
import os, signal, sys, time
import symtrans.cli.main as cli
def emit(args, data):  # the signal arrives from outside while the command runs
    os.kill(os.getpid(), getattr(signal, sys.argv[1]))
    time.sleep(30)
    raise AssertionError("the signal did not stop the command")
cli._emit = emit
sys.exit(cli.main(sys.argv[2:]))
"""


_SIGNAL_MID_SWEEP = """
import os, signal, sys, time
import symtrans.analysis.sweep as sw
sw.grid_batches.__defaults__ = (1000,)  # several batches: the signal comes after the first ones are written
real, calls = sw.Sweeper.run, []
def run(self, *a, **k):
    calls.append(1)
    if len(calls) == 3:  # the stream's temporary file holds two batches by now
        os.kill(os.getpid(), getattr(signal, sys.argv[1]))
        time.sleep(30)
        raise AssertionError("the signal did not stop the command")
    return real(self, *a, **k)
sw.Sweeper.run = run
import symtrans.cli.main as cli
sys.exit(cli.main(sys.argv[2:]))
"""


@pytest.mark.parametrize("sig,status", [("SIGINT", 130), ("SIGTERM", 143), ("SIGHUP", 129)])
def test_a_signal_in_the_middle_of_a_streamed_sweep_leaves_nothing(tmp_path, sig, status):
    # The sweep streams its rows into a temporary file beside -o: a signal half-way through
    # removes it and leaves the earlier file as it was.
    env = dict(os.environ, PYTHONPATH=str(REPO))
    (tmp_path / "out.csv").write_bytes(SENTINEL)
    p = subprocess.run(
        [sys.executable, "-c", _SIGNAL_MID_SWEEP, sig, "sweep", "gpt2", "--grid", "N=1:5000", "-o", "out.csv"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        preexec_fn=default_signals,
        timeout=120,
    )
    assert p.returncode == status, p.stderr
    assert p.stderr.count("\n") == 1 and "Traceback" not in p.stderr
    assert os.listdir(tmp_path) == ["out.csv"] and (tmp_path / "out.csv").read_bytes() == SENTINEL


@pytest.mark.parametrize("sig,status", [("SIGINT", 130), ("SIGTERM", 143), ("SIGHUP", 129)])
@pytest.mark.parametrize("argv", [["params", "gpt2"], ["report", "gpt2"], ["sweep", "gpt2", "--grid", "N=1:3"]])
def test_real_signal_is_one_line_and_its_status(tmp_path, sig, status, argv):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    (tmp_path / "out.md").write_bytes(SENTINEL)
    p = subprocess.run(
        [sys.executable, "-c", _SELF_SIGNAL, sig, *argv, "-o", "out.md"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        preexec_fn=default_signals,
        timeout=120,
    )
    assert p.returncode == status, p.stderr
    assert p.stderr.count("\n") == 1 and "Traceback" not in p.stderr
    assert p.stderr.startswith("symtrans: interrupted" if sig == "SIGINT" else f"symtrans: stopped by {sig}")
    assert os.listdir(tmp_path) == ["out.md"] and (tmp_path / "out.md").read_bytes() == SENTINEL


def _tex_processes(root: str) -> list[tuple[int, str]]:
    """Processes whose working directory lies under ``root`` (the TeX runs of a build)."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cwd = os.readlink(f"/proc/{pid}/cwd")
            with open(f"/proc/{pid}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
            with open(f"/proc/{pid}/comm", encoding="utf-8") as f:
                comm = f.read().strip()
        except (OSError, IndexError):
            continue
        if cwd.startswith(root) and state not in (b"Z", b"X"):
            found.append((int(pid), comm))
    return found


@needs_tex
@pytest.mark.parametrize("sig,status", [("SIGINT", 130), ("SIGTERM", 143), ("SIGHUP", 129)])
def test_signal_during_a_real_pdf_build_leaves_no_tex_process_and_no_folder(tmp_path, sig, status):
    # Ctrl-C during a PDF build left latexmk/pdflatex running; SIGTERM left symtrans-tex-*
    # folders behind. The signal is sent to symtrans only, as a terminal's Ctrl-C would
    # (TeX runs in its own session, so only symtrans can stop it), once pdflatex runs.
    work, tmp = tmp_path / "work", tmp_path / "tmp"
    work.mkdir()
    tmp.mkdir()
    (work / "r.pdf").write_bytes(SENTINEL)
    env = dict(os.environ, PYTHONPATH=str(REPO), TMPDIR=str(tmp))
    p = subprocess.Popen(
        [sys.executable, "-m", "symtrans", "report", "gpt2", "-o", "r.pdf"],
        cwd=work,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_signals,
    )
    try:
        deadline = time.monotonic() + 120
        while not any(c == "pdflatex" for _, c in _tex_processes(str(tmp))):
            assert p.poll() is None, p.communicate()
            assert time.monotonic() < deadline, "pdflatex never started"
            time.sleep(0.01)
        assert [d for d in os.listdir(tmp) if d.startswith("symtrans-tex-")]  # mid-way: the folder exists
        p.send_signal(getattr(signal, sig))
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == status, err
    assert out == "" and err.count("\n") == 1 and "Traceback" not in err
    assert _tex_processes(str(tmp)) == []
    assert os.listdir(tmp) == []
    assert os.listdir(work) == ["r.pdf"] and (work / "r.pdf").read_bytes() == SENTINEL


@needs_tex
def test_pdf_time_limit_kills_tex_and_removes_the_folder(tmp_path, monkeypatch):
    # A TeX loop that never ends (\def\x{\x}\x): the time limit kills the process group.
    from symtrans.render.report import PDFBuildError, build_pdf

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    source = "\\documentclass{article}\\begin{document}\\def\\x{\\x}\\x\\end{document}\n"
    with pytest.raises(PDFBuildError, match="longer than 3 s"):
        build_pdf(source, timeout=3)
    assert _tex_processes(str(tmp_path)) == []
    assert os.listdir(tmp_path) == []


@needs_tex
def test_overlong_title_is_refused_before_tex_runs(reject):
    # A 60,000-character title once failed with "see report.log" (a file already removed with
    # its folder), and later kept hyperref busy for minutes: it is refused in one line first.
    o = reject(["report", "gpt2", "--no-charts", "--title", "/" * 60000, "-o", "t.pdf"], needle="60,000 characters")
    assert ".log" not in o.err and "at most 1,000" in o.err


def test_broken_pipe_stops_quietly(tmp_path):
    # The reader of standard output goes away (symtrans ... | head -1): status 141 as for
    # SIGPIPE, and no "Broken pipe" error or traceback.
    env = dict(os.environ, PYTHONPATH=str(REPO))
    p = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "symtrans",
            "sweep",
            "gpt2",
            "--grid",
            "d_model=768:7680000:768",
            "--quantity",
            "params",
        ],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    p.stdout.close()  # nobody reads
    err = p.stderr.read().decode()
    p.wait(timeout=120)
    assert p.returncode == 141 and err == ""


def test_snapshot_sees_a_replaced_device_or_fifo(tmp_path):
    # The harness itself: a FIFO replaced by a regular file must count as a change.
    os.mkfifo(tmp_path / "f")
    before = snapshot(tmp_path)
    os.unlink(tmp_path / "f")
    (tmp_path / "f").write_bytes(b"")
    assert snapshot(tmp_path) != before
