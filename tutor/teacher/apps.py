from django.apps import AppConfig


class TeacherConfig(AppConfig):
    name = "tutor.teacher"
    label = "teacher"
    verbose_name = "Teacher"
