"""Runs inside one Dynamo release's own venv (made by tools/dynamo_parsers.py): parses command lines
with that release's own argument parsers. Standard library and that release's `dynamo` package only.

    python dynamo_cli_driver.py <requests.json> <results.json>

requests: [{"id": ..., "argv": ["python3", "-m", "dynamo.frontend", ...], "env": {"NAME": "value"}}]
results:  {id: null when the parser accepts the line, else what it said}
Results go to a file: the parsers' loggers write to the process's own stdout and stderr.
"""

import argparse
import contextlib
import inspect
import io
import json
import logging
import os
import sys


def _frontend(args):
    from dynamo.frontend.main import parse_args

    sys.argv = ["dynamo.frontend", *args]  # its parser reads sys.argv
    parse_args()


def _trtllm(args):
    from dynamo.trtllm.args import parse_args

    parse_args(args)


def _mocker(args):
    from dynamo.mocker.args import parse_args

    sys.argv = ["dynamo.mocker", *args]  # 1.0.0's parse_args() reads sys.argv; later ones take argv
    if inspect.signature(parse_args).parameters:
        parse_args(args)
    else:
        parse_args()


PARSERS = {"dynamo.frontend": _frontend, "dynamo.trtllm": _trtllm, "dynamo.mocker": _mocker}
# Tokens that make a parser print and exit before reading the rest of the line.
EXITING = {"-h", "--help", "--version"}


def parse(argv, env):
    """None when the line parses, else the parser's own complaint."""
    if "-m" not in argv or argv.index("-m") + 1 >= len(argv):
        return f"not a `python3 -m <module>` command line: {argv}"
    module = argv[argv.index("-m") + 1]
    parser = PARSERS.get(module)
    if parser is None:
        return f"no parser known for {module} (tools/dynamo_cli_driver.py)"
    args = argv[argv.index("-m") + 2 :]
    if EXITING & set(args):
        return f"{', '.join(sorted(EXITING & set(args)))}: the process would print and exit instead of serving"
    said = io.StringIO()
    handler = logging.StreamHandler(said)
    logging.getLogger().addHandler(handler)
    saved = dict(os.environ)
    os.environ.update(env)  # flags read their defaults from the environment the pod would have
    try:
        with contextlib.redirect_stderr(said), contextlib.redirect_stdout(io.StringIO()):
            parser(args)
    except SystemExit as stop:  # even exit 0 stopped the parse before the line was read
        return _complaint(said.getvalue()) or f"exited with {stop.code} instead of parsing the whole line"
    except Exception as error:  # a validator's refusal (ValueError and the like)
        return f"{type(error).__name__}: {error}"
    finally:
        os.environ.clear()
        os.environ.update(saved)
        logging.getLogger().removeHandler(handler)
    return None


def _complaint(text):
    """argparse's usage block is long; its last lines say what was wrong."""
    lines = [line for line in text.splitlines() if line.strip() and not line.startswith(" ")]
    return "\n".join(lines[-2:])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("requests", help="JSON file: the command lines to parse (see the module's docstring)")
    parser.add_argument("results", help="JSON file to write: each line's id -> null, or what its parser said")
    args = parser.parse_args(argv)  # before the parsers below replace sys.argv
    requests_path, results_path = args.requests, args.results
    with open(requests_path) as requests_file:
        requests = json.load(requests_file)
    results = {request["id"]: parse(request["argv"], request.get("env", {})) for request in requests}
    with open(results_path, "w") as results_file:
        json.dump(results, results_file)


if __name__ == "__main__":
    main()
