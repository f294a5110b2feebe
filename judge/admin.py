from django.contrib import admin

from judge.models import Judgment, Rubric


@admin.register(Rubric)
class RubricAdmin(admin.ModelAdmin):
    list_display = ("stage", "version", "name", "created_by", "created_at")
    list_filter = ("stage",)
    # A version is never edited once saved (judgments point at it): new versions come from /judge/rubrics/<stage>/new/.
    readonly_fields = ("code", "stage", "version", "name", "instructions", "dimensions", "created_by", "created_at")

    def has_add_permission(self, request) -> bool:
        return False


@admin.register(Judgment)
class JudgmentAdmin(admin.ModelAdmin):
    list_display = ("code", "judge_model", "rubric", "status", "source", "attempts", "cost", "created_at")
    list_filter = ("status", "source", "rubric__stage", "judge_model")
    search_fields = ("judge_model", "code")
    raw_id_fields = ("artifact", "run", "rubric", "requested_by")
    readonly_fields = [f.name for f in Judgment._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False
