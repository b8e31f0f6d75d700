"""The estimate: one request in, memory, cards, time, cost, what-ifs and caveats out.

:func:`estimate` is the engine's single entry point. It is pure and synchronous:
the catalog is passed in (or the packaged default is used) and nothing is read,
written or awaited here.
"""

from __future__ import annotations

from engine import warnings as caveats
from engine.accuracy import uncertainty
from engine.assumptions import assumptions
from engine.choices import Method, Mode, Sharding, Solve, StatePrecision
from engine.compute import Compute, compute
from engine.constants import (
    BAND_FULL,
    MAX_OPTIONS,
    MAX_SEQ_LEN,
)
from engine.constraints import constrain
from engine.datasets import dataset_assumptions
from engine.fit import (
    Option,
    Sizer,
    count_on_card,
    fewest_cards,
    make_option,
    resolve_stage,
    stage_on,
)
from engine.memory import COMPONENTS, Footprint, footprint
from engine.profiles import resolve
from engine.ranking import (
    Card,
    cards,
    cards_of_memory,
    rank_cards,
    request_bills_machines,
    request_price,
)
from engine.request import Request
from engine.result import Estimate, WhatIf, option_sharding
from engine.solve import solve
from engine.solve_limits import fewest_row, within_limits
from engine.specs import Catalog, GpuSpec, ModelSpec, UnknownId
from engine.warning_context import Context, changes_on_lead

# --------------------------------------------------------------------------- #


_CARD_TABLES: dict[int, tuple[Catalog, list[Card]]] = {}


def _card_table(catalog: Catalog) -> list[Card]:
    """The catalog's cards with their ranking figures, built once per catalog."""
    hit = _CARD_TABLES.get(id(catalog))
    if hit is None or hit[0] is not catalog:
        if len(_CARD_TABLES) > 16:
            _CARD_TABLES.clear()
        hit = (catalog, cards(list(catalog.gpus.values())))
        _CARD_TABLES[id(catalog)] = hit
    return hit[1]


def _best_options(
    fp: Footprint, request: Request, work: Compute, table: list[Card], keep: int,
    fastest: bool = False,
) -> tuple[list[Option], Option | None]:
    """The fewest-cards option for every card that can hold the run, best ``keep``, and
    with ``fastest`` the one with the shortest wall-clock (:attr:`Estimate.fastest`).

    Every card is sized and ranked with plain arithmetic; only the options shown
    are built in full.
    """
    sizer = Sizer(fp, request.sharding, request.offload, machines=work.flops is not None)
    # Nodes the user named are the named card's; other cards run on their own nodes.
    nodes = request.nodes if request.gpu is None else None
    # A price said with a card is that card's (:func:`user_price`); the named card's own
    # option is built apart (``_named_option``), so the ranking prices the others.
    given = request.price_per_gpu_hour if request.gpu is None else None
    ranking = rank_cards(
        sizer,
        table,
        work,
        given,
        request.mode,
        keep,
        request.offload,
        nodes,
        request.gpu_count if request.gpu is None else None,
        request.spot,
        fastest,
    )
    if not ranking.best and request.gpu is None and request.gpu_count is not None:
        # No card holds the run at the count named: show the fewest that do (a warning
        # says why the count could not be honoured).
        ranking = rank_cards(
            sizer, table, work, given, request.mode, keep,
            request.offload, nodes, spot=request.spot, fastest=fastest,
        )

    def option(card: Card, count: int, stage: Sharding) -> Option:
        return make_option(fp, card.gpu, count, stage, work, request_price(request, card.gpu),
                           request.mode, request.offload, nodes=nodes,
                           billed=request_bills_machines(request, card.gpu))

    best = [option(*choice) for choice in ranking.best]
    if ranking.fastest is None:
        return best, None
    shown = {(o.gpu.id, o.count): o for o in best}  # built already: the same option
    card, count, stage = ranking.fastest
    return best, shown.get((card.gpu.id, count)) or option(card, count, stage)


