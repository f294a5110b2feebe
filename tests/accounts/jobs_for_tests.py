def tag_profile(profile_id: int, tag: str) -> None:
    from accounts.models import Profile

    Profile.objects.filter(pk=profile_id).update(expertise=[tag])
