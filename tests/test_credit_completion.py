"""A completion that a kernel credit causes (issue #11): the model finishes a
flow inside CreditFlow. The kernel must finish it once the skip is in place
(BeginCredit/EndCredit) and so take the skip back: the flow ended at the
skip's start. Re-entering FlowFinished inside the credit loop left the emptied
partition skipping, and its link's events ran a whole skip late (a 1 us
ticker jumped by 80 ms)."""

from __future__ import annotations

import re

from conftest import PROGRAMS, run


def test_a_flow_completed_by_its_credit_takes_its_skip_back(compile_program):
    out = run([str(compile_program(PROGRAMS / "credit-completes-flow.cc", modules=["core"]))])
    credit = re.search(r"^credit (\d+) bytes for (\d+) ns", out, re.M)
    assert credit, out  # the partition was fast-forwarded and credited
    assert int(credit.group(2)) > 1_000_000  # a skip far longer than the ticker's period
    assert re.search(r"^finished 1$", out, re.M), out
    # The link's events keep their 1 us period across the completion.
    assert re.search(r"^max gap 1000$", out, re.M), out
    assert re.search(r"^last tick 601000$", out, re.M), out