def _named_option(fp: Footprint, request: Request, work: Compute, gpu: GpuSpec) -> Option:
    """The card the user named, at the count named (or the fewest that fit). A count the
    user named is timed even a little over the card's memory, within the estimate's own
    memory band (``make_option``'s ``margin``): the run may well start."""
    timed = work.flops is not None  # a plan to rent: on the machines clouds rent
    found = fewest_cards(fp, gpu, request.sharding, request.offload, machines=timed)
    needed = found[0] if found else None
    tight = None
    if found is None:  # no count within the planning line: one may still hold it, tight
        tight = fewest_cards(fp, gpu, request.sharding, request.offload, BAND_FULL, timed)
    margin = 0.0
    if request.gpu_count is not None:
        count = request.gpu_count
        stage = stage_on(fp, request.sharding, gpu, count, request.offload)
        margin = uncertainty(request).memory  # the band; a MoE model changes its wording only
    elif found is not None:
        count, stage = found
    else:
        count, stage = fp.tensor_parallel, resolve_stage(request.sharding, 1)
    return make_option(
        fp,
        gpu,
        count,
        stage,
        work,
        request_price(request, gpu),
        request.mode,
        request.offload,
        named=True,
        needed=needed if tight is None else tight[0],
        nodes=request.nodes,
        margin=margin,
        needed_tight=tight is not None,
        billed=request_bills_machines(request, gpu),
    )


def _plan(
    request: Request, model: ModelSpec, table: list[Card], catalog: Catalog, keep: int
) -> tuple[Footprint, Compute, list[Option], Option | None]:
    """The footprint, the work, the options (the named card first) and the fastest card
    (:attr:`Estimate.fastest`)."""
    fp = footprint(model.architecture, request)
    work = compute(model.active_params, request, model.architecture)
    if request.gpu is None:
        table = cards_of_memory(table, request.gpu_memory_gb)
    limited = request.budget_usd is not None or request.deadline_hours is not None
    # Nodes named for a card are that card's: the other cards are sized on their own.
    others = fp if request.gpu is None or request.nodes is None else footprint(
        model.architecture, request.model_copy(update={"nodes": None}))
    options, fastest = _best_options(others, request, work, table, keep, fastest=not limited)
    if request.gpu is not None:
        named = _named_option(fp, request, work, catalog.gpu(request.gpu))
        lead = [named]
        tight_too = named.runs and named.needed_tight  # another tight count: no better
        if not named.fits and named.needed and named.needed != named.count and not tight_too:
            # Right after a named count that is too small: the same card at a count that
            # fits (or, where none does within the planning line, runs tight: timed too).
            stage = stage_on(fp, request.sharding, named.gpu, named.needed, request.offload)
            price = named.price_per_gpu_hour
            lead.append(
                make_option(
                    fp,
                    named.gpu,
                    named.needed,
                    stage,
                    work,
                    price,
                    request.mode,
                    request.offload,
                    named=named.needed_tight,
                    nodes=request.nodes,
                    billed=request_bills_machines(request, named.gpu),
                )
            )
        options = [*lead, *(o for o in options if o.gpu.id != request.gpu)]
    return fp, work, options, fastest


def _what_if_variants(request: Request) -> list[tuple[str, Request]]:
    """The three methods, the full fine-tune's next question, and 0.5x / 2x / 4x sequence
    (in napkin mode the methods alone: its rule reads nothing else).

    The full fine-tune's extra row answers what a user asks next rather than repeating
    a row: with FP32 states, "Full, pure BF16" (torchtune/litgpt's regime, half the
    state); otherwise "Full + offload" (optimizer state in host memory).
    """
    labels = {Method.FULL: "Full", Method.LORA: "LoRA", Method.QLORA: "QLoRA"}
    # The request's own method is the request itself (an unsaid method included), so
    # its row reuses the estimate's footprint and workload.
    own = request.effective_method
    variants: list[tuple[str, Request]] = [
        (label, request if m is own else request.with_method(m))
        for m, label in labels.items()
    ]
    if request.mode is Mode.NAPKIN:
        return variants  # the napkin rule sees only the method: other rows would repeat it
    if request.tensor_parallel > 1:
        # Tensor parallelism does not split a 4-bit base: QLoRA is compared without it.
        variants[2] = ("QLoRA, no tp", variants[2][1])
    full = request.model_copy(update={"method": Method.FULL})
    if full.state_precision is StatePrecision.FP32 and full.precision.value != "fp32":
        pure = full.model_copy(update={"state_precision": StatePrecision.PURE_BF16})
        variants.append(("Full, pure BF16", pure))
    elif not full.offload:
        variants.append(("Full + offload", full.model_copy(update={"offload": True})))
    for factor, label in ((0.5, "½× seq"), (2, "2× seq"), (4, "4× seq")):
        seq = min(MAX_SEQ_LEN, max(1, int(request.seq_len * factor)))
        variants.append((f"{label} ({seq:,})", request.model_copy(update={"seq_len": seq})))
    return variants


