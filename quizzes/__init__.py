"""Content: courses, lessons and sections, topics and cards; loaders and exporters."""
