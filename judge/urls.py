app_name = "judge"

urlpatterns: list = []
