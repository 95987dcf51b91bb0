# -*- coding: utf-8 -*-
"""tune_svg's layout, element by element, for a report built by hand.

The layout the chart promises: 760 px wide, a 260 px label column and 120 px on the right, the plot starting
80 px down, one 30 px row per entry (base first) with a 16 px bar, 70 px under the axis for its labels and the
legend; the axis runs to the first round step (1, 2, 2.5 or 5 x 10^k, about 8 ticks) above 105% of the
largest figure. The coordinates below are computed from that by hand (make mutation: tests/mutation/modules.yml).
"""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.plugin_utils.tune_svg import _tick_label, nice_step, render_svg


def report(ceiling=None, rows=None, name="cand", metric="m"):
    """Base 50 tok/s once; a kept candidate at 60 (55-65, +20.0%); a refused one."""
    return {
        "metric": metric, "min_gain_pct": 2.0, "ceiling": ceiling,
        "baseline": {"mean": 50.0, "min": 50.0, "max": 50.0},
        "rows": rows if rows is not None else [
            {"name": name, "verdict": "keep", "mean": 60.0, "gain_pct": 20.0, "label": "keep",
             "stats": {"mean": 60.0, "min": 55.0, "max": 65.0}, "reason": "+20.0% beats"},
            {"name": "ref", "verdict": "refused", "mean": None, "gain_pct": None, "label": "refused", "stats": None,
             "reason": "not in this release"},
        ],
    }


def lines_of(svg):
    assert svg.endswith("</svg>\n")
    return svg.splitlines()


def test_the_frame_title_and_axis_of_three_rows():
    # peak 65 -> 68.25 -> step 10, axis to 70; plot 380 px wide: x(v) = 260 + 380 v / 70; rows end at 80 + 90
    lines = lines_of(render_svg(report()))
    assert lines[0] == ('<svg xmlns="http://www.w3.org/2000/svg" width="760" height="240" viewBox="0 0 760 240" role="img"'
                        ' aria-label="SGLang flag tuning: m" font-family="sans-serif" font-size="12">')
    assert lines[1:5] == [
        "<title>SGLang flag tuning: m</title>",
        '<rect x="0" y="0" width="760" height="240" fill="#ffffff"/>',
        '<text x="16" y="24" font-size="16" font-weight="bold">SGLang flag tuning: m</text>',
        '<text x="16" y="44" fill="#555555">bars: mean of the runs; whiskers: min to max (the noise); keep = gain beats the'
        ' noise and the 2.0% floor</text>',
    ]
    ticks = [(0, "260"), (10, "314.3"), (20, "368.6"), (30, "422.9"), (40, "477.1"), (50, "531.4"), (60, "585.7"), (70, "640")]
    expected = []
    for value, x in ticks:
        expected += ['<line x1="%s" y1="80" x2="%s" y2="170" stroke="#e5e5e5"/>' % (x, x),
                     '<line x1="%s" y1="170" x2="%s" y2="175" stroke="#333333"/>' % (x, x),
                     '<text x="%s" y="188" text-anchor="middle">%d</text>' % (x, value)]
    assert lines[5:5 + len(expected)] == expected
    rest = lines[5 + len(expected):]
    assert rest[:3] == ['<line x1="260" y1="80" x2="260" y2="170" stroke="#333333"/>',
                        '<line x1="260" y1="170" x2="640" y2="170" stroke="#333333"/>',
                        '<text x="450" y="206" text-anchor="middle">m</text>']


