"""The database cache table that the sign-up throttle counts in (settings.CACHES["throttle"]),
made by `migrate` so that no extra set-up step is needed."""

from django.core.management import call_command
from django.db import migrations


def create_cache_table(apps, schema_editor):
    call_command("createcachetable", database=schema_editor.connection.alias, verbosity=0)


class Migration(migrations.Migration):
    dependencies = []
    operations = [migrations.RunPython(create_cache_table, migrations.RunPython.noop)]
