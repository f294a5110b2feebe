"""Run pages: list, launch, the live run page, raw log and .traj downloads, cancel, share, unshare, replay,
resume, fork."""

from __future__ import annotations

import json
from collections.abc import Iterator
from uuid import UUID

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.roles import ADMIN, RESEARCHER, is_researcher, role_required
from benchmark.llm.check import launch_problem
from benchmark.models import AgentConfig, Run, StepNote
from benchmark.runs import forks, listing, notes, progress, search, services, slurm
from benchmark.runs.compare import cost_series, runs_compare, score_series
from benchmark.runs.forms import (
    NOTE_MAX_CHARS,
    ForkForm,
    LaunchForm,
    ShareForm,
    StepNoteForm,
    launch_blockers,
    launchable_tasks,
)
from benchmark.runs.listing import RunFilterForm
from benchmark.runs.permissions import can_manage_run, can_view_run, had_access, visible_runs
from benchmark.runs.trajectories import traj_export

INITIAL_STEPS = 2000  # steps embedded in the page; the websocket sends the rest


def _run_for(request: HttpRequest, code: UUID) -> Run:
    """The run, if this user may see it: 404 for unknown codes and for runs they may not see, 403
    for a run whose share to them was revoked (they knew it; the page says access was withdrawn)."""
    run = (
        Run.objects.select_related("task", "agent__endpoint", "owner", "replay_of", "fork_of", "group")
        .filter(code=code)
        .first()
    )
    if run is None:
        raise Http404("no such run")
    if not can_view_run(request.user, run):
        if had_access(request.user, run):
            raise PermissionDenied("Your access to this run was withdrawn by its owner or an admin.")
        raise Http404("no such run")
    return run


@require_GET
@role_required(RESEARCHER, ADMIN)
def run_list(request: HttpRequest) -> HttpResponse:
    """Every run this user may see, PAGE_SIZE a page, filtered, sorted and searched by the URL."""
    form = RunFilterForm(request.GET)
    form.is_valid()  # an invalid parameter is shown beside the form; the valid ones still apply
    filters = form.values()
    visible = visible_runs(request.user)
    matches = None
    if "q" in filters:  # the matching runs among those the other filters leave
        candidates = listing.runs_filtered(visible, filters, user=request.user)
        matches = search.recent_matches(filters["q"], candidates) or search.Matches(run_ids=[], capped=False)
    runs = listing.runs_filtered(
        visible.select_related("owner", "group", "agent__endpoint"), filters, user=request.user, matches=matches
    )
    page = Paginator(runs, listing.PAGE_SIZE).get_page(request.GET.get("page"))
    first = search.first_match_indexes(filters["q"], [run.pk for run in page]) if matches else {}
    for run in page:
        run.first_match = first.get(run.pk)
    context = {
        "form": form,
        "filters": filters,
        "page": page,
        "group": listing.group_for(filters, visible),
        "choices": listing.filter_choices(visible),
        "search_capped": matches is not None and matches.capped,
        "match_window": search.MATCH_WINDOW,
    }
    return render(request, "benchmark/run_list.html", context)


