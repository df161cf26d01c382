"""The co-occurrence counts of the graph, as a round over partitions of papers (`pair_counts`, `add_pair_counts`):
any partitioning counts every pair within a paper once per paper, as a plain count does."""

from __future__ import annotations

import random
from collections import Counter
from itertools import combinations

from hypothesis import given, settings
from hypothesis import strategies as st

from kg.graph.build import add_pair_counts, pair_counts


def _plain(rows, n):
    counted = Counter(a * n + b for row in rows for a, b in combinations(sorted(row), 2))
    return sorted(counted.items())


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(0, 29), unique=True, max_size=8), max_size=40), st.integers(1, 7))
def test_pairs_counted_in_partitions_of_any_size_are_the_plain_count(rows, size):
    parts = [pair_counts(rows[i:i + size], 30) for i in range(0, len(rows), size)]
    codes, count = add_pair_counts(parts)
    assert list(zip(codes.tolist(), count.tolist())) == _plain(rows, 30)
    assert list(codes) == sorted(codes) and all(c > 0 for c in count.tolist())


def test_the_partitions_added_in_any_order_give_the_same_table():
    rng = random.Random(7)
    rows = [rng.sample(range(500), rng.randint(0, 12)) for _ in range(2000)]
    parts = [pair_counts(rows[i:i + 128], 500) for i in range(0, len(rows), 128)]
    codes, count = add_pair_counts(parts)
    again = add_pair_counts(parts[::-1])
    assert (codes == again[0]).all() and (count == again[1]).all()
    assert list(zip(codes.tolist(), count.tolist())) == _plain(rows, 500)
    assert add_pair_counts([])[0].size == 0 and pair_counts([[3], []], 10)[0].size == 0
