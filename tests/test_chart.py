"""The memory chart: its numbers (read back from the matplotlib figure before it is
saved), the PNG, its layout (no two texts overlap), lazy imports and rendering off the
event loop."""

from __future__ import annotations

import asyncio
import struct
from itertools import combinations

import pytest
from matplotlib.colors import to_hex
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.text import Annotation, Text

from adapters.chart import (
    LINE_HEADROOM,
    ChartData,
    build_figure,
    card_limit_gb,
    chart_data,
    chart_size,
    render_chart,
    render_png,
    text_colour_on,
)
from adapters.parse import parse_query
from adapters.report import COMPONENT_COLOURS
from engine import Method, estimate
from engine.constants import CARD_GB_BYTES, GB, USABLE_FRACTION
from engine.fit import resolve_stage
from engine.memory import COMPONENTS, footprint
from engine.profiles import resolve
from engine.specs import Catalog
from tests.imports import modules_loaded

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

BIG = "70b qlora 50M tokens"
SMALL = "0.5b lora 10M tokens"


def data_for(query: str, catalog: Catalog) -> ChartData:
    return chart_data(parse_query(query, catalog), catalog)


def bar_heights(fig: Figure) -> dict[str, dict[str, float]]:
    """``{method: {component: height}}`` from the memory axes' bar patches."""
    memory = next(ax for ax in fig.axes if ax.get_gid() == "memory")
    out: dict[str, dict[str, float]] = {}
    for patch in memory.patches:
        gid = patch.get_gid() or ""
        if ":" in gid:
            method, component = gid.split(":")
            out.setdefault(method, {})[component] = patch.get_height()
    return out


def png_size(png: bytes) -> tuple[int, int]:
    """Width and height from the IHDR chunk (the first chunk after the signature)."""
    length, kind = struct.unpack(">I4s", png[8:16])
    assert (length, kind) == (13, b"IHDR")
    return struct.unpack(">II", png[16:24])


def visible_texts(fig: Figure) -> list[Text]:
    """The texts that are drawn: tick labels only for ticks inside the axis limits (the
    locator makes a few beyond them, which matplotlib does not draw)."""
    ticks: set[int] = set()
    drawn_ticks: list[Text] = []
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            low, high = sorted(axis.get_view_interval())
            for tick, loc in zip(axis.get_major_ticks(), axis.get_majorticklocs(),
                                 strict=False):
                for label in (tick.label1, tick.label2):
                    ticks.add(id(label))
                    if low <= loc <= high:
                        drawn_ticks.append(label)
    texts = [t for t in fig.findobj(Text) if id(t) not in ticks] + drawn_ticks
    return [t for t in texts if t.get_visible() and t.get_text().strip()]


# -- the numbers ------------------------------------------------------------------------------
def test_a_limit_question_is_drawn_at_its_answer(catalog):
    request = parse_query("8b lora max seq on h100", catalog)
    est = estimate(request, catalog)

    data = chart_data(request, catalog)

    assert f"seq {est.request.seq_len:,}" in data.title
    lora = next(b for b in data.bars if b.method is Method.LORA)
    assert lora.total == pytest.approx(est.memory.total)
    qlora = next(b for b in data.bars if b.method is Method.QLORA)
    assert f"{qlora.total:.1f}" in qlora.plan[-1]  # its label is its own bar's plan


def test_a_tensor_parallel_chart_draws_qlora_without_tensor_parallelism(catalog):
    request = parse_query("70b lora tp 2 8x h100 50M tokens", catalog)
    est = estimate(request, catalog)

    data = chart_data(request, catalog)

    qlora = next(b for b in data.bars if b.method is Method.QLORA)
    row = next(w for w in est.what_if if w.label == "QLoRA, no tp")
    assert qlora.label == "QLoRA, no tp"
    assert qlora.total == pytest.approx(row.per_gpu_gb)


def test_a_fewest_cards_chart_gives_each_method_its_own_count(catalog):
    request = parse_query("70b full fewest cards on h100 50M tokens", catalog)

    data = chart_data(request, catalog)

    counts = {b.method: b.plan[0] for b in data.bars}
    assert counts[Method.QLORA] == "1x h100-sxm" and counts[Method.FULL] != counts[Method.QLORA]


def test_bars_count_the_frameworks_defaults_as_the_estimate_does(catalog):
    request = parse_query("llama-3.1-8b full torchtune seq 8192 h100", catalog)
    arch = catalog.model(request.model).architecture

    heights = bar_heights(build_figure(chart_data(request, catalog)))

    resolved = resolve(request, arch)  # pure BF16 states under torchtune
    fp = footprint(arch, resolved)
    expected = fp.per_gpu(resolve_stage(resolved.sharding, 1), 1, resolved.offload).as_dict()
    assert heights["full"] == pytest.approx(expected, rel=1e-12)


