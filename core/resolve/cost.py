"""What a stack costs per hour, as AWS bills it: each line from configs/prices.yaml for the stack's
region, or "unknown" where no price for that region is known (never another region's).

A GPU pool costs all its nodes, whatever its deployments use. On-Demand pools are at list price;
Spot and Capacity Block pools are not billed at it, so they cost `nodePools.<pool>.pricePerNodeHour`
when the user gives one, else unknown. Storage billed per GB-month is shown per hour (/ hoursPerMonth).

An elastic pool (Karpenter) counts at its most nodes, maxNodes, in the stack's total: the worst case its
Planners may reach. Its fewest, what its graphs' minimum workers hold, is priced beside it (the report adds
what it costs over make simulate's day).
"""

from __future__ import annotations

from dataclasses import dataclass

from gpt_oss_infra.core.inputs.catalog import Catalog, EksSupport, Prices, RegionPrices
from gpt_oss_infra.core.inputs.config import KEY_PREFIX, EksClusterConfig, NodePoolConfig, StackConfig
from gpt_oss_infra.core.quantity import gibibytes
from gpt_oss_infra.core.resolve.recipes import NodePool, ResolvedDeployment
from gpt_oss_infra.core.resolve.sizing import fsx_capacity_gib, nodes_at_minimum

PRICES = "configs/prices.yaml"


@dataclass(frozen=True)
class CostLine:
    item: str
    quantity: str
    usd_per_hour: float | None  # None: unknown
    basis: str  # where the price comes from, or why there is none


@dataclass(frozen=True)
class PoolCost:
    pool: NodePool
    gpus_used: int
    line: CostLine  # every node; an elastic pool's at its most
    fewest: CostLine | None = None  # an elastic pool at the nodes its graphs' fewest workers hold
    fewest_nodes: int | None = None  # those nodes

    @property
    def gpus_idle(self) -> int:
        return self.pool.total_gpus - self.gpus_used

    def share_of(self, deployment: ResolvedDeployment) -> float | None:
        """A deployment's share of the pool's whole cost, idle GPUs included: in proportion to the
        GPUs it uses among those the pool's deployments use, so shares add up to the pool once."""
        if self.line.usd_per_hour is None or not self.gpus_used:
            return None
        return self.line.usd_per_hour * deployment.total_gpus / self.gpus_used


def region_prices(prices: Prices, region: str | None) -> RegionPrices | None:
    return prices.regions.get(region) if region else None


def pool_costs(
    pools: dict[str, NodePool], deployments: list[ResolvedDeployment], prices: Prices, region: str | None, created: bool
) -> dict[str, PoolCost]:
    """Each GPU pool: the GPUs its deployments use, and what all its nodes cost."""
    regional = region_prices(prices, region)
    costs = {}
    for name, pool in pools.items():
        used = sum(d.total_gpus for d in deployments if d.pool and d.pool.name == name)
        if pool.config.scaling is None:
            costs[name] = PoolCost(pool, used, _pool_line(pool, regional, region, created, pool.config.most_nodes))
            continue
        fewest = nodes_at_minimum(pool, deployments)
        costs[name] = PoolCost(
            pool,
            used,
            _pool_line(pool, regional, region, created, pool.config.most_nodes, _MOST),
            _pool_line(pool, regional, region, created, fewest, _FEWEST),
            fewest,
        )
    return costs


def _pool_line(
    pool: NodePool, regional: RegionPrices | None, region: str | None, created: bool, nodes: int, when: str = ""
) -> CostLine:
    """The pool's `nodes` nodes; `when`: which of an elastic pool's sizes they are."""
    return _nodes_line("GPU pool", pool.name, pool.instance_type, pool.config, regional, region, created, nodes, when)


def cpu_pool_lines(
    name: str, config: NodePoolConfig, fewest: int, prices: Prices, region: str | None
) -> tuple[CostLine, CostLine]:
    """A cpu pool (always elastic, on a created cluster) at its most nodes and at its fewest."""
    regional, instance_type = region_prices(prices, region), config.instance_type or ""
    return (
        _nodes_line("cpu pool", name, instance_type, config, regional, region, True, config.most_nodes, _MOST),
        _nodes_line("cpu pool", name, instance_type, config, regional, region, True, fewest, _FEWEST),
    )


_MOST, _FEWEST = "at its most (scaling.maxNodes)", "at its fewest (its graphs' minimum workers)"


def _nodes_line(
    what: str,
    name: str,
    instance_type: str,
    config: NodePoolConfig,
    regional: RegionPrices | None,
    region: str | None,
    created: bool,
    nodes: int,
    when: str,
) -> CostLine:
    item = f"{what} {name}: {instance_type}" + (f", {when}" if when else "")
    quantity = f"{nodes} node(s)"
    if not created:
        return CostLine(item, quantity, None, "an existing cluster's nodes: billed to that cluster, not this stack")
    if config.price_per_node_hour is not None:
        return CostLine(item, quantity, config.price_per_node_hour * nodes, "pricePerNodeHour (stack config)")
    if config.capacity_type != "ON_DEMAND":
        kind = "Spot" if config.capacity_type == "SPOT" else "Capacity Block"
        why = f"{kind}: not billed at list price; set {KEY_PREFIX}nodePools.{name}.pricePerNodeHour"
        return CostLine(item, quantity, None, why)
    price = regional.ec2.get(instance_type) if regional else None
    if price is None:
        return CostLine(item, quantity, None, _unknown(region, f"{instance_type} On-Demand"))
    return CostLine(item, quantity, price * nodes, f"{PRICES}, On-Demand list price in {region}")


