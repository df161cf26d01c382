"""A function run in a forked copy of the build (`kg.pipeline.fork.Forked`): the views writer, and the halves of
the merge's and the specificity's passes over the texts."""

import os

import pytest

from kg.errors import OutputError
from kg.pipeline.fork import Forked


def test_a_forked_function_gives_its_value_or_raises_its_error():
    assert Forked(lambda: {"pid": os.getpid()}).result()["pid"] != os.getpid()
    with pytest.raises(ZeroDivisionError):
        Forked(lambda: 1 / 0).result()


def test_a_forked_process_that_stops_is_a_clear_error_naming_its_work():
    with pytest.raises(OutputError, match="the process measuring the concepts' cohesion stopped"):
        Forked(lambda: os._exit(3), doing="measuring the concepts' cohesion").result()


def test_a_nice_forked_process_runs_at_a_lower_priority_and_this_one_does_not():
    mine = os.nice(0)
    assert Forked(lambda: os.nice(0), nice=5).result() == min(mine + 5, 19)
    assert os.nice(0) == mine


def test_a_forked_process_that_forks_runs_its_own_forked_function_in_a_third_process():
    # (multiprocessing forbids a daemonic process to start one: the views writer forks the map files' writer)
    def outer():
        return os.getpid(), Forked(os.getpid).result()

    views, maps = Forked(outer, forks=True).result()
    assert len({os.getpid(), views, maps}) == 3
