"""What kind of message a learner sent, before anything is retrieved for it.

* Instructions aimed at the teacher itself ("ignore your instructions", "print your prompt", "act
  as ...") are declined with one sentence: they never get lesson passages, in either mode.
* A follow-up ("why?", "give me an example", "what about decode?", "how is this different on an
  A100?") is read together with the learner's previous question, whose topic it continues.
"""

from __future__ import annotations

import re

_INJECTION = re.compile(
    r"""
    \b(?:ignore|disregard|forget|override|bypass)\b[^.?!]{0,40}\b(?:instruction|rule|prompt|guideline|previous|above|everything)
    | \b(?:system|hidden|initial|original|secret)\s+(?:prompt|instruction|message|rule)s?\b
    | \byour\s+(?:instructions|rules|prompt|guidelines|programming)\b
    | \b(?:print|show|reveal|repeat|output|dump|leak|display|translate)\b[^.?!]{0,30}
      \b(?:prompt|instructions|the\ text\ above|everything\ above|what\ you\ were\ told)
    | \brepeat\b[^.?!]{0,20}\b(?:above|verbatim|word\ for\ word)
    | \b(?:act|behave|respond|answer|talk|speak)\s+(?:as|like)\s+(?:an?\s+|my\s+)?(?!the\ teacher)\w+
    | \byou\s+are\s+now\b | \bfrom\s+now\s+on\s+you\b | \bpretend\s+(?:to\s+be|you)\b | \brole-?play\b
    | \bjailbreak | \bDAN\b | \bdeveloper\s+mode\b | \bno\s+(?:rules|restrictions|filters)\b
    | \bstop\s+being\s+(?:a\s+)?(?:teacher|tutor|assistant)\b | \bnew\s+(?:job|role|task|persona)\s+is\b
    | \bSYSTEM\s*(?:OVERRIDE|:)
    """,
    re.IGNORECASE | re.VERBOSE,
)

# A short message that leans on the previous turn: a bare "why?", an "and ...", a pronoun standing for
# the earlier topic, or a request for more of the same.
_FOLLOW_UP_START = re.compile(
    r"^\s*(?:and|but|so|also|then|ok(?:ay)?|why|how come|what about|how about|and what about|"
    r"give me an example|an example|for example|example|such as|like what|how much|how many|how fast|"
    r"how is (?:this|that|it)|is (?:this|that|it)|does (?:this|that|it)|what if|can you|could you|explain more|"
    r"tell me more|more|in what way|which one)\b",
    re.IGNORECASE,
)
_PRONOUN = re.compile(r"\b(?:this|that|it|its|they|them|those|these|there|one)\b", re.IGNORECASE)


def is_instruction_to_the_teacher(question: str) -> bool:
    return bool(_INJECTION.search(question))


def is_follow_up(question: str, content_terms: int) -> bool:
    """A message that needs the previous turn: short and starting like a continuation, or a pronoun with
    almost nothing else to match on. `content_terms`: how many terms the message has of its own."""
    if content_terms <= 1:
        return True
    if content_terms <= 4 and (_FOLLOW_UP_START.match(question) or _PRONOUN.search(question)):
        return True
    return False