def _what_ifs(
    request: Request,
    model: ModelSpec,
    catalog: Catalog,
    headline: Option | None,
    planned: tuple[Footprint, Compute],
) -> list[WhatIf]:
    """Each variant on the pick's card type, at the count it needs there.

    "At your settings" (the specification's what-if panel): every row uses the card
    the headline picked, so methods are compared on one card, at the count the user named
    where it holds the variant (as the headline allows, up to the whole card); under
    ``fewest cards`` each on its own fewest count, as the answer's note counts them
    (``engine.solve_limits.fewest_row``). A variant no count of that card holds names
    the smallest card that does. ``headline`` is the reply's own option (None when nothing
    fits) and ``planned`` the request's footprint and workload: the request's own row
    reuses them.
    """
    pick = headline.gpu if headline is not None else None
    base_method = request.effective_method
    table = _card_table(catalog)
    out: list[WhatIf] = []
    for label, variant in _what_if_variants(request):
        current = (
            variant.effective_method is base_method
            and variant.seq_len == request.seq_len
            and variant.tensor_parallel == request.tensor_parallel
            and variant.state_precision is request.state_precision
            and variant.offload is request.offload
        )
        if variant is request:
            fp, work = planned
        else:
            fp = footprint(model.architecture, variant)
            # Without a dataset a row has no time, so it needs no physical workload.
            timed = variant.dataset_tokens is not None
            work = compute(model.active_params, variant, model.architecture if timed else None)
        option: Option | None = None
        elsewhere: Option | None = None
        if variant is request and headline is not None and headline.runs:
            option = headline  # the request's own row is the headline's answer
        elif pick is not None and request.solve is Solve.GPU_COUNT:
            option = fewest_row(variant, model, fp, work, pick)  # each on its own fewest
        elif pick is not None:
            found = count_on_card(fp, pick, variant.sharding, variant.offload, variant.gpu_count,
                                  machines=work.flops is not None)
            if found is not None:
                option = make_option(
                    fp,
                    pick,
                    found[0],
                    found[1],
                    work,
                    request_price(variant, pick),
                    variant.mode,
                    variant.offload,
                    named=variant.gpu_count is not None,  # timed in the tight band too
                    nodes=variant.nodes,
                    billed=request_bills_machines(variant, pick),
                )
        if option is None:
            # Any card: a price the user gave for the named card is not another card's.
            anywhere = variant.model_copy(update={
                "gpu": None,
                "price_per_gpu_hour": variant.price_per_gpu_hour if variant.gpu is None else None,
            })
            best, _ = _best_options(fp, anywhere, work, table, 1)
            elsewhere = best[0] if best and best[0].fits else None
        shown = option or elsewhere
        note = None
        if option is None and pick is not None:
            note = (
                f"no count of {pick.id} holds it; smallest: {elsewhere.count}x {elsewhere.gpu.id}"
                if elsewhere is not None
                else f"no count of {pick.id} holds it, nor any catalog card"
            )
        out.append(
            WhatIf(
                label=label,
                request=variant,
                per_gpu_gb=shown.per_gpu_gb if shown else _one_card_gb(variant, model),
                gpu=shown.gpu if shown else None,
                count=shown.count if shown else None,
                gpu_hours=shown.timing.gpu_hours if shown else None,
                cost_usd=shown.timing.cost_usd if shown else None,
                current=current,
                note=note,
                wall_hours=shown.timing.wall_hours if shown else None,
                fit=shown.band if shown else None,
                sharding=option_sharding(shown, variant) if shown else None,
            )
        )
    return out


def _unsaid(request: Request, update: dict[str, object]) -> Request:
    """``request`` with ``update``'s values, which stay unsaid (the engine's, not the
    user's words)."""
    said = set(request.model_fields_set)
    out = request.model_copy(update=update)
    out.__pydantic_fields_set__ = said
    return out