def test_bars_are_the_one_card_memory_of_each_method_by_component(catalog):
    request = parse_query(BIG, catalog)
    arch = catalog.model(request.model).architecture

    heights = bar_heights(build_figure(chart_data(request, catalog)))

    for method in Method:
        variant = request.model_copy(update={"method": method})
        fp = footprint(arch, variant)
        expected = fp.per_gpu(resolve_stage(variant.sharding, 1), 1, variant.offload).as_dict()
        assert heights[method.value] == pytest.approx(expected, rel=1e-12)


def test_bars_equal_each_estimates_memory_when_every_method_runs_on_one_card(catalog):
    request = parse_query(SMALL, catalog)

    heights = bar_heights(build_figure(chart_data(request, catalog)))

    for method in Method:
        est = estimate(request.model_copy(update={"method": method}), catalog)
        assert est.count == 1
        assert heights[method.value] == pytest.approx(est.memory.as_dict(), rel=1e-12)


def test_segments_stack_in_the_text_breakdowns_order(catalog):
    fig = build_figure(data_for(BIG, catalog))
    memory = next(ax for ax in fig.axes if ax.get_gid() == "memory")

    full = [p for p in memory.patches if (p.get_gid() or "").startswith("full:")]

    assert [p.get_gid().split(":")[1] for p in full] == list(COMPONENTS)
    tops = [p.get_y() + p.get_height() for p in full]
    assert [p.get_y() for p in full[1:]] == pytest.approx(tops[:-1])


def test_segments_have_the_breakdown_colours(catalog):
    fig = build_figure(data_for(BIG, catalog))
    memory = next(ax for ax in fig.axes if ax.get_gid() == "memory")

    for patch in memory.patches:
        gid = patch.get_gid() or ""
        if ":" in gid:
            assert to_hex(patch.get_facecolor()).upper() == COMPONENT_COLOURS[gid.split(":")[1]]


def test_the_70b_full_bar_dwarfs_qlora(catalog):
    data = data_for(BIG, catalog)
    totals = {b.method: b.total for b in data.bars}

    assert totals[Method.FULL] > 1000 and totals[Method.QLORA] == pytest.approx(48.75, abs=0.1)


def test_card_lines_sit_at_85_percent_of_true_capacity(catalog):
    fig = build_figure(data_for("70b qlora 50M tokens h100", catalog))
    lines = {str(line.get_gid()): line.get_ydata()[0] for line in fig.findobj(Line2D)
             if str(line.get_gid()).startswith("line:")}

    eighty = 80 * CARD_GB_BYTES / GB * USABLE_FRACTION
    assert lines["line:80 GB card, h100-sxm (pick)"] == pytest.approx(round(eighty, 1))
    assert lines["line:24 GB card"] == pytest.approx(round(card_limit_gb(24), 1))
    assert card_limit_gb(80) == pytest.approx(eighty)


def test_the_footnote_states_the_share_of_memory_the_lines_are_drawn_at(catalog):
    fig = build_figure(data_for("70b qlora 50M tokens h100", catalog))

    share = f"({USABLE_FRACTION:.0%} of its memory)"
    assert any(share in t.get_text() for t in fig.texts), [t.get_text() for t in fig.texts]


def test_lines_far_above_the_bars_are_named_in_the_footnote_not_drawn(catalog):
    data = data_for(SMALL, catalog)
    fig = build_figure(data)

    tallest = max(b.total for b in data.bars)
    drawn = [line.get_ydata()[0] for line in fig.findobj(Line2D)
             if str(line.get_gid()).startswith("line:")]
    # The pick for a 0.5B run is the cheapest card (a 32 GB RTX 5090), far above it too.
    assert {ln.label for ln in data.off_scale} == {"24 GB card", "rtx-5090 (pick)", "80 GB card"}
    assert all(y <= LINE_HEADROOM * tallest for y in drawn)
    assert any(
        "Above the scale: 24 GB card 21.9, rtx-5090 (pick) 29.2, 80 GB card 73.0" in t.get_text()
        for t in fig.texts
    )


def test_lines_too_close_to_be_told_apart_are_named_not_drawn(catalog):
    data = data_for(BIG, catalog)  # 1,135 GB scale: 21.9 and the pick's 29.2 GB a hair apart

    assert [ln.label for ln in data.crowded] == ["24 GB card"]
    assert all(ln.label != "24 GB card" for ln in data.lines)
    assert any(ln.recommended for ln in data.lines)


def test_cost_and_wall_clock_bars_are_the_top_picks(catalog):
    request = parse_query(BIG, catalog)
    fig = build_figure(chart_data(request, catalog))
    priced = [o for o in estimate(request, catalog).options
              if o.fits and o.timing.cost_usd is not None][:5]

    axes = {ax.get_gid(): ax for ax in fig.axes}
    cost = [p.get_width() for p in axes["cost"].patches]
    wall = [p.get_width() for p in axes["time"].patches]
    labels = [t.get_text() for t in axes["cost"].get_yticklabels()]

    assert cost == pytest.approx([o.timing.cost_usd for o in priced])
    assert wall == pytest.approx([o.timing.wall_hours for o in priced])
    assert labels == [f"{o.count}x {o.gpu.id}" for o in priced]


