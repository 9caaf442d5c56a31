"""`make check-versions`: are the pinned chart versions still in their repositories' live indexes?

configs/charts/<chart>/index.json records what each index listed when the pin was chosen (the
offline tests check pins against it). This reads the live indexes again, over the network, and
says for each chart: ok (listed, same digest), changed (listed with another digest), missing, or
unreachable. The Dynamo chart (an OCI artifact on NGC, no index) and the EKS add-on builds
(listed per account by the EKS API) are named with the command that checks them.
Exit 1 when a pin is missing or its digest changed; 0 otherwise (unreachable is reported, not failed).
"""

from __future__ import annotations

import argparse
import json
import sys
import urllib.request
from pathlib import Path

from core.inputs.catalog import CONFIG_DIR, Chart, load_catalog
from core.yaml_files import load_yaml


def live_versions(index_url: str, chart: str, timeout: float) -> dict[str, str]:
    """version -> digest, as the repository's index.yaml lists them now."""
    with urllib.request.urlopen(index_url, timeout=timeout) as response:
        index = load_yaml(response.read())
    return {entry["version"]: entry.get("digest", "") for entry in index.get("entries", {}).get(chart, [])}


def check_chart(chart: Chart, timeout: float, config_dir: Path = CONFIG_DIR) -> tuple[str, str]:
    recorded = json.loads((config_dir / "charts" / chart.chart / "index.json").read_text())
    if recorded["index"] is None:  # an OCI registry lists no index; index.json says where its versions came from
        return "by hand", f"helm show chart {chart.repo}/{chart.chart} --version {chart.version} (OCI: no index)"
    digest = next(entry["digest"] for entry in recorded["versions"] if entry["version"] == chart.version)
    try:
        versions = live_versions(recorded["index"], chart.chart, timeout)
    except OSError as error:
        return "unreachable", f"{recorded['index']}: {error}"
    if chart.version not in versions:
        return "missing", f"{chart.version} is not in {recorded['index']} any more"
    if not digest:  # index.json could only list versions (kube-prometheus-stack: its index was not readable)
        return (
            "unrecorded",
            f"{chart.version} listed in {recorded['index']}: record its digest {versions[chart.version]}",
        )
    if versions[chart.version] != digest:
        return "changed", f"{chart.version} now has digest {versions[chart.version]}, recorded {digest}"
    return "ok", f"{chart.version} listed in {recorded['index']} with the recorded digest"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds to wait for each index (default: 20)")
    args = parser.parse_args(argv)
    catalog = load_catalog()
    failed = False
    for chart in catalog.charts.values():
        status, detail = check_chart(chart, args.timeout)
        failed |= status in ("missing", "changed")
        print(f"{status:<11} {chart.chart}: {detail}")
    for version, dynamo in catalog.dynamo_versions.items():
        print(
            f"{'by hand':<11} dynamo-platform {version}: helm show chart {dynamo.chart_reference} --version {version}"
        )
    for kubernetes, pins in catalog.addon_versions.items():
        for addon, pin in pins.items():
            print(
                f"{'by hand':<11} EKS add-on {addon} {pin.version or '(EKS default)'} on {kubernetes}: "
                f"aws eks describe-addon-versions --kubernetes-version {kubernetes} --addon-name {addon}"
            )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
