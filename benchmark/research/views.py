"""Pages of the research pipeline under /research/: MLR task browser, launch, run timeline, paper, files."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db.models import Q
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template import engines
from django.template.exceptions import TemplateSyntaxError
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.roles import ADMIN, RESEARCHER, is_admin, role_required
from benchmark.llm.check import launch_problem
from benchmark.markdown import markdown_html
from benchmark.models import Artifact, ResearchRun, Task
from benchmark.research.fabrication import stored_audit
from benchmark.research.files import content_type, is_image, listed_file, open_stored
from benchmark.research.forms import CategoryForm, LaunchForm
from benchmark.research.imports import ATTRIBUTION as RUN_ATTRIBUTION
from benchmark.research.permissions import can_manage_research, can_view_research, visible_research
from benchmark.research.progress import research_payload
from benchmark.research.services import paper_figure_url_map, research_launch, research_resume
from benchmark.research.tasks import ATTRIBUTION as TASK_ATTRIBUTION
from benchmark.research.tasks import CATEGORIES

PAGE_SIZE = 50


def _mlr_tasks():
    return Task.objects.filter(kind=Task.Kind.MLR, is_current=True)


@require_GET
@role_required(RESEARCHER, ADMIN)
def research_home(request: HttpRequest) -> HttpResponse:
    # The 2,412 stepwise runs are read on the stepwise leaderboard, not listed here one by one.
    runs = visible_research(request.user).exclude(source=ResearchRun.Source.STEPWISE).order_by("source", "-created_at")
    mine = [r for r in runs if r.source == ResearchRun.Source.REFEREE][:100]
    released = [r for r in runs if r.source in (ResearchRun.Source.MLRBENCH, ResearchRun.Source.AI_SCIENTIST)]
    return render(
        request,
        "benchmark/research_home.html",
        {"mine": mine, "released": released, "run_attribution": RUN_ATTRIBUTION},
    )


@require_GET
@role_required(RESEARCHER, ADMIN)
def research_tasks(request: HttpRequest) -> HttpResponse:
    tasks = _mlr_tasks()
    q = request.GET.get("q", "").strip()[:200]
    venue = request.GET.get("venue", "")
    year = request.GET.get("year", "")
    category = request.GET.get("category", "")
    if q:
        tasks = tasks.filter(Q(title__icontains=q) | Q(slug__icontains=q) | Q(description__icontains=q))
    if venue:
        tasks = tasks.filter(venue=venue)
    if year.isdigit():
        tasks = tasks.filter(year=int(year))
    if category == "none":
        tasks = tasks.filter(category="")
    elif category:
        tasks = tasks.filter(category=category)
    page = Paginator(tasks.order_by("-year", "venue", "slug"), PAGE_SIZE).get_page(request.GET.get("page"))
    base = _mlr_tasks()
    params = request.GET.copy()
    params.pop("page", None)
    return render(
        request,
        "benchmark/research_tasks.html",
        {
            "page": page,
            "q": q,
            "venue": venue,
            "year": year,
            "category": category,
            "venues": sorted(set(base.values_list("venue", flat=True))),
            # A task with no year (imported without one) is listed, not offered as a year to filter by.
            "years": sorted(set(base.exclude(year__isnull=True).values_list("year", flat=True)), reverse=True),
            "categories": CATEGORIES,
            "total": base.count(),
            "querystring": params.urlencode(),
            "attribution": TASK_ATTRIBUTION,
        },
    )


@require_GET
@role_required(RESEARCHER, ADMIN)
def research_task(request: HttpRequest, code) -> HttpResponse:  # type: ignore[no-untyped-def]
    task = get_object_or_404(Task, code=code, kind=Task.Kind.MLR)
    runs = visible_research(request.user).filter(task__slug=task.slug)
    return render(
        request,
        "benchmark/research_task.html",
        {
            "task": task,
            "body_html": markdown_html(task.description),
            "faults": (task.config or {}).get("faults", []),
            "workshop": (task.config or {}).get("workshop", {}),
            "attribution": (task.config or {}).get("attribution", TASK_ATTRIBUTION),
            "runs": runs,
            "category_form": CategoryForm(initial={"category": task.category}) if is_admin(request.user) else None,
        },
    )


@require_POST
@role_required(ADMIN)
def research_task_category(request: HttpRequest, code) -> HttpResponse:  # type: ignore[no-untyped-def]
    task = get_object_or_404(Task, code=code, kind=Task.Kind.MLR)
    form = CategoryForm(request.POST)
    if form.is_valid():
        # A label, not the task's text: set on every version so it survives re-imports.
        Task.objects.filter(slug=task.slug, kind=Task.Kind.MLR).update(category=form.cleaned_data["category"])
        messages.success(request, f"Category of {task.slug} set to {form.cleaned_data['category'] or 'none'}.")
    else:
        messages.error(request, "Choose one of the listed categories.")
    return redirect("benchmark:research_task", code=task.code)


@require_http_methods(["GET", "POST"])
@role_required(RESEARCHER, ADMIN)
def research_new(request: HttpRequest) -> HttpResponse:
    initial = {}
    task_code = request.GET.get("task", "")
    if task_code:
        task = _mlr_tasks().filter(code=task_code).first() if _is_uuid(task_code) else None
        if task is not None:
            initial["task"] = task.pk
    form = LaunchForm(request.POST or None, request.FILES or None, initial=initial, user=request.user)
    if request.method == "POST" and form.is_valid():
        endpoint, name = form.cleaned_data["backbone"]
        problem = form.inputs_problem()
        if problem:
            form.add_error(None, problem)
        elif check := launch_problem(endpoint=endpoint, model=name, user=request.user):
            # Nothing launched: the endpoint's answer is shown where the backbone was chosen.
            form.add_error("backbone", f"The endpoint failed its check, so nothing was launched: {check}")
        elif lit := form.literature_problem():
            # Found now, not at stage 2 minutes later (Semantic Scholar offline, an empty corpus).
            form.add_error(
                "literature_provider", f"The literature provider failed its check, so nothing was launched: {lit}"
            )
        else:
            try:
                run = research_launch(owner=request.user, **form.launch_kwargs())
            except ValueError as exc:
                form.add_error(None, str(exc))
            else:
                return redirect("benchmark:research_run", code=run.code)
    return render(request, "benchmark/research_new.html", {"form": form})


def _is_uuid(value: str) -> bool:
    import uuid

    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


def _viewable(request: HttpRequest, code) -> ResearchRun:  # type: ignore[no-untyped-def]
    """The run, if this user may see it: 404 alike for unknown codes and for runs they may not see, as
    agent run pages answer (benchmark.runs.views._run_for), so a 403 never confirms another's code."""
    run = ResearchRun.objects.select_related("task", "owner").filter(code=code).first()
    if run is None or not can_view_research(request.user, run):
        raise Http404("no such research run")
    return run