def stack_cost(
    catalog: Catalog,
    config: StackConfig,
    pool_lines: list[CostLine],
    region: str | None,
    gateways: int,
    weights: bool = True,
) -> list[CostLine]:
    """Every line of the stack's hourly cost: GPU pools, then what a created cluster adds. Without
    weights (engines that load none: the mocker) the model cache stores the tokenizer files only."""
    lines = list(pool_lines)
    cluster = config.cluster
    if not isinstance(cluster, EksClusterConfig):
        return lines
    prices = catalog.prices
    regional = region_prices(prices, region)
    hourly = 1 / prices.hours_per_month

    def priced(item: str, quantity: str, unit: float | None, count: float, what: str) -> CostLine:
        if unit is None:
            return CostLine(item, quantity, None, _unknown(region, what))
        return CostLine(item, quantity, unit * count, f"{PRICES} ({region})")

    system = cluster.system_nodes
    lines.append(
        priced(
            f"system nodes: {system.instance_type}",
            f"{system.nodes} node(s)",
            regional.ec2.get(system.instance_type) if regional else None,
            system.nodes,
            f"{system.instance_type} On-Demand",
        )
    )
    if cluster.network.existing_private_subnets is None:  # our VPC has one NAT gateway
        nat = regional.nat_gateway_hour if regional else None
        per_gb = regional.nat_gateway_gb if regional else None
        traffic = f"plus ${per_gb}/GB processed" if per_gb is not None else "plus $/GB processed"
        lines.append(priced(f"NAT gateway ({traffic})", "1", nat, 1, "NAT gateway"))
        lines.append(CostLine("public IPv4 address (the NAT's)", "1", prices.public_ipv4_hour, PRICES))
    lines.append(CostLine("KMS key (secrets encryption)", "1", prices.kms_key_month * hourly, PRICES))
    lines.append(
        CostLine(
            "CloudWatch Logs (control-plane logs)",
            "by volume",
            None,
            "billed per GB ingested and stored: not estimated",
        )
    )
    support = _eks_support(prices, cluster.kubernetes_version)
    eks = regional.eks_cluster_hour.get(support) if regional else None
    lines.append(priced(f"EKS control plane, {cluster.kubernetes_version} in {support} support", "1", eks, 1, "EKS"))
    if gateways:
        nlb = regional.nlb_hour if regional else None
        lines.append(priced("Network Load Balancers (plus LCUs by traffic)", str(gateways), nlb, gateways, "NLB"))
    pools_gib = sum(pool.disk_size_gib * pool.most_nodes for pool in config.node_pools.values())
    root_gib = system.disk_size_gib * system.nodes + pools_gib
    block_gib = root_gib + (gibibytes(config.observability.storage_size) if config.observability.enabled else 0)
    ebs = regional.ebs_gp3_gb_month if regional else None
    lines.append(
        priced(
            "EBS gp3 (node root volumes, Prometheus)",
            f"{block_gib:,.0f} GiB",
            _per_hour(ebs, hourly),
            block_gib,
            "EBS gp3",
        )
    )
    cache = config.model_cache
    if cache.storage == "efs":  # billed on what it stores: the checkpoint, or the tokenizer files (MBs) alone
        stored = catalog.model.checkpoint_gib if weights else 1
        efs = regional.efs_standard_gb_month if regional else None
        lines.append(
            priced(
                "EFS Standard (model cache, on data stored; reads and writes per GB)",
                f"~{stored:.0f} GiB" if weights else "< 1 GiB, as 1",
                _per_hour(efs, hourly),
                stored,
                "EFS",
            )
        )
    elif cache.storage == "fsx-lustre":  # billed on provisioned capacity
        provisioned = fsx_capacity_gib(cache.size)
        tier = regional.fsx_lustre_persistent2_gb_month.get(cache.fsx_throughput_per_tib) if regional else None
        what = f"FSx for Lustre PERSISTENT_2 {cache.fsx_throughput_per_tib} MB/s/TiB"
        lines.append(priced(what, f"{provisioned:,} GiB", _per_hour(tier, hourly), provisioned, what))
    return lines


def total(lines: list[CostLine]) -> tuple[float, list[str]]:
    """The known lines' sum, and the items whose price is unknown."""
    known = sum(line.usd_per_hour for line in lines if line.usd_per_hour is not None)
    return known, [line.item for line in lines if line.usd_per_hour is None]


def _eks_support(prices: Prices, version: str) -> EksSupport:
    """standard, or extended once the version's standard support ended (as of the prices' date)."""
    ends = prices.eks_standard_support_ends.get(version)
    return "extended" if ends is not None and ends <= prices.read_on else "standard"


def _per_hour(per_gb_month: float | None, hourly: float) -> float | None:
    return None if per_gb_month is None else per_gb_month * hourly


def _unknown(region: str | None, what: str) -> str:
    if region is None:
        return "price unknown: no aws:region"
    return f"price unknown: no verified {what} price for {region} in {PRICES}"


def region_warnings(prices: Prices, region: str | None, created: bool) -> list[str]:
    """A created cluster in a region configs/prices.yaml does not cover: every AWS price is unknown."""
    if not created or region is None or region in prices.regions:
        return []
    return [f"aws:region {region}: {PRICES} has no prices for it ({', '.join(prices.regions)}): costs print unknown"]
