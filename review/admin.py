from django.contrib import admin

from review.models import Assignment, Campaign, CampaignItem, CampaignReviewer, Conflict, ItemReport, Review


class ItemInline(admin.TabularInline):
    model = CampaignItem
    extra = 0
    raw_id_fields = ("artifact", "run")


class MemberInline(admin.TabularInline):
    model = CampaignReviewer
    extra = 0
    raw_id_fields = ("reviewer",)


class ConflictInline(admin.TabularInline):
    model = Conflict
    extra = 0
    raw_id_fields = ("reviewer", "item")


@admin.register(Campaign)
class CampaignAdmin(admin.ModelAdmin):
    list_display = ("name", "status", "rubric", "reviewers_per_item", "deadline", "show_supplementary")
    list_filter = ("status", "stage")
    inlines = (ItemInline, MemberInline, ConflictInline)


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ("code", "campaign", "item", "reviewer", "slot", "status", "last_activity")
    list_filter = ("status", "campaign")
    search_fields = ("code", "item__code", "reviewer__username")
    raw_id_fields = ("item", "reviewer")
    # A reviewer's rows (filter by campaign, search the reviewer) in the order their queue shows them.
    ordering = ("campaign", "reviewer__username", "queue_key", "id")


@admin.register(Review)
class ReviewAdmin(admin.ModelAdmin):
    list_display = ("assignment", "status", "source", "confidence", "revision", "submitted_at")
    list_filter = ("status", "source", "assignment__campaign")
    raw_id_fields = ("assignment",)


@admin.register(ItemReport)
class ItemReportAdmin(admin.ModelAdmin):
    """Reviewers' problem reports; accepting one gives the reporter's slot back (review.control.reports)."""

    list_display = ("created_at", "campaign", "item_code", "assignment", "reviewer", "reason", "status", "note")
    list_filter = ("status", "reason", "campaign")
    search_fields = ("assignment__code", "assignment__item__code", "assignment__reviewer__username", "note")
    raw_id_fields = ("assignment",)
    readonly_fields = ("campaign", "assignment", "reason", "note", "created_at", "resolved_by", "resolved_at")
    actions = ("accept_reports", "dismiss_reports")
    list_select_related = ("campaign", "assignment__item", "assignment__reviewer")

    @admin.display(description="item")
    def item_code(self, report: ItemReport) -> str:
        return report.assignment.item.code

    @admin.display(description="reviewer")
    def reviewer(self, report: ItemReport) -> str:
        return report.assignment.reviewer.get_username()

    def _resolve(self, request, queryset, accept: bool) -> None:
        # Imported here: review.control.reports pulls the assignment and blinding services (markdown,
        # HTML sanitiser), which every command would otherwise load with the admin at setup.
        from review.control.reports import report_resolve

        done = returned = 0
        for report in queryset.filter(status=ItemReport.Status.OPEN):
            returned += report_resolve(report=report, accept=accept, by=request.user)
            done += 1
        verb = "accepted" if accept else "dismissed"
        self.message_user(request, f"{done} report(s) {verb}; {returned} slot(s) given back.")

    @admin.action(description="Accept: give the reporter's slot back")
    def accept_reports(self, request, queryset) -> None:
        self._resolve(request, queryset, accept=True)

    @admin.action(description="Dismiss")
    def dismiss_reports(self, request, queryset) -> None:
        self._resolve(request, queryset, accept=False)
