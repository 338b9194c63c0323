"""Fuzz of the `fedbound` command (issue 8), generic over the argparse parser: every subcommand and
every option (found by walking fedbound.cli.main.build_parser) gets bad strings, misspelled choices,
and bad files (not UTF-8, deeply nested, 5000-digit numbers, NaN tokens, huge specs; truncated,
corrupt, pickled or non-zip .npz). Calls main(argv) in-process. The contract: exit 0 (with strict
JSON on stdout under --json), 2 with exactly one 'fedbound: error:' line and no traceback, 1 only
for a failed verification (never an 'internal error'); nothing hangs."""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import pickle
import zipfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fedbound.cli.commands import EXIT_VIOLATED
from fedbound.cli.main import build_parser, main
from fuzz_values import CASE_SECONDS, CASES, Hang, time_limit

EXAMPLES = 8
#: small values for options that set the amount of work (applied where a command has them;
#: an audit of one theorem's claims rather than a whole paper's: a run is then seconds, far below
#: the hang limit even on a loaded machine)
FAST = {"--rounds": "3", "--seeds": "2", "--samples": "200", "--iterations": "3", "--K-cap": "4",
        "--only": "thm5"}
#: commands whose valid runs take long (a full tour): fuzzed only with values that must be refused
SLOW_COMMANDS = {"demo"}
#: the hang limit of a command whose valid runs take longer than CASE_SECONDS, in multiples of it:
#: the demo's whole tour; pep's SDP of up to MAX_GRAM = 40 points (fedbound.pep.symbolic), which the
#: fallback chain (Clarabel, then SCS) took 14-17 s to solve on a quiet 2-core machine (pep fednova
#: --rounds 3 --taus 10, a 33-point Gram matrix) and over 20 s under load
SLOW_LIMITS = {"demo": 6, "pep": 3}
#: strings that a numeric option may accept (zero, small numbers in odd spellings)
VALID_LOOKING = {"0", "-0", " 1", "1_0", "0.5", "1e-400"}
BAD_PATHS = ["", "\x00", " out"]
BAD_STRINGS = ["nan", "inf", "-inf", "-1", "0", "-0", "abc", "", "1e400", "-1e308", "9" * 5000,
               str(2 ** 70), str(2 ** 63), "1,2,x", "0.5", "1e-400", " 1", "0x10", "\x00", "1_0",
               "NaN", "Infinity", "[1]", "{}", "2,,3", "ring_", "-", "--"]
NET = {"subnets": [{"m": 3, "topology": "ring"}, {"m": 3, "topology": "ring"}]}
CONTROL = {"subnets": [{"m": 3, "E": 10.0, "E_d2d": 1.0}, {"m": 3, "E": 20.0, "E_d2d": 2.0}]}
#: options a file option needs beside it to be read at all (--data is least-squares data)
COMPANIONS = {"--data": ["--task", "lsq"]}


def leaves(parser=None, path=()):
    """(command path, parser) of every leaf subcommand."""
    parser = parser or build_parser()
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield list(path), parser
    for action in subs:
        seen = set()
        for name, sub in action.choices.items():
            if id(sub) not in seen:
                seen.add(id(sub))
                yield from leaves(sub, (*path, name))


def takes_value(action) -> bool:
    return not isinstance(action, (argparse._HelpAction, argparse._StoreTrueAction,
                                   argparse._StoreFalseAction, argparse._StoreConstAction,
                                   argparse._VersionAction, argparse._SubParsersAction,
                                   argparse._CountAction))