def test_the_bars_whiskers_and_texts_of_each_row():
    lines = lines_of(render_svg(report()))
    start = lines.index('<text x="450" y="206" text-anchor="middle">m</text>') + 1
    assert lines[start:start + 14] == [
        '<text x="252" y="95" text-anchor="end" dominant-baseline="middle">base config</text>',
        '<rect x="260" y="87" width="271.4" height="16" fill="#4c78a8"><title>base config: base config</title></rect>',
        '<line x1="531.4" y1="95" x2="531.4" y2="95" stroke="#222222" stroke-width="1.5"/>',
        '<line x1="531.4" y1="90" x2="531.4" y2="100" stroke="#222222" stroke-width="1.5"/>',
        '<line x1="531.4" y1="90" x2="531.4" y2="100" stroke="#222222" stroke-width="1.5"/>',
        '<text x="537.4" y="95" dominant-baseline="middle" stroke="#ffffff" stroke-width="3" paint-order="stroke">50.00</text>',
        '<text x="252" y="125" text-anchor="end" dominant-baseline="middle">cand</text>',
        '<rect x="260" y="117" width="325.7" height="16" fill="#54a24b"><title>cand: +20.0% beats</title></rect>',
        '<line x1="558.6" y1="125" x2="612.9" y2="125" stroke="#222222" stroke-width="1.5"/>',
        '<line x1="558.6" y1="120" x2="558.6" y2="130" stroke="#222222" stroke-width="1.5"/>',
        '<line x1="612.9" y1="120" x2="612.9" y2="130" stroke="#222222" stroke-width="1.5"/>',
        '<text x="618.9" y="125" dominant-baseline="middle" stroke="#ffffff" stroke-width="3" paint-order="stroke">'
        '60.00 (+20.0%)</text>',
        '<text x="252" y="155" text-anchor="end" dominant-baseline="middle">ref</text>',
        '<rect x="260" y="147" width="380" height="16" fill="none" stroke="#6b6b6b" stroke-dasharray="3,3">'
        '<title>not in this release</title></rect>',
    ]
    assert lines[start + 14] == '<text x="268" y="155" dominant-baseline="middle" fill="#6b6b6b" font-style="italic">refused</text>'


def test_the_legend():
    lines = lines_of(render_svg(report()))
    assert lines[-9:] == [
        '<rect x="16" y="218" width="12" height="12" fill="#4c78a8"/>', '<text x="32" y="228">base</text>',
        '<rect x="106" y="218" width="12" height="12" fill="#54a24b"/>', '<text x="122" y="228">keep</text>',
        '<rect x="196" y="218" width="12" height="12" fill="#9d9d9d"/>', '<text x="212" y="228">no gain</text>',
        '<rect x="286" y="218" width="12" height="12" fill="#f58518"/>', '<text x="302" y="228">slower</text>',
        "</svg>",
    ]


def test_a_crash_and_a_gate_failure_are_drawn_in_red():
    rows = [{"name": "c", "verdict": "crashed", "label": "crashed: oom", "stats": None, "reason": "r1"},
            {"name": "g", "verdict": "gate failed", "label": "gate failed", "stats": None, "reason": "r2"},
            {"name": "s", "verdict": "slower", "mean": 40.0, "gain_pct": -20.0, "label": "slower",
             "stats": {"mean": 40.0, "min": 40.0, "max": 40.0}, "reason": "r3"},
            {"name": "n", "verdict": "no gain", "mean": 50.5, "gain_pct": 1.0, "label": "no gain",
             "stats": {"mean": 50.5, "min": 50.5, "max": 50.5}, "reason": "r4"}]
    svg = render_svg(report(rows=rows))
    assert 'stroke="#c0392b" stroke-dasharray="3,3"><title>r1</title></rect>' in svg
    assert 'stroke="#c0392b" stroke-dasharray="3,3"><title>r2</title></rect>' in svg
    assert 'fill="#c0392b" font-style="italic">crashed: oom</text>' in svg
    assert 'fill="#c0392b" font-style="italic">gate failed</text>' in svg
    assert 'fill="#f58518"><title>s: r3</title></rect>' in svg
    assert 'fill="#9d9d9d"><title>n: r4</title></rect>' in svg


def test_the_ceiling_line_and_its_label():
    # the peak is still the candidate's 65, so the axis runs to 70; x(61.2) = 260 + 380 * 61.2 / 70 = 592.2
    lines = lines_of(render_svg(report(ceiling={"tokens_per_s": 61.2, "bound": "memory bandwidth"})))
    assert lines[-11:-9] == [
        '<line x1="592.2" y1="74" x2="592.2" y2="170" stroke="#b22222" stroke-width="1.5" stroke-dasharray="6,4"/>',
        '<text x="592.2" y="70" text-anchor="end" fill="#b22222">ceiling 61.20 tok/s (memory bandwidth)</text>',
    ]
    lines = lines_of(render_svg(report(ceiling={"tokens_per_s": 61.2})))
    assert lines[-10] == '<text x="592.2" y="70" text-anchor="end" fill="#b22222">ceiling 61.20 tok/s</text>'


