from zoneinfo import available_timezones

from django import forms

from quizzes.models import Card
from tutor.review.models import LearnerSettings


def _minutes(text: str) -> list[int]:
    try:
        steps = [int(x) for x in text.replace(",", " ").split()]
    except ValueError:
        raise forms.ValidationError("Use whole minutes separated by spaces, e.g. 1 10.") from None
    if any(not 1 <= s <= 1440 for s in steps) or len(steps) > 10:
        raise forms.ValidationError("Each step is 1 to 1440 minutes; at most 10 steps.")
    return steps


class LearnerSettingsForm(forms.ModelForm):
    learning_steps = forms.CharField(help_text="Minutes, e.g. 1 10")
    relearning_steps = forms.CharField(required=False, help_text="Minutes, e.g. 10")
    timezone = forms.ChoiceField(choices=[(z, z) for z in sorted(available_timezones() | {"UTC"})])

    class Meta:
        model = LearnerSettings
        fields = [
            "desired_retention",
            "new_cards_per_day",
            "maximum_interval",
            "learning_steps",
            "relearning_steps",
            "timezone",
        ]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.instance.pk and not self.is_bound:
            self.initial["learning_steps"] = " ".join(map(str, self.instance.learning_steps))
            self.initial["relearning_steps"] = " ".join(map(str, self.instance.relearning_steps))

    def clean_learning_steps(self):
        steps = _minutes(self.cleaned_data["learning_steps"])
        if not steps:
            raise forms.ValidationError("Give at least one learning step.")
        return steps

    def clean_relearning_steps(self):
        return _minutes(self.cleaned_data.get("relearning_steps") or "")


class FirstQuestionForm(forms.Form):
    """The question a conversation opens with, typed on /teacher/ (blank: an empty conversation)."""

    question = forms.CharField(
        required=False,
        max_length=2000,
        strip=True,
        widget=forms.Textarea(attrs={"rows": 3, "placeholder": "e.g. Why does fusion make a chain faster?"}),
        label="Your question",
    )
    card = forms.IntegerField(required=False, min_value=1, widget=forms.HiddenInput)

    def clean_card(self) -> Card | None:
        """The card the question is asked from (the review page's "Ask the teacher about this card")."""
        pk = self.cleaned_data.get("card")
        if pk is None:
            return None
        card = Card.objects.filter(pk=pk, retired=False).select_related("course").first()
        if card is None:
            raise forms.ValidationError("No such card.")
        return card