def _stage_html(artifact: Artifact) -> str:
    if artifact.stage == Artifact.Stage.PAPER or artifact.stage == Artifact.Stage.EXPERIMENT:
        mapping = paper_figure_url_map(artifact)
        return markdown_html(artifact.content, image_url=lambda src: _file_url(artifact, mapping.get(src)))
    return markdown_html(artifact.content)


def _files(artifact: Artifact) -> dict[str, list[dict[str, str | None]]]:
    """The experiment's stored logs/traces and code files, linked (every log of the run is shown)."""
    data = artifact.data or {}
    return {
        key: [{"path": f, "url": _file_url(artifact, f)} for f in data.get(field) or [] if f in (artifact.files or [])]
        for key, field in (("logs", "logs"), ("code", "code_files"))
    }


def _file_url(artifact: Artifact, relative: str | None) -> str | None:
    if not relative or relative not in (artifact.files or []):
        return None
    return reverse("benchmark:research_file", kwargs={"code": artifact.code, "path": relative})


@require_GET
@role_required(RESEARCHER, ADMIN)
def research_run(request: HttpRequest, code) -> HttpResponse:  # type: ignore[no-untyped-def]
    run = _viewable(request, code)
    artifacts = {a.stage: a for a in run.artifacts.all()}
    payload = research_payload(run)
    sections = [
        {
            "artifact": artifacts[s["stage"]],
            "html": _stage_html(artifacts[s["stage"]]),
            **s,
            **_files(artifacts[s["stage"]]),
        }
        for s in payload["stages"]
        if s["stage"] in artifacts
    ]
    return render(
        request,
        "benchmark/research_run.html",
        {
            "run": run,
            "payload": payload,
            "timeline": payload["stages"],
            "sections": sections,
            "paper": artifacts.get(Artifact.Stage.PAPER),
            "can_manage": can_manage_research(request.user, run),
            "run_attribution": RUN_ATTRIBUTION if run.source in ResearchRun.RELEASED else "",
        },
    )


