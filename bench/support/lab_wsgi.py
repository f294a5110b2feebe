"""The platform's WSGI app plus, for `bench/lab_cache.py`, the judge lab's judges page as it was
before issue 30: computed in the request (`/bench/old-judges/<stage>/`). Served by the same
gunicorn workers as the real app, so that both paths are measured in one run on the same
machine, database and Redis. Not used by the platform.

The old view, as it was: the judge-vs-judge analysis from the agreement cache once computed
(it was cached per process), the judges' self-preference computed on every request.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

from django.core.wsgi import get_wsgi_application  # noqa: E402

django_app = get_wsgi_application()

from django.conf import settings  # noqa: E402
from django.http import HttpRequest, HttpResponse  # noqa: E402
from django.shortcuts import render  # noqa: E402
from django.template.loader import render_to_string  # noqa: E402
from django.urls import include, path  # noqa: E402

from accounts.roles import ADMIN, RESEARCHER, role_required  # noqa: E402
from agreement.lab import context as lab_context  # noqa: E402
from agreement.lab import judge_pair as jp  # noqa: E402
from agreement.lab.probes import self_preference_judges  # noqa: E402
from judge.leaderboard import STAGES, default_rubric, stepwise_matrix  # noqa: E402


@role_required(RESEARCHER, ADMIN)
def old_lab_judge_pair(request: HttpRequest, stage: str) -> HttpResponse:
    try:
        result = jp.judge_pair_analysis(stage=stage)
    except jp.JudgePairError as exc:
        result = {"error": str(exc)}
    context = {"stage": stage, "stages": STAGES, "result": result}
    if "error" not in result:
        context["html"] = render_to_string("agreement/lab/_two_rater.html", {"pair": lab_context.two_rater(result)})
        rubric = default_rubric(stage)
        self_preference = lab_context.self_preference_judges(self_preference_judges(stepwise_matrix(stage, rubric)))
        context["self_preference"] = render_to_string(
            "agreement/lab/_self_preference.html", {"self_preference": self_preference}
        )
    return render(request, "agreement/lab/judge_pair.html", context)


urlpatterns = [path("bench/old-judges/<slug:stage>/", old_lab_judge_pair), path("", include("config.urls"))]
settings.ROOT_URLCONF = __name__  # the platform's URLs, and the old page beside them
application = django_app
