"""The in-flight window every algorithm can use (window / variable_window, HPCC's HAS_WIN /
VAR_WIN), and the telemetry bytes each algorithm puts on the wire, checked against the
bandwidth-delay product and the frame sizes of docs/congestion-control.md."""

from __future__ import annotations

import numpy as np
import pytest

from cc_helpers import EXTRA, HEADER, LINE, MTU, base_rtt_s, queue_between, run_incast

FRAME = MTU + HEADER


def test_a_fixed_window_bounds_the_incast_queue():
    """4-to-1 DCQCN incast with a fixed window of one bandwidth-delay product per
    flow: at most 4 windows of payload are in flight (on the wire each payload
    byte is FRAME/MTU bytes), one BDP fills the pipe, the rest queues at the
    bottleneck; plus one frame per flow (a frame may leave while the window has
    room for part of it) and the one on the wire. Without the window DCQCN lets
    the queue grow past kmin (400 KB)."""
    n = 4
    bdp = LINE * base_rtt_s("dcqcn", [(LINE, 1e-6)] * 2) / 8
    r, link = run_incast("dcqcn", n, "2MB", window=True, variable_window=False)
    bounded = queue_between(r, link, 0, float(r.flows["finish_ns"].max()))
    assert bounded.max() <= n * bdp * FRAME / MTU - bdp + (n + 1) * FRAME
    assert bounded.max() > (n - 2) * bdp  # the windows, not something else, set the level
    free, _ = run_incast("dcqcn", n, "2MB")
    assert queue_between(free, link, 0, float(free.flows["finish_ns"].max())).max() > 400_000


@pytest.mark.parametrize("cc", ["dcqcn", "dctcp", "timely", "hpcc"])
def test_telemetry_bytes_on_data_and_ack_frames(cc):
    """A lone flow's ideal FCT counts the algorithm's telemetry on each DATA frame
    and its ACK: none for DCQCN and DCTCP, an 8-byte stamp for TIMELY, the
    42-byte INT header for HPCC."""
    r, _ = run_incast(cc, 1, "100KB")
    f = r.flows
    wire = (FRAME + EXTRA[cc]) * 8 / LINE * 1e9
    ack = (64 + EXTRA[cc]) * 8 / LINE * 1e9
    frames = -(-f["bytes"].astype(np.int64) // MTU)
    ideal = (frames - 1) * wire + 2 * (wire + 1000) + 2 * (ack + 1000)
    np.testing.assert_allclose(f["ideal_fct_ns"], ideal, rtol=1e-9)
