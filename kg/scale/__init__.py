"""Where extraction runs: partitions in a model process, or on Dask workers."""
