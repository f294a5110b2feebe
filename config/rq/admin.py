"""The queue dashboard in the admin, at the URLs django-rq gives it (`admin:django_rq_home`, ...).

Behaves as django-rq's own `QueueAdmin`; django-rq's views are imported when the admin builds its
URLs (the first request, or the system checks), not at start.
"""

from functools import wraps

from django.conf import settings
from django.contrib import admin

from config.rq.models import Dashboard


class DashboardAdmin(admin.ModelAdmin):
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return True

    def has_module_permission(self, request):
        return request.user.has_module_perms("django_rq")

    def changelist_view(self, request, extra_context=None):
        from django_rq import stats_views

        return stats_views.stats(request)

    def get_urls(self):
        from django_rq.urls import get_admin_urlpatterns, get_api_urlpatterns

        def wrap(view):
            @wraps(view)
            def wrapper(request, *args, **kwargs):
                request.current_app = self.admin_site.name
                return self.admin_site.admin_view(view)(request, *args, **kwargs)

            return wrapper

        # The API views (JSON stats, Prometheus) check their own token or staff status.
        return (
            get_api_urlpatterns(name_prefix="django_rq_")
            + get_admin_urlpatterns(name_prefix="django_rq_", view_wrapper=wrap)
            + super().get_urls()
        )


if getattr(settings, "RQ_SHOW_ADMIN_LINK", True):
    admin.site.register(Dashboard, DashboardAdmin)
