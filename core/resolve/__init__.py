"""Stage 2, resolve: node pools, recipes turned into workers, where traffic crosses nodes (EFA),
and whether it all fits (placement, GPU memory)."""
