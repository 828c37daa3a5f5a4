"""Tilewise: the Django project package and the learner domain."""