def _one_card_gb(request: Request, model: ModelSpec) -> float:
    fp = footprint(model.architecture, request)
    return fp.per_gpu(resolve_stage(request.sharding, 1), 1, request.offload).total


def estimate(request: Request, catalog: Catalog | None = None) -> Estimate:
    """Estimate memory, cards, GPU-hours, wall-clock and cost for ``request``.

    ``catalog`` defaults to the packaged one (``catalog.loader.default_catalog``).
    Raises ``KeyError`` for a model or GPU id the catalog does not have (the
    parser only produces ids it resolved against the same catalog).
    """
    if catalog is None:
        from catalog.loader import default_catalog

        catalog = default_catalog()
    model = catalog.model(request.model)
    asked, request = request, resolve(request, model.architecture)
    if request.seq_len != asked.seq_len:
        # A dataset of long samples sized the sequence (resolve): the reply's request
        # says it, unsaid, so a follow-up (`double the seq`) and the buttons start there.
        asked = _unsaid(asked, {"seq_len": request.seq_len})
    # -- issue 16: a limit question is answered first; the estimate is at the answer.
    solution = solve(request, model, catalog) if request.solve is not None else None
    if solution is not None:  # fewest cards under a budget or deadline: the fewest meeting it
        solution = within_limits(solution, request, model, catalog)
    if solution is not None and solution.update:
        asked = _unsaid(asked, solution.update)  # the answer's values, not the user's words
        model = catalog.model(asked.model)
        request = resolve(asked, model.architecture)
    # --
    fp, work, options, fastest = _plan(request, model, _card_table(catalog), catalog,
                                       keep=MAX_OPTIONS)
    fits_anywhere = any(o.fits for o in options)
    # -- issue 16: a budget or deadline keeps only the options that meet it.
    limits = None
    if request.budget_usd is not None or request.deadline_hours is not None:
        limits = constrain(request, model, catalog, fp, work, MAX_OPTIONS)
        options = limits.options or options
    # --
    shown = options[:MAX_OPTIONS]
    if shown and (shown[0].fits or shown[0].named):
        memory, count = shown[0].memory, shown[0].count
    else:
        stage = resolve_stage(request.sharding, 1)
        memory, count = fp.per_gpu(stage, 1, request.offload), fp.tensor_parallel
    headline = shown[0] if shown and (shown[0].fits or shown[0].named) else None
    what_if = _what_ifs(request, model, catalog, headline, (fp, work))
    context = Context(
        request=request,
        model=model,
        footprint=fp,
        options=shown,
        compute=work,
        mfu_effective=request.mfu,
        fits_anywhere=fits_anywhere,
        framework_changes=changes_on_lead(request, model, fp, shown[0] if shown else None),
    )
    return Estimate(
        request=asked,
        model=model,
        memory=memory,
        count=count,
        options=shown,
        what_if=what_if,
        compute=work,
        warnings=caveats.warnings(context),
        assumptions=[*assumptions(context), *dataset_assumptions(request)],
        fits_anywhere=fits_anywhere,
        notes=[*caveats.notes(context, catalog), *(solution.notes if solution else ())],
        resolved=request if request is not asked else None,
        uncertainty=uncertainty(request, model.architecture.moe is not None),
        solution=solution,
        constraints=limits,
        framework_changes=list(context.framework_changes),
        fastest=fastest,
    )


def answered(request: Request, catalog: Catalog | None = None) -> Request:
    """``request`` at its limit question's answer (``max seq`` at the sequence it found),
    as the reply to it showed; ``request`` itself without a question, or when its model
    is no longer in ``catalog`` (a Hub model dropped from the cache)."""
    if request.solve is None:
        return request
    try:
        return estimate(request, catalog).request
    except UnknownId:
        return request


def question(request: Request) -> Request:
    """The question a limit answer answers: the reverse of :func:`answered`. The answer's
    request keeps what the user said and marks the solver's values (the sequence, model or
    count it found, the card it picked) unsaid, so this is the said fields alone; a control
    on the answer acts on it and solves again (QLoRA on a ``largest model`` answer searches
    every model, not the answer's family). ``request`` itself without a question."""
    if request.solve is None:
        return request
    return Request.model_validate(request.model_dump(exclude_unset=True))


__all__ = ["COMPONENTS", "answered", "estimate", "question"]
