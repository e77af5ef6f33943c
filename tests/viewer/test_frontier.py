"""The accuracy × latency frontier: a point is on it only when no other point is at least as
good on both axes and better on one; tokens play no part in the star. The chart shares one
circle and label among coinciding points and draws nothing on its frame."""

from __future__ import annotations

import re

from memeval.report.charts import Point, frontier, frontier_chart


def test_dominated_points_are_off_the_frontier() -> None:
    points = [Point("fast", 80.0, 2.0, 900.0), Point("accurate", 90.0, 20.0, 900.0),
              Point("slow-and-worse-but-lean", 58.8, 400.0, 10.0),  # fewer tokens earns no star
              Point("tie-a", 70.0, 1.0, 5.0), Point("tie-b", 70.0, 1.0, 50.0), Point("no-latency", 99.0, None, 1.0)]
    assert frontier(points) == {"fast", "accurate", "tie-a", "tie-b"}
    assert frontier([Point("only", 50.0, 5.0, None)]) == {"only"}
    # equal accuracy, slower: dominated; equal latency, less accurate: dominated
    assert frontier([Point("a", 80.0, 2.0, 1.0), Point("b", 80.0, 3.0, 1.0), Point("c", 79.0, 2.0, 1.0)]) == {"a"}


def test_chart_stars_only_the_frontier_and_merges_coinciding_points() -> None:
    points = [Point("p1", 60.0, 10.0, 100.0), Point("p2", 60.0, 10.0, 100.0), Point("p3", 100.0, 5.0, 100.0),
              Point("p4", 0.0, 1000.0, 50.0), Point("p5", None, None, None)]
    svg = str(frontier_chart("t", points))
    circles = re.findall(r'<circle class="(\w+)" cx="([\d.]+)" cy="([\d.]+)" r="([\d.]+)"', svg)
    assert len(circles) == 3  # p1 and p2 share one circle
    assert [c[0] for c in circles].count("pareto") == 1  # p3 alone is on the frontier
    assert svg.count("★") == 1 and "★ p3" in svg and ">p1, p2<" in svg
    frame = re.search(r'<rect x="(\d+)" y="(\d+)" width="(\d+)" height="(\d+)"', svg)
    assert frame
    x, y, w, h = map(float, frame.groups())
    for _, cx, cy, r in circles:  # every circle wholly inside the frame, none on an axis
        assert x < float(cx) - float(r) and float(cx) + float(r) < x + w
        assert y < float(cy) - float(r) and float(cy) + float(r) < y + h
    assert "no data: p5" in svg