@require_http_methods(["GET", "POST"])
@role_required(RESEARCHER, ADMIN)
def run_launch(request: HttpRequest) -> HttpResponse:
    # "Launch on this task" links here with ?task=<code>: those tasks come ticked.
    try:
        ticked = list(launchable_tasks().filter(code__in=request.GET.getlist("task")).values_list("pk", flat=True))
    except ValidationError:  # not a UUID: nothing ticked
        ticked = []
    form = LaunchForm(request.POST or None, user=request.user, initial={"tasks": ticked} if ticked else None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        problem = None
        if data["agent_kind"] == AgentConfig.Kind.MODEL:
            problem = launch_problem(endpoint=data["endpoint"], model=data["model_name"], user=request.user)
        if problem:  # nothing launched: the endpoint's answer is shown where the model was chosen
            form.add_error("model", f"The endpoint failed its check, so nothing was launched: {problem}")
            return render(request, "benchmark/run_launch.html", {"form": form})
        agent = form.agent_config(user=request.user)
        try:
            runs = services.run_launch(
                owner=request.user,
                tasks=list(data["tasks"]),
                agent=agent,
                n_runs=data["n_runs"],
                limits=services.Limits(
                    max_steps=data["max_steps"], cost_limit=data["cost_limit"], command_timeout=data["command_timeout"]
                ),
                title=data.get("title") or "",
                note=data.get("note") or "",
            )
        except services.LaunchError as exc:  # the form keeps what was typed; try again in a moment
            form.add_error(None, str(exc))
            return render(request, "benchmark/run_launch.html", {"form": form}, status=503)
        messages.success(request, f"Launched {len(runs)} run(s).")
        if len(runs) == 1:
            return redirect("benchmark:run_detail", code=runs[0].code)
        return redirect(f"{reverse('benchmark:run_list')}?group={runs[0].group.code}")  # the new runs only
    blocked = launch_blockers(request.GET.getlist("task")[:20])
    return render(request, "benchmark/run_launch.html", {"form": form, "blocked": blocked})


@require_GET
@role_required(RESEARCHER, ADMIN)
def run_detail(request: HttpRequest, code: UUID) -> HttpResponse:
    run = _run_for(request, code)
    steps = progress.steps_after(run.pk, -1, limit=INITIAL_STEPS)  # imported runs may count from 0
    context = {
        "run": run,
        "steps": steps,
        "run_state": progress.run_payload(run),
        "can_manage": can_manage_run(request.user, run),
        "share_form": ShareForm(),
        "shared_with": [share.user for share in run.shares.filter(revoked_at__isnull=True).select_related("user")],
        "scores": run.scores.select_related("step").order_by("created_at", "id"),
        "score_series": [score_series(run, "this run")],
        "cost_series": cost_series(run),
        "no_trajectory": run.source == Run.Source.MLGYM and not run.step_count,
        "notes": notes.notes_by_step(run, user=request.user, can_manage=can_manage_run(request.user, run)),
        "note_max": NOTE_MAX_CHARS,
        "slurm_queue": slurm.queued_note(run),  # "queued on Slurm (job N, reason: ...)", from squeue
        # Only the forks this user may see: an admin's fork of a researcher's run is the admin's.
        "forks": visible_runs(request.user).filter(fork_of=run).select_related("agent").order_by("created_at"),
        "can_fork": can_manage_run(request.user, run) and not forks.fork_refusal(run),
        # A live run of Referee becomes forkable when it ends: run.js shows the links then, for those
        # who may fork (the owner and admins); the fork page checks again.
        "fork_later": run.is_active and run.source == Run.Source.REFEREE and can_manage_run(request.user, run),
        "fork_statuses": " ".join(forks.FORKABLE_STATUSES),
    }
    return render(request, "benchmark/run_detail.html", context)


@require_POST
@role_required(RESEARCHER, ADMIN)
def step_note_add(request: HttpRequest, code: UUID, index: int) -> HttpResponse:
    """Annotate a step: anyone who may see the run may add a note that its other viewers read."""
    run = _run_for(request, code)
    step = run.steps.filter(index=index).first()
    if step is None:
        raise Http404("no such step")
    form = StepNoteForm(request.POST)
    if form.is_valid():
        StepNote.objects.create(run=run, step=step, author=request.user, **form.cleaned_data)
        messages.success(request, f"Note added to step {index}.")
    else:
        problems = "; ".join(f"{name}: {' '.join(errors)}" for name, errors in form.errors.items())
        messages.error(request, f"The note was not saved ({problems}).")
    return redirect(f"{reverse('benchmark:run_detail', kwargs={'code': run.code})}#step-{index}")


@require_POST
@role_required(RESEARCHER, ADMIN)
def step_note_delete(request: HttpRequest, code: UUID, note: UUID) -> HttpResponse:
    """Its author, the run's owner or an admin may delete a note."""
    run = _run_for(request, code)
    found = run.notes.select_related("step").filter(code=note).first()
    if found is None:
        raise Http404("no such note")
    if not notes.can_delete_note(request.user, found, can_manage=can_manage_run(request.user, run)):
        raise PermissionDenied
    found.delete()
    messages.success(request, f"Note on step {found.step.index} deleted.")
    return redirect(f"{reverse('benchmark:run_detail', kwargs={'code': run.code})}#step-{found.step.index}")


@require_GET
@role_required(RESEARCHER, ADMIN)
def run_notes(request: HttpRequest, code: UUID) -> HttpResponse:
    """The run's step notes as a side file of the .traj export (the trajectory itself stays as recorded)."""
    run = _run_for(request, code)
    response = HttpResponse(json.dumps(notes.notes_export(run), indent=1), content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="{run.task.slug}-{run.code}.notes.json"'
    return response


@require_GET
@role_required(RESEARCHER, ADMIN)
def run_compare(request: HttpRequest) -> HttpResponse:
    """Two runs side by side (?run=A&run=B): facts, score curves, steps aligned with their diffs."""
    codes = request.GET.getlist("run")
    try:
        parsed = [UUID(code) for code in codes]
    except ValueError:
        parsed = []
    if len(parsed) != 2 or parsed[0] == parsed[1]:
        error = "Choose exactly two different runs to compare (tick two in the runs list)."
        return render(request, "benchmark/run_compare.html", {"error": error}, status=400)
    start = request.GET.get("from", "")
    if start and not start.isdigit():
        error = f"“from” is the step to compare from, a whole number, not “{start}”."
        return render(request, "benchmark/run_compare.html", {"error": error}, status=400)
    a, b = (_run_for(request, code) for code in parsed)
    comparison = runs_compare(a, b, start=int(start) if start else None)
    return render(request, "benchmark/run_compare.html", {"a": a, "b": b, "comparison": comparison})


def _log_lines(run: Run) -> Iterator[str]:
    yield f"# run {run.code} - task {run.task.slug} - agent {run.agent.name}\n"
    yield f"# status {run.status} - exit {run.exit_status or '-'} - cost ${run.cost:.4f} - steps {run.step_count}\n"
    for step in run.steps.order_by("index").iterator(chunk_size=500):
        took = f"{step.execution_time:.2f}s" if step.execution_time is not None else "time unknown"
        yield f"\n===== step {step.index} ({took}) =====\n"
        yield f"--- thought\n{step.thought.rstrip()}\n--- action\n{step.action.rstrip()}\n"
        yield f"--- observation\n{step.observation.rstrip()}\n"


@require_GET
@role_required(RESEARCHER, ADMIN)
def run_log(request: HttpRequest, code: UUID) -> StreamingHttpResponse:
    run = _run_for(request, code)
    response = StreamingHttpResponse(_log_lines(run), content_type="text/plain; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="run-{run.code}.log"'
    return response


@require_GET
@role_required(RESEARCHER, ADMIN)
def run_traj(request: HttpRequest, code: UUID) -> HttpResponse:
    run = _run_for(request, code)
    response = HttpResponse(json.dumps(traj_export(run), indent=1), content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="{run.task.slug}-{run.code}.traj"'
    return response


@require_POST
@role_required(RESEARCHER, ADMIN)
def run_cancel(request: HttpRequest, code: UUID) -> HttpResponse:
    """Cancel after a confirmation: a POST without confirm=yes (the run page's button, without
    JavaScript's confirm()) shows what cancelling does and asks again; nothing is written."""
    run = _run_for(request, code)
    if not can_manage_run(request.user, run):
        raise PermissionDenied
    if request.POST.get("confirm") != "yes":
        return render(request, "benchmark/run_cancel_confirm.html", {"run": run})
    if services.run_cancel(run=run):
        if run.status == Run.Status.CANCELLING:
            messages.success(
                request,
                "Cancel requested: the run stops before its next command (one already running is stopped "
                "within seconds) and commits no further step.",
            )
        else:
            messages.success(request, "Run cancelled.")
    else:
        messages.error(request, f"The run is already {run.get_status_display()}.")
    return redirect("benchmark:run_detail", code=run.code)


def _managed_run_and_user(request: HttpRequest, code: UUID, **user_filter: object) -> tuple[Run, object | None]:
    """The run (if this user may share it) and the account the share form names, if any."""
    run = _run_for(request, code)
    if not can_manage_run(request.user, run):
        raise PermissionDenied
    form = ShareForm(request.POST)
    if not form.is_valid():
        return run, None
    return run, get_user_model().objects.filter(username=form.cleaned_data["username"], **user_filter).first()


@require_POST
@role_required(RESEARCHER, ADMIN)
def run_share(request: HttpRequest, code: UUID) -> HttpResponse:
    run, user = _managed_run_and_user(request, code, is_active=True)
    if user is None or not is_researcher(user):
        messages.error(request, "No researcher with that username.")
    else:
        services.run_share(run=run, user=user, by=request.user)
        messages.success(request, f"{user.get_username()} can now watch this run.")
    return redirect("benchmark:run_detail", code=run.code)


@require_POST
@role_required(RESEARCHER, ADMIN)
def run_unshare(request: HttpRequest, code: UUID) -> HttpResponse:
    """Revoke a share: the page answers 403 from then on, and an open stream closes with 4403."""
    run, user = _managed_run_and_user(request, code)
    if user is None or not services.run_share_revoke(run=run, user=user, by=request.user):
        messages.error(request, "This run is not shared with that username.")
    else:
        messages.success(request, f"{user.get_username()} can no longer watch this run.")
    return redirect("benchmark:run_detail", code=run.code)


@require_POST
@role_required(RESEARCHER, ADMIN)
def run_replay(request: HttpRequest, code: UUID) -> HttpResponse:
    """Re-execute this run's actions in a fresh sandbox (no model) and compare the outputs."""
    run = _run_for(request, code)
    if not run.steps.exists():
        messages.error(request, "This run has no steps to replay.")
        return redirect("benchmark:run_detail", code=run.code)
    agent = AgentConfig.objects.create(
        name="replay", kind=AgentConfig.Kind.REPLAY, max_steps=run.step_count + 1, created_by=request.user
    )
    try:
        (replay,) = services.run_launch(
            owner=request.user, tasks=[run.task], agent=agent, replay_of=run, name=f"replay of {run.code}"
        )
    except services.LaunchError as exc:
        messages.error(request, str(exc))
        return redirect("benchmark:run_detail", code=run.code)
    return redirect("benchmark:run_detail", code=replay.code)


@require_POST
@role_required(RESEARCHER, ADMIN)
def run_resume(request: HttpRequest, code: UUID) -> HttpResponse:
    """Continue an interrupted run from its last committed step (the owner and admins)."""
    run = _run_for(request, code)
    if not can_manage_run(request.user, run):
        raise PermissionDenied
    try:
        resumed = services.run_resume(run=run, by=request.user)
    except services.LaunchError as exc:
        messages.error(request, str(exc))
        return redirect("benchmark:run_detail", code=run.code)
    if resumed:
        messages.success(request, f"Resumed: its {run.step_count} step(s) are replayed, then the agent goes on.")
    else:
        messages.error(request, f"A {run.get_status_display().lower()} run cannot be resumed; only an interrupted one.")
    return redirect("benchmark:run_detail", code=run.code)


def _fork_initial(run: Run, step: int) -> dict[str, object]:
    """The fork form's first values: the parent's agent settings and limits, room after the step."""
    agent = run.agent
    initial: dict[str, object] = {
        "step": step,
        "temperature": agent.temperature,
        "top_p": agent.top_p,
        "history_window": agent.history_window,
        "max_steps": max(int(run.params.get("max_steps", agent.max_steps)), step + 1),
        "cost_limit": float(run.params.get("cost_limit", agent.cost_limit)),
    }
    if agent.endpoint_id and agent.model:
        initial["model"] = f"{agent.endpoint.code}/{agent.model.partition(':')[2]}"
    return initial


@require_http_methods(["GET", "POST"])
@role_required(RESEARCHER, ADMIN)
def run_fork(request: HttpRequest, code: UUID) -> HttpResponse:
    """Fork from a step (the owner and admins): GET shows the choice of agent, POST launches the fork,
    which replays steps 1..N in a fresh sandbox and goes on with that agent (benchmark.runs.forks)."""
    run = _run_for(request, code)
    if not can_manage_run(request.user, run):
        raise PermissionDenied
    refusal = forks.fork_refusal(run)
    if refusal:
        messages.error(request, refusal)
        return redirect("benchmark:run_detail", code=run.code)
    if request.method == "POST":
        form = ForkForm(request.POST, user=request.user, run=run)
    else:
        try:
            step = min(max(int(request.GET.get("step", run.step_count)), 1), run.step_count)
        except ValueError:
            step = run.step_count
        form = ForkForm(user=request.user, run=run, initial=_fork_initial(run, step))
    context = {"run": run, "form": form}
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        problem = launch_problem(endpoint=data["endpoint"], model=data["model_name"], user=request.user)
        if problem:  # nothing launched: the endpoint's answer is shown where the model was chosen
            form.add_error("model", f"The endpoint failed its check, so nothing was forked: {problem}")
            return render(request, "benchmark/run_fork.html", context)
        try:
            fork = forks.run_fork(
                run=run,
                step_index=data["step"],
                agent=form.agent_config(user=request.user),
                owner=request.user,
                # The parent's command timeout: its replayed commands ran under it.
                limits=services.Limits(
                    max_steps=data["max_steps"],
                    cost_limit=data["cost_limit"],
                    command_timeout=run.params.get("command_timeout"),
                ),
                title=data.get("title") or "",
                note=data.get("note") or "",
            )
        except services.LaunchError as exc:
            form.add_error(None, str(exc))
            return render(request, "benchmark/run_fork.html", context, status=503)
        messages.success(request, f"Forked at step {data['step']}: its steps are replayed, then the new agent goes on.")
        return redirect("benchmark:run_detail", code=fork.code)
    return render(request, "benchmark/run_fork.html", context)