def is_file_option(action) -> bool:
    text = f"{action.dest} {action.metavar or ''}".lower()
    return any(k in text for k in ("spec", "network", "controller", "data", "json", "npz", "file"))


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Valid and bad input files shared by all cases."""
    d = tmp_path_factory.mktemp("inputs")
    out = {}

    def put(name, data):
        p = d / name
        p.write_bytes(data if isinstance(data, bytes) else data.encode())
        out[name] = str(p)

    put("net.json", json.dumps(NET))
    put("control.json", json.dumps(CONTROL))
    rng = np.random.default_rng(0)
    buf = io.BytesIO()
    np.savez(buf, A=rng.standard_normal((6, 4, 3)), y=rng.standard_normal((6, 4)))
    put("data.npz", buf.getvalue())
    good_npz = buf.getvalue()
    put("latin1.json", '{"subnets": [{"m": 3, "topology": "ring", "name": "caf\xe9"}]}'.encode("latin-1"))
    put("nested.json", "[" * 100000 + "]" * 100000)
    put("digits.json", '{"subnets": [{"m": ' + "9" * 5000 + ', "topology": "ring", "E": 1, "E_d2d": 1}]}')
    put("bigfloat.json", '{"subnets": [{"m": 3, "topology": "ring", "E": 1' + "0" * 400 + ', "E_d2d": 1}]}')
    put("nan.json", '{"subnets": [{"m": 3, "topology": "ring", "E": NaN, "E_d2d": 1}]}')
    put("huge.json", json.dumps({"subnets": [{"m": 30000, "topology": "ring", "E": 1.0, "E_d2d": 1.0}] * 3000}))
    put("empty.json", "")
    put("list.json", "[1, 2, 3]")
    put("truncated.npz", good_npz[: len(good_npz) // 2])
    put("corrupt.npz", good_npz[:40] + bytes(200) + good_npz[240:])
    put("notzip.npz", b"this is not an archive")
    put("pickle.npz", pickle.dumps({"A": [1, 2], "y": [3]}))
    obj = io.BytesIO()
    np.savez(obj, A=np.array([{"x": 1}] * 4, dtype=object).reshape(1, 2, 2), y=np.zeros((1, 2)))
    put("object.npz", obj.getvalue())
    cplx = io.BytesIO()
    np.savez(cplx, A=np.ones((2, 3, 2)) * 1j, y=np.ones((2, 3)))
    put("complex.npz", cplx.getvalue())
    big = io.BytesIO()
    with zipfile.ZipFile(big, "w") as zf:   # a header announcing 30000 x 50 x 3000 floats
        header = io.BytesIO()
        np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False,
                                                       "shape": (3000, 30000, 50)})
        zf.writestr("A.npy", np.lib.format.MAGIC_PREFIX + b"\x01\x00" + header.getvalue()[8:])
        zf.writestr("y.npy", b"")
    put("hugeheader.npz", big.getvalue())
    out["missing"] = str(d / "does-not-exist.json")
    out["directory"] = str(d)
    return out


BAD_FILES = ["latin1.json", "nested.json", "digits.json", "bigfloat.json", "nan.json", "huge.json",
             "empty.json", "list.json", "truncated.npz", "corrupt.npz", "notzip.npz", "pickle.npz",
             "object.npz", "complex.npz", "hugeheader.npz", "missing", "directory"]


def good_file(path, option: str) -> str:
    """The valid input file for a file option: a controller spec or a network spec."""
    return "control.json" if path[0] == "control" or option == "--controller" else "net.json"


def base_argv(path, parser, files, out_dir) -> list[str]:
    """A valid, fast command line for the leaf ``path``: positionals and required options filled
    from their choices or a hint, the work options of FAST made small, --json where it exists."""
    from fedbound.theory.registry import results

    hints = {"result": results()[0].id, "paper": "sdgt", "check": "thm3-bound"}
    argv = list(path)
    for action in parser._actions:
        if not takes_value(action):
            continue
        if not action.option_strings:
            argv.append(str(action.choices and list(action.choices)[0] or hints.get(action.dest, "x")))
        elif action.required:
            value = (list(action.choices)[0] if action.choices else
                     files[good_file(path, action.option_strings[0])] if is_file_option(action)
                     else "2")
            argv += [action.option_strings[0], str(value)]
    options = parser._option_string_actions
    for opt, value in FAST.items():
        if opt in options:
            argv += [opt, value]
    if "--out" in options:
        argv += ["--out", str(out_dir)]
    if "--json" in options:
        argv.append("--json")
    return argv


def replace_option(argv: list[str], option: str, value: str) -> list[str]:
    """argv with ``option`` set to ``value`` (replacing an earlier value)."""
    out, skip = [], False
    for i, a in enumerate(argv):
        if skip:
            skip = False
            continue
        if a == option:
            skip = True
            continue
        out.append(a)
    return out + [option, value]


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    CASES["cli"] += 1
    seconds = CASE_SECONDS * SLOW_LIMITS.get(argv[0], 1)
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            with time_limit(seconds):
                code = main(argv)
        except SystemExit as exc:      # argparse: --help (0) and usage errors (2)
            code = exc.code if isinstance(exc.code, int) else 2
        except Hang as exc:
            pytest.fail(f"fedbound {' '.join(argv)[:300]} hung: {exc}")
    return code, out.getvalue(), err.getvalue()


def _strict(text):
    raise ValueError(f"non-strict JSON token {text}")


def check_contract(argv, code, out, err):
    shown = " ".join(a if len(a) < 60 else a[:57] + "..." for a in argv)
    assert "Traceback" not in err, f"fedbound {shown}: traceback\n{err[-2000:]}"
    assert "internal error" not in err, f"fedbound {shown}: {err.strip()[-500:]}"
    errors = [line for line in err.splitlines()      # a deprecated flag adds a warning line
              if line.startswith("fedbound:") and not line.startswith("fedbound: warning:")]
    if code == 2:
        assert len(errors) == 1, f"fedbound {shown}: exit 2 needs one error line, got {errors!r}"
    elif code == 0:
        assert not errors, f"fedbound {shown}: exit 0 with errors {errors!r}"
        if "--json" in argv:
            json.loads(out, parse_constant=_strict)
    else:
        assert code == EXIT_VIOLATED and argv[0] == "verify", f"fedbound {shown}: exit status {code}; {err[-500:]}"


LEAVES = list(leaves())
OPTION_CASES = [(" ".join(path), action.option_strings[0] if action.option_strings else action.dest)
                for path, parser in LEAVES for action in parser._actions if takes_value(action)]


def _leaf(path: str):
    return next(p for c, p in LEAVES if " ".join(c) == path)


def _action(parser, key):
    return next(a for a in parser._actions if takes_value(a) and
                (a.option_strings[:1] == [key] or (not a.option_strings and a.dest == key)))


@pytest.mark.parametrize("path", sorted({" ".join(p) for p, _ in LEAVES}))
def test_base_command_lines_succeed(path, files, tmp_path):
    """The fuzz starts from a working command line for every leaf command (so that a bad value is
    what is tested), except where no valid generic line exists: then it must be a clean exit 2."""
    argv = base_argv(path.split(), _leaf(path), files, tmp_path / "out")
    check_contract(argv, *run_cli(argv))


@pytest.mark.parametrize("path,key", OPTION_CASES)
@settings(max_examples=EXAMPLES, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_option_values(path, key, files, tmp_path_factory, data):
    parser = _leaf(path)
    action = _action(parser, key)
    choices = [str(c) for c in action.choices] if action.choices else []
    pool = BAD_STRINGS + [c[:-1] for c in choices if len(c) > 1] + [c.upper() for c in choices]
    if is_file_option(action):
        pool = pool + [files[f] for f in BAD_FILES]
    if action.dest == "out":
        pool = BAD_PATHS + [files["directory"], files["net.json"]]
    elif path.split()[0] in SLOW_COMMANDS:   # a valid value would run the whole command
        pool = [v for v in pool if v not in VALID_LOOKING]
    value = data.draw(st.sampled_from(pool), label="value")
    out_dir = tmp_path_factory.mktemp("out") / "out"
    argv = base_argv(path.split(), parser, files, out_dir)
    if action.option_strings:
        argv = replace_option(argv, key, value)
    else:   # a positional: replace the value the base put there
        index = [i for i, a in enumerate(parser._actions) if takes_value(a) and not a.option_strings]
        position = len(path.split()) + index.index(parser._actions.index(action))
        argv[position] = value
    check_contract(argv, *run_cli(argv))


@pytest.mark.parametrize("path,option", [(" ".join(p), a.option_strings[0]) for p, parser in LEAVES
                                         for a in parser._actions
                                         if a.option_strings and takes_value(a) and is_file_option(a)])
@pytest.mark.parametrize("bad", BAD_FILES)
def test_bad_files_exit_2(path, option, bad, files, tmp_path):
    """Every file option refuses every bad file with exit 2 and one line."""
    argv = replace_option(base_argv(path.split(), _leaf(path), files, tmp_path / "out"), option,
                          files[bad])
    for companion, value in zip(COMPANIONS.get(option, [])[::2], COMPANIONS.get(option, [])[1::2]):
        argv = replace_option(argv, companion, value)
    code, out, err = run_cli(argv)
    check_contract(argv, code, out, err)
    assert code == 2, f"fedbound {' '.join(argv)} accepted the bad file {bad}: exit {code}"


@pytest.mark.parametrize("path", sorted({" ".join(p) for p, parser in LEAVES
                                         if "--out" in parser._option_string_actions}))
def test_out_paths(path, files, tmp_path):
    """--out that is a file, or an existing non-empty folder without --overwrite: exit 2, one line,
    and the folder's content is left alone."""
    parser = _leaf(path)
    a_file = tmp_path / "file.txt"
    a_file.write_text("keep")
    full = tmp_path / "full"
    full.mkdir()
    (full / "mine.txt").write_text("keep")
    below_file = a_file / "sub"
    for target in (a_file, full, below_file):
        argv = base_argv(path.split(), parser, files, target)
        code, out, err = run_cli(argv)
        check_contract(argv, code, out, err)
        assert code == 2, f"fedbound {' '.join(argv)} wrote into {target}: exit {code}"
    assert a_file.read_text() == "keep" and (full / "mine.txt").read_text() == "keep"
    assert sorted(p.name for p in full.iterdir()) == ["mine.txt"]


@pytest.mark.parametrize("value", BAD_STRINGS + BAD_PATHS + ["nowhere/plugin.py", "x.py"])
def test_bad_plugin_values(value, files, tmp_path):
    """``fedbound --plugin VALUE``: a value that names no importable module or .py file is one
    error line naming the plugin, exit 2 (the global option, before any command)."""
    argv = ["--plugin", value, "list", "algorithms"]
    code, out, err = run_cli(argv)
    check_contract(argv, code, out, err)
    assert code == 2


def test_enough_generated_cases():
    """Issue 23: at least 2000 generated bad option values per run (the base command lines and the
    bad files come on top; one process counts 2318 cases in all, printed as "fuzz cases")."""
    assert len(OPTION_CASES) * EXAMPLES >= 2000