def test_without_tokens_there_is_no_cost_panel_and_the_footnote_says_how_to_get_one(catalog):
    data = data_for("70b qlora", catalog)
    fig = build_figure(data)

    assert not data.wide and data.picks == ()
    assert {ax.get_gid() for ax in fig.axes} == {"memory"}
    assert any("Add a dataset size" in t.get_text() for t in fig.texts)


def test_title_names_model_sequence_and_batch(catalog):
    data = data_for("8b qlora seq 8k bs 4", catalog)

    assert data.title == "Llama 3.1 8B · seq 8,192 · batch 4"


def test_the_asked_method_is_marked(catalog):
    asked = data_for("8b qlora", catalog)
    default = data_for("8b", catalog)

    assert [b.label for b in asked.bars] == ["Full", "LoRA", "QLoRA (asked)"]
    assert [b.label for b in default.bars] == ["Full", "LoRA (default)", "QLoRA"]


def test_value_labels_contrast_with_their_segment():
    def contrast(a: str, b: str) -> float:
        from adapters.chart import _luminance

        hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
        return (hi + 0.05) / (lo + 0.05)

    for colour in COMPONENT_COLOURS.values():
        assert contrast(colour, text_colour_on(colour)) >= 4.5, colour


# -- the picture ------------------------------------------------------------------------------
@pytest.mark.parametrize(("query", "size"), [(BIG, (1600, 900)), ("70b qlora", (1050, 900))])
def test_png_is_valid_and_of_the_expected_size(catalog, query, size):
    data = data_for(query, catalog)

    png = render_png(data)

    assert png.startswith(PNG_SIGNATURE)
    assert png_size(png) == chart_size(data) == size
    assert png.endswith(b"IEND\xaeB`\x82")


@pytest.mark.parametrize(
    "query",
    [
        BIG,
        "70b full 50M tokens h100",
        SMALL,
        "0.5b",
        "8b full 20M tokens a100-80gb-pcie",  # the longest card ids under the bars
        "405b full 1B tokens",
        "mixtral-8x22b qlora seq 32k 5M tokens 8x a100-40gb-pcie",
    ],
)
def test_no_two_texts_overlap_and_all_stay_on_the_picture(catalog, query):
    fig = build_figure(data_for(query, catalog))
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    width, height = fig.canvas.get_width_height()

    texts = visible_texts(fig)
    # An annotation's box takes in its leader; the words themselves are Text's own box.
    boxes = [(t.get_text(), Text.get_window_extent(t, renderer)) for t in texts]
    leaders = [(t.get_text(), t.arrow_patch.get_window_extent(renderer)) for t in texts
               if isinstance(t, Annotation) and t.arrow_patch is not None]

    for text, box in [*boxes, *leaders]:
        assert box.x0 >= 0 and box.y0 >= 0 and box.x1 <= width and box.y1 <= height, text
    clashes = [(a, b) for (a, box_a), (b, box_b) in combinations(boxes, 2)
               if box_a.shrunk(0.98, 0.98).overlaps(box_b.shrunk(0.98, 0.98))]
    crossed = [(a, b) for a, leader in leaders for b, box in boxes
               if a != b and leader.shrunk(0.98, 0.98).overlaps(box.shrunk(0.98, 0.98))]
    assert clashes == [] and crossed == []


# -- imports and the event loop --------------------------------------------------------------
def test_front_ends_start_without_importing_matplotlib():
    front_ends = ("import adapters.cli, adapters.slack.app, adapters.discord.client, "
                  "adapters.chart, bot.service")

    assert modules_loaded(front_ends, ("matplotlib", "PIL")) == []


async def test_rendering_leaves_the_event_loop_free_to_answer(catalog):
    request = parse_query(BIG, catalog)
    pings: asyncio.Queue[int] = asyncio.Queue()
    pongs: list[int] = []

    async def ponger() -> None:
        while True:
            pongs.append(await pings.get())

    answering = asyncio.create_task(ponger())
    render = asyncio.create_task(render_chart(request, catalog))
    sent = 0
    while not render.done():
        sent += 1
        await pings.put(sent)
        await asyncio.sleep(0.002)
    image = await render
    answering.cancel()

    assert image.png.startswith(PNG_SIGNATURE)
    assert len(pongs) >= 3  # answered while the chart was being drawn


@pytest.mark.parametrize("split", ["tp 8 16x h100", "cp 4 seq 32k 4x h100"])
def test_a_bar_is_the_whole_run_on_one_gpu_whatever_splits_the_run(catalog, split):
    """Tensor and context parallelism put one card's share of a group on each card; the
    chart's bars compare the methods on one GPU holding the whole run."""
    from adapters.chart_data import one_card_memory

    model = "70b" if "tp" in split else "8b"
    plain = parse_query(f"{model} lora {split.split(' ', 2)[-1]}", catalog)
    split_run = parse_query(f"{model} lora {split}", catalog)
    spec = catalog.model(plain.model)
    assert (one_card_memory(split_run, spec).total
            == pytest.approx(one_card_memory(plain, spec).total))
