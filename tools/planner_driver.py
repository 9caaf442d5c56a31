"""Runs inside Dynamo 1.6.1's runtime venv (.venv-trial, made by `make trial`'s requirements): the
release's own Planner code on what the program renders for a graph with autoscaling. Standard library
and that release's `dynamo` package only.

    python planner_driver.py < requests > results

One request per line of standard input, its result as one line of standard output, until the input ends:
the release's modules are imported once for them all (an import takes 5 CPU-seconds here).

request: {"graph": the rendered graph without its Planner and scaling adapters, "planner_args": the
          Planner's arguments, "config_path": where they name its config, "config_text": that file,
          "runtime_image": the workers' image, "model": the served model}
result:  {"refused": null, or what the Planner's own start-up said of its command line and config,
          "read": the config as the Planner reads it (PlannerConfig, JSON),
          "upstream": {"graph", "config_map", "config"}: what the release's own code
          (dynamo.profiler.utils.dgd_generation) makes of the same graph with the same PlannerConfig}
"""

import argparse
import contextlib
import copy
import io
import json
import os
import sys
import tempfile
import types


def read_as_the_planner(planner_args, config_path, config_text):
    """The Planner's own start-up parse (dynamo.planner.__main__), on its config file."""
    from dynamo.planner.__main__ import _parse_config

    with tempfile.TemporaryDirectory() as scratch:
        path = os.path.join(scratch, os.path.basename(config_path))
        with open(path, "w") as config_file:
            config_file.write(config_text)
        sys.argv = ["dynamo.planner", *(path if arg == config_path else arg for arg in planner_args)]
        said = io.StringIO()
        try:
            with contextlib.redirect_stderr(said), contextlib.redirect_stdout(io.StringIO()):
                config = _parse_config()
        except SystemExit as stop:
            return f"exited with {stop.code}: {said.getvalue().strip()}", None
        except Exception as error:  # the config model's refusal (pydantic's ValidationError, ValueError)
            return f"{type(error).__name__}: {error}", None
    return None, json.loads(config.model_dump_json())


def upstream(graph, settings, runtime_image, model):
    """dgd_generation's Planner layer on the graph: what the release's profiler would deploy."""
    from dynamo.planner.config.planner_config import PlannerConfig
    from dynamo.profiler.utils.dgd_generation import add_planner_to_config, enable_planner_worker_scaling_adapters

    planner = PlannerConfig.model_validate(settings)
    # The DGDR fields add_planner_to_config reads: its planner feature, the model, the image, no SLA block.
    request = types.SimpleNamespace(
        features=types.SimpleNamespace(planner=planner), model=model, image=runtime_image, sla=None
    )
    made = copy.deepcopy(graph)
    enable_planner_worker_scaling_adapters(made, planner)
    config_map = add_planner_to_config(request, made)
    config = json.loads(config_map["data"]["planner_config.json"])
    return {"graph": made, "config_map": config_map, "config": config}


def result_of(request):
    refused, read = read_as_the_planner(request["planner_args"], request["config_path"], request["config_text"])
    made = None
    if refused is None:
        made = upstream(
            request["graph"], json.loads(request["config_text"]), request["runtime_image"], request["model"]
        )
    return {"refused": refused, "read": read, "upstream": made}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.parse_args(argv)
    # The results get a descriptor of their own; whatever else writes to standard output, Python or native
    # code, goes to standard error, so it cannot break a result's line.
    results = os.fdopen(os.dup(sys.stdout.fileno()), "w")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    for line in sys.stdin:
        results.write(json.dumps(result_of(json.loads(line))) + "\n")
        results.flush()


if __name__ == "__main__":
    main()
