"""core/render/aws/efa_interfaces.py: how a node's EFA interfaces are laid out over its network cards."""

from __future__ import annotations

import pytest

from gpt_oss_infra.core.render.aws.efa_interfaces import efa_network_interfaces


@pytest.mark.parametrize(
    ("hardware", "instance_type", "efa_cards"),
    [
        ("h100", "p5.48xlarge", list(range(32))),
        ("h200", "p5en.48xlarge", list(range(16))),
        ("h200", "p5e.48xlarge", list(range(32))),
        ("b200", "p6-b200.48xlarge", list(range(8))),
        ("gb200", "p6e-gb200.36xlarge", [1, 5, 9, 13]),  # AWS's 4 x 400 Gbps example for GB200
    ],
)
def test_efa_layout_per_instance_type(catalog, hardware, instance_type, efa_cards):
    instance = catalog.hardware[hardware].instance_types[instance_type]
    interfaces, problems = efa_network_interfaces(instance_type, instance.ec2, instance.efa_interfaces)
    assert problems == []
    assert interfaces[0] == {"network_card_index": 0, "device_index": 0, "interface_type": "interface"}
    efa_only = [(i["network_card_index"], i["device_index"]) for i in interfaces[1:]]
    assert efa_only == [(card, 1 if card == 0 else 0) for card in efa_cards]
    assert all(i["interface_type"] == "efa-only" for i in interfaces[1:])


def test_card_0_keeps_only_the_primary_unless_every_card_is_needed(catalog):
    """If EC2 reported p6e-gb200's card 0 as fast as the others, it still gets no EFA: AWS requires
    it to be of type interface there."""
    instance = catalog.hardware["gb200"].instance_types["p6e-gb200.36xlarge"]
    flat = instance.ec2.model_copy(update={"network_card_peak_gbps": [400.0] * 17})
    interfaces, problems = efa_network_interfaces("p6e-gb200.36xlarge", flat, 4)
    assert problems == []
    assert [i["network_card_index"] for i in interfaces] == [0, 1, 5, 9, 13]
    assert interfaces[0]["interface_type"] == "interface"