@require_POST
@role_required(RESEARCHER, ADMIN)
def research_resume_view(request: HttpRequest, code) -> HttpResponse:  # type: ignore[no-untyped-def]
    run = _viewable(request, code)
    if not can_manage_research(request.user, run):
        raise PermissionDenied
    if research_resume(run=run):
        messages.success(request, "Resumed: the run continues at the first stage not done.")
    else:
        messages.error(request, f"A {run.status} run cannot be resumed.")
    return redirect("benchmark:research_run", code=run.code)


def _judgment_panel_html(request: HttpRequest, artifact: Artifact) -> str:
    """The judge app's panel when its template tag exists (it lands separately); else nothing."""
    try:
        template = engines["django"].from_string("{% load judging %}{% judgment_panel artifact %}")
    except (TemplateSyntaxError, Exception):  # the `judging` library is not installed yet
        return ""
    return template.render({"artifact": artifact, "user": request.user}, request)


@require_GET
@role_required(RESEARCHER, ADMIN)
def research_paper(request: HttpRequest, code) -> HttpResponse:  # type: ignore[no-untyped-def]
    run = _viewable(request, code)
    paper = run.artifacts.filter(stage=Artifact.Stage.PAPER).first()
    if paper is None or paper.status != Artifact.Status.DONE:
        raise Http404("this run has no paper (yet)")
    experiment = run.artifacts.filter(stage=Artifact.Stage.EXPERIMENT).first()
    audit = stored_audit(paper)
    figures = []
    if experiment is not None:
        figures = [{"path": f, "url": _file_url(experiment, f)} for f in experiment.files or [] if is_image(f)]
    text_files = [
        {"path": f, "url": _file_url(experiment, f)}
        for f in (experiment.files if experiment else []) or []
        if not is_image(f)
    ]
    return render(
        request,
        "benchmark/research_paper.html",
        {
            "run": run,
            "paper": paper,
            "paper_html": _stage_html(paper),
            "pdf_url": _file_url(paper, (paper.data or {}).get("pdf")),  # a released PDF paper (AI Scientist v2)
            "experiment": experiment,
            "trace": (experiment.data or {}).get("trace", {}) if experiment else {},
            "figures": figures,
            "text_files": text_files,
            "judgment_panel": _judgment_panel_html(request, paper),
            "audit": audit,
            "flagged": [n for n in (audit or {}).get("numbers", []) if not n["found"]],
            "run_attribution": RUN_ATTRIBUTION if run.source in ResearchRun.RELEASED else "",
        },
    )


@require_GET
@role_required(RESEARCHER, ADMIN)
def research_file(request: HttpRequest, code, path: str) -> HttpResponse:  # type: ignore[no-untyped-def]
    """A stored file of an artifact, for whoever may see its run; never a public media path."""
    artifact = Artifact.objects.select_related("research_run").filter(code=code).first()
    if artifact is None or not can_view_research(request.user, artifact.research_run):
        raise Http404("no such artifact")  # alike for both: another's artifact code is not confirmed
    relative = listed_file(artifact, path)
    handle = open_stored(artifact.code, relative) if relative else None
    if handle is None:
        raise Http404("no such file")
    response = FileResponse(handle, content_type=content_type(relative))
    # Agent-written files (SVG, HTML-looking text) must not run script in our origin.
    response["Content-Security-Policy"] = "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; sandbox"
    response["X-Content-Type-Options"] = "nosniff"
    response["Cache-Control"] = "private, max-age=3600"
    return response