def test_a_ceiling_above_every_run_sets_the_axis():
    # peak 100 -> 105 -> raw 13.1 -> step 20, axis to 120; x(100) = 260 + 380 * 100 / 120 = 576.7
    svg = render_svg(report(ceiling={"tokens_per_s": 100.0}))
    assert '<text x="640" y="188" text-anchor="middle">120</text>' in svg
    assert '<line x1="576.7" y1="74" x2="576.7" y2="170"' in svg


def test_the_value_text_sits_right_of_the_bar_when_there_is_no_whisker_past_it():
    rows = [{"name": "odd", "verdict": "keep", "mean": 60.0, "gain_pct": 20.0, "label": "keep",
             "stats": {"mean": 60.0, "min": 50.0, "max": 55.0}, "reason": "r"}]
    # peak 55 -> 57.75 -> raw 7.2 -> step 10, axis 60; text at x(60) + 6 = 640 + 6
    assert '<text x="646" y="125" dominant-baseline="middle"' in render_svg(report(rows=rows))


def test_labels_are_cut_at_30_characters_and_text_is_escaped():
    svg = render_svg(report(name="x" * 30, metric='a<b>&"c\''))
    assert ">%s</text>" % ("x" * 30) in svg
    svg = render_svg(report(name="y" * 31))
    assert ">%s\u2026</text>" % ("y" * 29) in svg
    svg = render_svg(report(metric='a<b>&"c\''))
    assert 'aria-label="SGLang flag tuning: a&lt;b&gt;&amp;&quot;c&#39;"' in svg
    assert '<text x="450" y="206" text-anchor="middle">a&lt;b&gt;&amp;&quot;c&#39;</text>' in svg


@pytest.mark.parametrize("top, ticks, step", [
    (8.0, 8, 1.0), (16.0, 8, 2.0), (20.0, 8, 2.5), (20.8, 8, 5.0), (40.0, 8, 5.0), (40.8, 8, 10.0), (80.0, 8, 10.0),
    (0.88, 8, 0.2), (12.0, 6, 2.0), (12.0, 0, 20.0), (3.0, 1, 5.0), (1000.0, 8, 200.0),
])
def test_each_round_step_at_its_edge(top, ticks, step):
    assert nice_step(top, ticks) == pytest.approx(step)


def test_the_default_is_six_ticks():
    assert nice_step(12.0) == 2.0
    assert nice_step(30.0) == 5.0


@pytest.mark.parametrize("peak, labels", [
    (3.0, ["0.0", "0.5", "1.0", "1.5", "2.0", "2.5", "3.0", "3.5"]),  # 3.15 -> step 0.5
    (18.0, ["0.0", "2.5", "5.0", "7.5", "10.0", "12.5", "15.0", "17.5", "20.0"]),  # 18.9 -> step 2.5
    (14.0, ["0", "2", "4", "6", "8", "10", "12", "14", "16"]),                    # 14.7 -> step 2
    (0.6, ["0.0", "0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7"]),        # 0.63 -> step 0.1
    (0.2, ["0.00", "0.05", "0.10", "0.15", "0.20", "0.25"]),                # 0.21 -> step 0.05
])
def test_tick_labels_have_the_decimals_of_the_step(peak, labels):
    rows = [{"name": "a", "verdict": "keep", "mean": peak, "gain_pct": 1.0, "label": "keep",
             "stats": {"mean": peak, "min": peak, "max": peak}, "reason": "r"}]
    chart = report(rows=rows)
    chart["baseline"] = {"mean": peak / 2, "min": peak / 2, "max": peak / 2}
    texts = [line.split(">")[1].split("<")[0] for line in render_svg(chart).splitlines() if 'y="158" text-anchor="middle"' in line]
    assert texts == labels  # two rows: the axis at 80 + 60, its labels 18 px under it


def test_the_default_of_six_ticks_where_seven_would_round_otherwise():
    assert nice_step(12.5) == 2.5  # 12.5 / 6 = 2.08 -> 2.5; over 7 ticks it would be 2
    assert nice_step(12.5, 7) == 2.0


@pytest.mark.parametrize("step, text", [(1e-5, "0.00003"), (1e-6, "0.000003"), (1e-7, "0.000000"), (1e-9, "0.000000")])
def test_tick_labels_carry_at_most_six_decimals(step, text):
    assert _tick_label(3 * step, step) == text
