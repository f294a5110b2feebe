from django.contrib import admin

from review.models import Assignment, Campaign, CampaignItem, CampaignReviewer, Conflict, Review


class ItemInline(admin.TabularInline):
    model = CampaignItem
    extra = 0
    raw_id_fields = ("artifact",)


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


@admin.register(Review)
class ReviewAdmin(admin.ModelAdmin):
    list_display = ("assignment", "status", "source", "confidence", "revision", "submitted_at")
    list_filter = ("status", "source", "assignment__campaign")
    raw_id_fields = ("assignment",)
