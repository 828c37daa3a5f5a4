from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("labs", "0003_drop_labrun_target"),
    ]

    operations = [
        migrations.AddField(
            model_name="labrun",
            name="device_kind",
            field=models.CharField(
                default="any", help_text='The kind of device asked for: "h100", "h200", ... or "any".', max_length=32
            ),
        ),
        migrations.AddField(
            model_name="labrun",
            name="queue",
            field=models.CharField(blank=True, help_text="The queue the run was sent to.", max_length=64),
        ),
    ]
