"""What the teacher will answer with, decided before a word is written, in either mode.

1. An instruction aimed at the teacher ("ignore your instructions", "act as ..."), in the message or in
   one of its clauses, is declined, and so is a message about something else that only borrows the
   course's words ("which graphics card for gaming?"; see intent.is_off_topic).
2. A follow-up is read together with the learner's previous question.
3. The question is put in the course's words (typos, everyday terms; see question_rewrite).
4. It is matched against the course's authored explanations (explanation_match) and the lesson
   passages are retrieved, from the conversation's course only.
5. Then:
   * a confident match: that explanation answers, whole ("explanation");
   * a question in the course's domain without a confident match: the best passage's own opening,
     with the closest explanations offered as "did you mean" ("passage");
   * a question another loaded course answers: say which course ("other_course");
   * a question that uses the course's vocabulary but that nothing answers: say so ("not_covered");
   * anything else: one sentence on what the teacher can help with ("declined").
   Terms of the question that the course never uses are named as not covered ("uncovered").

The same plan gates LLM mode: the model is only asked when the plan has something to build on.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field, replace

from quizzes.models import Card, Course, Explanation
from tutor.teacher import explanation_match, intent
from tutor.teacher.course_vocabulary import (
    course_phrases,
    course_stems,
    course_terms,
    course_vocabulary,
    not_covered,
    uncovered_terms,
)
from tutor.teacher.explanation_match import bare_term
from tutor.teacher.lesson_quotes import (
    readable_passage,
    section_closeness,
    statements_by_paragraph,
    supporting_quote,
    terms_of,
)
from tutor.teacher.message_parts import parts_by_sentence, question_parts, without_analogies
from tutor.teacher.question_rewrite import expand_short_forms, fix_phrases, fix_typos, mechanism_terms, rewrite
from tutor.teacher.retrieval import Hit, one_question, retrieve, tokenize

PASSAGE_COVERAGE = 0.35  # a passage covering this share of the question's weight can answer in fallback
# A question naming something the course never mentions ("the Linux CFS scheduler", "the MESI protocol")
# is answered from an explanation only on a clearly strong match: a middling one is usually the course's
# namesake of a different thing. Tuned on the tune and dev splits (their partial questions score >= 0.51).
UNCOVERED_ANSWER = 0.47
# A follow-up whose terms the previous answer already holds keeps that answer when its own match is this close to the
# best one alone (see _favour_the_new_part); read off the drill set's follow-ups (0.05 to 0.2 gave the same answers).
SAID_GAP = 0.1
FRESH_GAP = 0.3  # a follow-up moves on from the previous answer only to an explanation this close to it
ELSEWHERE_SHARE = 0.35  # see _about_something_else
ELSEWHERE_LEAD = -0.1
# An explanation resting on several sections cites the one the lesson retrieval ranks first for the question, unless
# another is this much closer in meaning (its closest passage's MiniLM cosine): keyword retrieval can favour the
# section that shares the question's words over the one it is about. Chosen on the dev split: of 672 dev answers
# from such explanations, 552 cited the evaluation set's section before, 560 at 0.1 (552 at 0.07, 558 at 0.15).
SECTION_MEANING_LEAD = 0.1
NO_SUBJECT_TERMS = 3  # a message this short names no subject the off-topic vote can judge: see _decide


@dataclass
class Plan:
    kind: str  # explanation | passage | other_course | not_covered | declined
    course: Course | None
    question: str
    query: str = ""
    explanation: Explanation | None = None
    also: Explanation | None = None  # "difference between A and B": the explanation of B, beside A's
    each_part: bool = False  # `also` answers the second of two things asked, not the other side of a difference
    support: Hit | None = None
    quote: str = ""  # with an explanation: the sentences of `support` that add to it
    already_said: str = ""  # a follow-up the previous answer already answers: its sentences that do
    # "in plain words?", "tl;dr", "which section is that from?": only the previous answer's opening, the shortest
    # wording it has; what was asked of it (intent.asks_again: simpler, briefer, source), "" otherwise.
    in_short: str = ""
    hits: list[Hit] = field(default_factory=list)
    near: list[explanation_match.Match] = field(default_factory=list)
    uncovered: list[str] = field(default_factory=list)
    other_course: Course | None = None
    check_question: str | None = None
    lab: str | None = None
    cited: list[dict] = field(default_factory=list)
    continues: frozenset[str] = frozenset()  # the sections the conversation's previous answer rested on
    no_subject: bool = False  # declined after a question for naming nothing of the course, not for another subject
    acknowledged: bool = False  # declined because the message only thanks or agrees ("thanks!", "got it")

    @property
    def answerable(self) -> bool:
        """Whether there is course material to answer from (the only case a model is asked)."""
        return self.kind in ("explanation", "passage")

    def citations(self) -> list[dict]:
        """Only what contributed text: the explanation's section, the supporting or fallback passage."""
        return self.cited

    def explanation_section(self, explanation: Explanation | None = None):
        """Of the sections an explanation rests on, the one the question is about: within a conversation, one
        the previous answer rested on too (the conversation's subject); then the first that the lesson
        retrieval ranks for this question, else the first in course order; unless another of its sections is
        far closer to the question in meaning (SECTION_MEANING_LEAD)."""
        sections = list((explanation or self.explanation).sections.all())
        ranked = [h.passage.section_slug for h in self.hits]
        chosen = min(
            sections,
            key=lambda s: (s.slug not in self.continues, ranked.index(s.slug) if s.slug in ranked else len(ranked)),
        )
        if len(sections) < 2 or chosen.slug in self.continues:
            return chosen
        closeness = section_closeness(self.query or self.question, self.course.slug)
        closest = max(sections, key=lambda s: closeness.get(s.slug, -1.0))
        if closeness.get(closest.slug, -1.0) - closeness.get(chosen.slug, -1.0) > SECTION_MEANING_LEAD:
            return closest
        return chosen

    @property
    def also_n(self) -> int:
        """The citation number of the second explanation: 1 when it rests on the same section as the first."""
        if len(self.cited) > 1 and self.also is not None and self.cited[1]["section"] != self.cited[0]["section"]:
            return 2
        return 1

    def cite(self) -> Plan:
        """Work out the citations now (database reads), so the plan can be used from async code."""
        out = []
        if self.explanation is not None:
            section = self.explanation_section()
            out.append({"title": section.title, "section": section.slug, "url": section.get_absolute_url()})
        if self.also is not None:
            section = self.explanation_section(self.also)
            if section.slug != out[0]["section"]:
                out.append({"title": section.title, "section": section.slug, "url": section.get_absolute_url()})
        if self.support is not None:
            p = self.support.passage
            out.append(
                {
                    "title": p.title if p.kind == "section" else p.section_title,
                    "section": p.section_slug,
                    "url": self.support.url,
                }
            )
        self.cited = [{"n": n, **c} for n, c in enumerate(out, start=1)]
        return self


def default_course(user) -> Course | None:
    """The course of the learner's latest review, else the first course."""
    from tutor.review.models import ReviewLog

    last = ReviewLog.objects.filter(user=user).select_related("card__course").order_by("-reviewed_at").first()
    return last.card.course if last else Course.objects.order_by("title", "pk").first()


def _names_something_else(question: str, course: Course) -> bool:
    """Many of the message's words are ones the course never uses: "who won the world cup?"."""
    terms = [t for t in dict.fromkeys(tokenize(question)) if len(t) >= 3]
    stems = course_stems(course)
    return bool(terms) and sum(1 for t in terms if not stems[t]) / len(terms) >= ELSEWHERE_SHARE


def _about_something_else(question: str, course: Course, about: bool | None) -> bool:
    """Before the weakest answer, a lesson passage quoted below the confidence bar: a question with many
    words the course never uses ("fusion cuisine", "a linen weave on my loom"), or one the off-topic vote
    nearly takes for off-topic, is about something else that shares a word with the course. Both bars were
    read off the tune and dev splits: the course questions that end here stayed below them. Many everyday
    words do not count against a question the paraphrase vote finds about the course (`about`): a
    newcomer's scenario ("our assistant is snappy in the morning but sluggish after lunch") is told in them."""
    if not about and _names_something_else(question, course):
        return True
    lead = intent.off_topic_lead(question, course.slug)
    return lead is not None and lead >= ELSEWHERE_LEAD


CHAIN = 3  # at most this many of the learner's last messages make up the subject a follow-up leans on


def _previous_question(history: list[tuple[str, str]]) -> str | None:
    """The learner's last message, with the ones before it while each only leaned on the one before (up to CHAIN):
    after "Why is decode slow?" and "how would I check that?", "ok what can I do about it?" is about decode, which
    "how would I check that?" alone does not name."""
    asked = [text for role, text in history if role == "user"]
    chain = asked[-1:]
    for text in reversed(asked[:-1]):
        if len(chain) >= CHAIN or not intent.is_follow_up(chain[0], len(set(tokenize(chain[0])))):
            break
        chain.insert(0, text)
    return " ".join(chain) or None


def plan_answer(question: str, **kwargs) -> Plan:
    """The plan for one question, with its citations worked out (see _decide for the arguments)."""
    with one_question():
        if (rest := intent.new_subject(question)) is not None:
            # "ok forget the gpu stuff, who won the league?": a new question, read without the conversation and
            # without the words that leave it.
            question = rest
            kwargs = {**kwargs, "history": (), "previous_explanation_id": None}
        plan = _decide(question, **kwargs)
        unanswered = plan.kind in ("passage", "not_covered") and not plan.uncovered
        if (unanswered or plan.no_subject) and _previous_question(kwargs.get("history", [])):
            # "what goes wrong if shapes change?" after a CUDA-graph question: a message the course does not
            # answer on its own may still be about the last one's subject, though it does not read like a
            # follow-up; asked in that context, it is answered when that finds an explanation. So is one that
            # names no subject at all ("how would I check that myself?"), unless its words are another
            # subject's ("who won the world cup?"): alone it would be declined.
            in_context = _decide(question, **kwargs, as_follow_up=True)
            if in_context.kind == "explanation":
                plan = in_context
        if plan.kind == "explanation":
            given = plan.explanation.answer if plan.explanation is not None else ""
            plan.uncovered = list(dict.fromkeys([*plan.uncovered, *forms_not_given(question, given)]))
        return plan.cite()


# What the course's explanations never give, however well they answer the subject: a walk through code line
# by line, a whole program, a full derivation.
_NOT_GIVEN = [
    (re.compile(r"\bline[\s-]+by[\s-]+line\b", re.I), "a line-by-line walk through code"),
    (
        re.compile(
            r"\b(?:complete|full|entire|whole|working)\s+(?:code|program|source|implementation)\b|\bfrom\s+scratch\b",
            re.I,
        ),
        "complete code",
    ),
    (
        re.compile(
            r"\b(?:full|complete|whole|entire)\s+(?:\w+\s+){0,2}derivation\b|\bderive\b.{0,60}\bstep\s+by\s+step\b",
            re.I,
        ),
        "a full derivation",
    ),
]


# "show me code for fixing it", "pseudocode is fine": a request for code. Most explanations answer in prose,
# so one without any code does not give what was asked, and says so.
_ASKS_FOR_CODE = re.compile(
    r"\b(?:show|give|write)\s+(?:me\s+|us\s+)?(?:some\s+|the\s+|an?\s+)?(?:(?:example|sample|actual)\s+)?"
    r"(?:code|snippet|pseudo-?code)\b|\b(?:code|snippet)\s+(?:for|example)\b|\bpseudo-?code\b|\bin\s+code\b"
    r"|\b(?:write|show|put)\s+(?:it|that|this|them)\s+(?:out\s+)?(?:in|as)\s+(?:cuda|triton|python|c\+\+)\b",
    re.IGNORECASE,
)
# Code in an answer: a fenced block, or an inline span that reads as code (a call, an index, an assignment).
_HAS_CODE = re.compile(r"```|`[^`\n]*[(\[=][^`\n]*`")


def forms_not_given(question: str, answer: str = "") -> list[str]:
    """The kinds of answer a question asks for that the course's explanations do not give ("walk me through
    writing its backward kernel line by line"), or that `answer` does not ("show me code for it" answered
    in prose): named as not covered beside the answer to the subject."""
    labels = [label for pattern, label in _NOT_GIVEN if pattern.search(question)]
    if _ASKS_FOR_CODE.search(question) and not _HAS_CODE.search(answer) and "complete code" not in labels:
        labels.append("code for this")
    return labels


# A follow-up with this many terms of its own says enough to be declined for them: "why?" cannot, "ok thanks, now
# write me a poem about my cat" can.
JUDGED_ALONE = 5


def _decide(
    question: str,
    *,
    course: Course | None,
    history: list[tuple[str, str]] = (),
    previous_explanation_id: int | None = None,
    exclude_card_id: int | None = None,
    query: str | None = None,
    as_follow_up: bool = False,
) -> Plan:
    """The plan for one question. `query` overrides what is matched (a lab run's subject, say); `as_follow_up`
    reads it as a follow-up to the previous question whatever its wording."""
    if course is None:
        if intent.is_instruction_to_the_teacher(question):
            return Plan("declined", None, question)
        return Plan("not_covered", None, question)
    if query is None and intent.is_acknowledgement(question):
        # "thanks!", "ok got it": nothing is asked, so nothing is answered (matched, "ok" found the next explanation
        # of the previous subject).
        return Plan("declined", course, question, acknowledged=True)
    counts, words = course_vocabulary(course)
    index = explanation_match.get_index(course.slug)
    explanations = index.explanations
    # The answer this message follows, when it followed an explanation: read once, used by every rule below.
    earlier = explanations.get(previous_explanation_id) if previous_explanation_id is not None else None
    # "bank conflicts in shard memory": a word typed for another, put back into the course's phrase.
    corrected = fix_phrases(expand_short_forms(question), words, course_phrases(course))
    previous = _previous_question(list(history))
    own_terms = len(set(tokenize(question)))
    resolved = query or without_analogies(corrected)
    follow_up = (
        bool(previous)
        and query is None
        and (as_follow_up or intent.is_follow_up(question, own_terms) or _compares_something_unnamed(question, counts))
        and (as_follow_up or not _only_names_a_term(corrected, index, earlier))
    )
    fixed = fix_typos(corrected, words)
    if earlier is not None and query is None and (again := intent.asks_again(question)):
        if not [t for t in _named_course_terms(fixed, counts) if t != "course"]:
            # "ok but in plain words?" asks for the same answer, not for the next explanation its words match; "where
            # does the course say that?", for it with where it comes from.
            plan = Plan("explanation", course, question, query=earlier.question)
            return _in_short(plan, earlier, exclude_card_id, again)
    swapped = None
    if follow_up:
        names = uncovered_terms(fixed, counts, course_stems(course))
        if names and set(tokenize(question)) <= set(tokenize(" ".join(names))):
            # "what about on AMD?": all the follow-up adds is a subject the course never mentions.
            return Plan("not_covered", course, question, uncovered=names)
        # "and on an A100?" after an H100 question asks that question again about the A100, not about whatever
        # the course says of the A100.
        swapped = intent.swapped_in(previous, corrected)
        resolved = swapped or f"{previous} {_reason_asked_of(question, earlier)} {corrected}"
    rewritten = rewrite(resolved, words)
    pictured = mechanism_terms(corrected)  # the course's mechanisms the message pictures (a kitchen, a warehouse)
    if resolved != corrected and not follow_up and query is None:
        # An analogy cut from the question still says which mechanism it pictures ("a picker who only finds out
        # the next aisle after grabbing this item": dependent loads).
        kept = mechanism_terms(resolved)
        rewritten = " ".join([rewritten, *(t for t in pictured if t not in kept)])
    # The detector reads the learner's own message; its paraphrase vote shares the vector of what is
    # matched when that is the same message. A follow-up that asks what a course answer gives (how to check, how
    # much, why) in no instruction's wording ("how do I check that?") is voted on as read in its conversation:
    # alone, its few words lean towards the exemplars aimed at the teacher. "can you be my girlfriend instead?"
    # asks for no such thing and keeps its own vote.
    as_matched = rewritten if resolved == question or (follow_up and _asks_for_a_course_answer(question)) else None
    if intent.is_instruction_to_the_teacher(question, course.slug, as_matched=as_matched):
        return Plan("declined", course, question)
    if (not follow_up or own_terms >= JUDGED_ALONE) and query is None and intent.is_off_topic(question, course.slug):
        # "Which graphics card for gaming?": the course's words in their everyday sense. A follow-up with words enough
        # of its own is judged on them too ("ok got it. now could you write my sister a birthday poem?").
        other = _other_course(rewritten, course)
        if other is not None:
            return Plan("other_course", course, question, query=rewritten, other_course=other)
        return Plan("declined", course, question)
    if follow_up and query is None and _leaves_the_subject(question, own_terms, fixed, counts, course):
        # "ok got it. btw can you draft a toast for my brother's wedding?": read after the last question, the
        # message would take its subject; alone it names nothing of the course and asks for no course answer.
        return Plan("declined", course, question)
    hits = retrieve(rewritten, k=5, course=course.slug)
    # (A follow-up is matched with the previous question's words already.)
    subject = _sections_of(earlier) if not follow_up and query is None else frozenset()
    matches = lesson_vote(explanation_match.match(rewritten, course.slug, k=8), hits, course.slug, subject)
    if pictured and not follow_up and query is None and not (matches and matches[0].answers):
        # "while my pasta boils I chop the next veggies. is there a GPU version of that for loading tiles?": the story
        # outweighs the question; what it asks, with the mechanism the story pictures, is matched instead.
        story, asked = question_parts(corrected)
        if story and asked:
            found = explanation_match.match(rewrite(" ".join([*asked, *pictured]), words), course.slug, k=8)
            if found and found[0].answers:
                matches = lesson_vote(found, hits, course.slug, subject)
    if follow_up and own_terms and not swapped:
        new_part = _with_subject(corrected, previous, earlier, course.slug)
        matches = _favour_the_new_part(
            matches,
            rewrite(new_part, words),
            rewrite(previous, words),
            course.slug,
            whole=new_part != corrected,
            answered=earlier.pk if earlier is not None else None,
            said=earlier is not None and bool(already_said(question, earlier)),
        )
    # "does that apply to FP8 as well?" after an answer that already says what FP8 needs ("8 bf16 values or 16
    # FP8 values"): that answer leads, and what it says of FP8 is quoted below.
    swapped_terms = set(tokenize(swapped)) - set(tokenize(previous)) if swapped and earlier is not None else set()
    if swapped_terms and swapped_terms <= terms_of(earlier.answer):
        matches.sort(key=lambda m: m.explanation_id != earlier.pk)
    if follow_up and _asks_only_how_much(question) and earlier is not None and index.kinds[earlier.pk] == "quantity":
        # "how much in actual numbers?" after an answer to a how-much question asks for its numbers, which the
        # joined words may rank second: the previous answer leads, and is quoted below if it holds them.
        matches.sort(key=lambda m: m.explanation_id != earlier.pk)
    if follow_up and earlier is not None and intent.asks_another_form(question) and not _ASKS_FOR_CODE.search(question):
        # "draw it as a timeline" after "What does a launch-bound step look like in Nsight Systems?": the same
        # answer, not the next explanation that the word "timeline" matches.
        matches = _as_matched(earlier, course.slug) + [m for m in matches if m.explanation_id != earlier.pk]
    asked_kind = explanation_match.question_kind(question)
    told = ""
    if follow_up and earlier is not None and asked_kind == "diagnose":
        telling = _ways_to_tell_first(matches, earlier, course.slug)
        if telling is matches and intent.checks_without_object(question):
            # "how would I tell?" after an answer whose subject has no explanation of how to tell, but which says
            # how itself ("Watch for recompiles with TORCH_LOGS=recompiles"): those sentences, not how to tell
            # something else.
            told = ways_to_tell_in(earlier)
        matches = telling
    catch = None
    if follow_up and earlier is not None and asked_kind == "cost":
        catch = _catch(rewrite(f"{earlier.question} {corrected}", words), earlier, course.slug)
        if catch is not None and matches and matches[0].explanation_id != earlier.pk:
            # (Where the previous answer still leads, the rules for that case below look for the cost in it first.)
            matches = [catch, *(m for m in matches if m.explanation_id != catch.explanation_id)]
    matches = matches[:4]
    plan = Plan("not_covered", course, question, query=rewritten, hits=hits)
    plan.continues = _sections_of(earlier)
    if told and (leading := _as_matched(earlier, course.slug)):
        return _quoting(plan, leading[0], matches, exclude_card_id, told)
    if follow_up and earlier is not None and intent.asks_for_a_setting(question):
        # "is there a flag for that?" after an answer that names the switch (`allow_tf32 = True`): those sentences,
        # not the next explanation the word "flag" matches.
        found = settings_in(earlier)
        if found and (leading := _as_matched(earlier, course.slug)):
            return _quoting(plan, leading[0], matches, exclude_card_id, found)
    if follow_up and earlier is not None and intent.asks_for_a_remedy(question):
        # "how do I avoid them?" after an answer on why bank conflicts hurt, which names the fixes on the way: those
        # sentences, not the whole answer again nor the next explanation its pronoun matches. An answer to "How do I
        # reduce launch overhead?" is the remedy whole, and is given again: not its sentences that merely share the
        # verb ("the fixed host-side cost").
        remedy = _says_what_to_do(index.kinds[earlier.pk])
        fixes = "" if remedy else remedies_in(earlier)
        if fixes and (leading := _as_matched(earlier, course.slug)):
            return _quoting(plan, leading[0], matches, exclude_card_id, fixes)
        if matches and matches[0].explanation_id == earlier.pk and remedy:
            return _with_explanation(plan, matches[0], matches, exclude_card_id)
        subject = _sections_of(earlier)
        doing = [
            m
            for m in matches
            if _says_what_to_do(index.kinds[m.explanation_id])
            and m.answers
            and subject & _sections_of(explanations[m.explanation_id])
        ]
        if not remedy and doing:
            # "what can I do about it?" after an answer on why batch-1 decode is slow, which names no fix: an
            # explanation on that subject that says what to do ("What can I do to make slow decode faster?").
            matches = [doing[0], *(m for m in matches if m is not doing[0])]
    if follow_up and matches and earlier is not None and matches[0].explanation_id == earlier.pk:
        said = already_said(" ".join(sorted(swapped_terms)) or question, earlier)
        if said and matches[0].answers:
            return _quoting(plan, matches[0], matches, exclude_card_id, said)
        # Another explanation, unless it is far behind: after "Should I fuse two large matmuls?", a bare "why
        # not?" is still about that answer, not about the next explanation that happens to clear the bar.
        # Nor down to a part of the previous answer's subject: "who actually uses it?" after "What is warp
        # specialization?" goes on about warp specialization, not to "What is a warp?".
        subject = _defined_terms(matches[0].question)
        fresh = [
            m
            for m in matches[1:]
            if m.answers
            and m.score >= matches[0].score - FRESH_GAP
            and not _part_of(m.question, subject)
            and not _built_on(m.question, subject, question)
        ]
        if _ASKS_FOR_CODE.search(question):
            # "Show it as pseudocode": the same subject, in code. Another explanation only if it gives code and
            # the previous one does not; few do, and the next one on the list would only change the subject.
            fresh = [m for m in [matches[0], *fresh] if _HAS_CODE.search(explanations[m.explanation_id].answer)]
            fresh = fresh if fresh and fresh[0] is not matches[0] else []
        elif catch is not None:
            # "what's the catch?" after "What is a paged KV cache?" wants what paging costs, not how to size its
            # blocks.
            fresh = [catch, *(m for m in fresh if m.explanation_id != catch.explanation_id)]
        elif asked_kind == "cost":
            # Of those, first one that answers with a cost.
            fresh.sort(key=lambda m: index.kinds[m.explanation_id] != "cost")
        if fresh:
            matches = fresh + [m for m in matches if m not in fresh]
    # What the course lacks, and which of it the message asks about (a name that only sets the scene, "Every
    # time k8s scales up a new pod, ...", is named as not covered but does not raise the bar the answer must clear).
    lacking = not_covered(fixed, course)
    plan.uncovered, unknown, asked_unknown = list(lacking.names), lacking.unknown, lacking.asked
    about = explanation_match.about_this_course(matches)
    domain = about if about is not None else bool(course_terms(rewritten, counts))
    named = None if follow_up else two_things(fixed)
    if not follow_up:
        matches = _comparison_first(matches, named or _named_together(fixed), course.slug)
    best = matches[0] if matches else None
    sides = None if named is None else _each_side(named, course.slug, best)
    if sides is not None:
        plan.uncovered = list(dict.fromkeys([*plan.uncovered, *unknown]))
        return _with_both_sides(plan, sides, exclude_card_id)
    each = None if follow_up or query is not None else _each_part(fixed, rewritten, words, course.slug)
    # A part the course cannot answer ("speculative decoding ... and why does the output stay the same?") must
    # not be answered by whatever its other words match: with a word the course never uses, every part needs
    # the bar a partly covered question needs.
    if each is not None and (not asked_unknown or min(m.score for m in each) >= UNCOVERED_ANSWER):
        plan.uncovered = list(dict.fromkeys([*plan.uncovered, *unknown]))
        return _with_each_part(plan, each, matches, exclude_card_id)
    covered = (
        None
        if follow_up or query is not None
        else _covered_part(fixed, [*plan.uncovered, *unknown], counts, words, course)
    )
    if covered is not None:
        # "How does a paged KV cache save memory? And how does speculative decoding pick its draft tokens?":
        # the part the course covers is answered as if asked alone (the whole message, "draft tokens"
        # included, would match beside it), and the rest is named as not covered.
        plan.uncovered = list(dict.fromkeys([*plan.uncovered, *unknown]))
        return _with_explanation(plan, covered, matches, exclude_card_id)
    if best and best.answers and (not asked_unknown or best.score >= UNCOVERED_ANSWER):
        plan.uncovered = list(dict.fromkeys([*plan.uncovered, *unknown]))
        return _with_explanation(plan, best, matches, exclude_card_id)
    plan.near = [m for m in matches if m.score >= explanation_match.NEAR][:3]
    if asked_unknown and domain:
        # "What is speculative decoding?": the course has nothing on the thing asked about; quoting a
        # passage about its other words ("decoding") would pad the answer with something beside the point.
        plan.uncovered = list(dict.fromkeys([*plan.uncovered, *unknown]))
        return plan
    top = hits[0] if hits else None
    if domain and top and (about or plan.near or top.coverage >= PASSAGE_COVERAGE):
        # A picture of one of the course's mechanisms (a warehouse picker who only learns the next aisle after this
        # one) is told in another subject's words, but it is about the course.
        if not pictured and _about_something_else(question, course, about):
            plan.kind, plan.near = "declined", []
            return plan
        plan.kind = "passage"
        plan.support = readable_passage(hits, plan.near)
        if plan.support is None:
            plan.kind = "not_covered"
        return plan
    other = _other_course(rewritten, course)
    if other is not None:
        plan.kind, plan.other_course = "other_course", other
        return plan
    if not domain:
        plan.kind, plan.near = "declined", []
        plan.no_subject = bool(previous) and not (
            _about_something_else(question, course, about)
            if len(set(tokenize(question))) > NO_SUBJECT_TERMS
            else _names_something_else(question, course)
        )
    return plan


BARE_TERM_WORDS = 3  # "swizzling?", "tma?", "paged KV cache?": a term alone, at most this many words


def _only_names_a_term(message: str, index: explanation_match.ExplanationIndex, earlier: Explanation | None) -> bool:
    """ "swizzling?", "GQA", "tma?": a message that is only one of the course's named terms, with nothing that
    carries on from the last message ("and", "what about"), asks what that term is, whatever was asked before;
    read with the previous question, the joined words would answer that one again. Not when the previous answer
    was the term's own explanation."""
    if len(message.split()) > BARE_TERM_WORDS or intent.carries_on(message):
        return False
    if explanation_match.question_kind(message) not in (None, "definition"):
        return False  # "what's the downside?" asks something of the last answer's subject
    term = index.terms.get(bare_term(message))
    if term is None:
        # A short form the glossary writes inside its term ("GQA" in "Grouped-query attention (GQA)"): the explanation
        # the message alone answers with, when that one asks what a term is and its term holds every word of the
        # message ("to what size?" is not asking what tiling is, nor "on an A100?" how cp.async and TMA differ).
        found = explanation_match.match(message, index.course_slug, k=1)
        named = (
            found
            and found[0].answers
            and index.kinds[found[0].explanation_id] in (None, "definition")
            and set(tokenize(message)) <= set(bare_term(found[0].question).split())
        )
        term = found[0].explanation_id if named else None
    return term is not None and (earlier is None or term != earlier.pk)


def _named_course_terms(text: str, counts: Counter) -> list[str]:
    """The course's terms that the text names, without the one-letter stems of contractions ("I'm": not "m")."""
    return [t for t in course_terms(text, counts) if len(t) > 1]


def _leaves_the_subject(question: str, own_terms: int, fixed: str, counts: Counter, course: Course) -> bool:
    """A follow-up that names nothing of the course, is mostly words the course never uses, and asks for nothing a
    course answer gives (a way to check, a reason, a remedy, another form of the last answer)."""
    return (
        own_terms >= 3
        and not _named_course_terms(fixed, counts)
        and _names_something_else(question, course)
        and not _asks_for_a_course_answer(question)
        and not _ASKS_FOR_CODE.search(question)
        and not intent.asks_another_form(question)
    )


def _asks_for_a_course_answer(question: str) -> bool:
    """A message asking for what a course answer gives (a way to check, a figure, a reason, a when, a cost, a
    remedy), with none of an instruction's wording."""
    if intent.pattern_score(question):
        return False
    return explanation_match.question_kind(question) not in (None, "definition") or bool(
        intent.asks_for_a_remedy(question)
    )


def _defined_terms(question: str) -> frozenset[str]:
    """The terms a definition question asks about ("What is warp specialization?" -> warp, special); empty for
    other questions."""
    if explanation_match.question_kind(question) != "definition":
        return frozenset()
    return frozenset(explanation_match.bare_term(question).split())


def _part_of(question: str, subject: frozenset[str]) -> bool:
    """Whether `question` asks what a part of `subject` is ("What is a warp?" of warp specialization)."""
    terms = _defined_terms(question)
    return bool(terms) and terms < subject


def _built_on(question: str, subject: frozenset[str], follow_up: str) -> bool:
    """Whether `question` asks what a longer name built on `subject` is ("What is warp specialization?" after "What
    is a warp?"), when the follow-up does not name what the longer name adds: "give me an example" of a warp is
    not about warp specialization."""
    terms = _defined_terms(question)
    return bool(subject) and terms > subject and not (terms - subject) & set(tokenize(follow_up))


def _compares_something_unnamed(question: str, counts: Counter) -> bool:
    """A short comparison that names none of the course's terms ("is higher always better?"): of what, the
    previous turn says."""
    return (
        len(set(tokenize(question))) <= 4
        and intent.compares_without_saying_with_what(question)
        and not course_terms(question, counts)
    )


def _reason_asked_of(question: str, earlier: Explanation | None) -> str:
    """A bare "why?" asks the reason for what the previous answer (`earlier`) said, not the previous question
    again: the answer's opening paragraph joins the query, so the match lands on the explanation of that claim."""
    if earlier is None or not intent.asks_bare_reason(question):
        return ""
    return earlier.answer.strip().split("\n\n")[0]


LESSON_VOTE = 0.1


# A question asked mid-conversation that does not read as a follow-up may still use a word in the conversation's
# sense: "what block size is typical?" after paged attention asks about KV blocks, not thread blocks. Explanations on
# the previous answer's sections gain this much; a new subject ("how does FlashAttention work?") leads by far more.
# Read off the tune and dev follow-ups (0.03 to 0.1 gave the same answers).
SUBJECT_VOTE = 0.06


def lesson_vote(matches: list, hits: list[Hit], course_slug: str, subject: frozenset[str] = frozenset()) -> list:
    """Re-rank close explanation matches by where the lesson retrieval finds the question: an explanation
    resting on a section the retrieval ranks high gains up to LESSON_VOTE (the top section's share of it), and one
    resting on a section of the conversation's `subject` SUBJECT_VOTE."""
    if not hits or not matches:
        return matches
    top = hits[0].score or 1.0
    strength = {}
    for hit in hits:
        strength.setdefault(hit.passage.section_slug, hit.score / top)
    idx = explanation_match.get_index(course_slug)

    def vote(m) -> float:
        sections = {s.slug for s in idx.explanations[m.explanation_id].sections.all()}
        lesson = max((strength.get(slug, 0.0) for slug in sections), default=0.0)
        return LESSON_VOTE * lesson + (SUBJECT_VOTE if sections & subject else 0.0)

    return sorted(matches, key=lambda m: (not m.answers, -(m.score + vote(m))))


_QUANTITY_WORDS = frozenset(
    tokenize("much many big bigger large larger long longer fast faster slow slower small smaller take takes took")
)
# What a how-much follow-up may add without naming anything new ("in actual numbers?", "in practice?", "what does
# it really reach?", "how big is the difference?").
_HOW_MUCH_WORDS = frozenset(
    tokenize(
        "numbers figures overall practice measure measured save saves saving reach reaches hit achieve attain "
        "difference gap have has get gets got hold holds sit sits"
    )
)
# Words a follow-up leans on that no answer's sentence needs to hold ("why not make them way bigger then?").
# Nor the judgement asked of it ("is higher always better?"): the answer says when, in its own words.
_FILLER_WORDS = frozenset(
    tokenize(
        "way make makes made really actual actually exactly real always better worse good bad best worst "
        "catch downside downsides drawback drawbacks one ones thing things stuff"
    )
)
# A comparison in a follow-up, and the words an answer may say it in ("bigger": "large blocks", "a larger one").
_SAME_SIZE_WORD = {
    term: group
    for group in (
        frozenset(tokenize(words))
        for words in (
            "big bigger large larger",
            "small smaller tiny",
            "fast faster quick quicker speed",
            "slow slower",
            "cheap cheaper",
            "high higher",
            "low lower",
            # "why not triple?" after an answer that says "three or four stages"
            "double two twice",
            "triple three",
            "quadruple four",
        )
    )
    for term in group
}


def _as_matched(previous: Explanation, course_slug: str) -> list:
    """The previous answer as a match of its own question, to lead a list: [] if that question matches another
    explanation first."""
    found = explanation_match.match(previous.question, course_slug, k=1)
    return found if found and found[0].explanation_id == previous.pk else []


def _sections_of(explanation: Explanation | None) -> frozenset[str]:
    return frozenset(s.slug for s in explanation.sections.all()) if explanation is not None else frozenset()


def _first_on_subject(
    candidates: list, previous: Explanation, course_slug: str, wanted
) -> explanation_match.Match | None:
    """The first of `candidates` (matches, best first) that `wanted` (an explanation id -> bool) accepts, on the
    previous answer's subject (one of its sections) and at least NEAR: of the kind asked and on the subject just
    answered, it is confident in this context even where the joined words alone fall short of the bar."""
    idx = explanation_match.get_index(course_slug)
    subject = _sections_of(previous)
    for m in candidates:
        if (
            wanted(m.explanation_id)
            and m.score >= explanation_match.NEAR
            and subject & _sections_of(idx.explanations[m.explanation_id])
        ):
            return replace(m, clear=True)
    return None


# A sentence that says how to tell: a tool, a log, or what to look for and where.
_TELLS_HOW = re.compile(
    r"\b(?:TORCH_LOGS|ncu|nsys|Nsight|profiler|nvidia-smi|watch\s+for|look\s+for|shows?\s+up\s+as|"
    r"in\s+a\s+(?:benchmark|trace|profile|timeline)\b|tell-?tale|signature)",
    re.IGNORECASE,
)


def ways_to_tell_in(previous: Explanation) -> str:
    """The sentences of the previous answer that say how to tell (a tool, a log, what to look for), in order; ""
    when it has none."""
    return " ".join(s for s in _sentences(previous) if _TELLS_HOW.search(s))


# A sentence that names the fix for what an answer describes ("The fixes are padding the rows ...", "To avoid it,
# make branch conditions uniform ..."); not one that says what does not fix it ("fusion does not cure host overhead").
_SAYS_THE_FIX = re.compile(
    r"\b(?:the|typical|usual|common|cheap|simple|standard)\s+(?:fix(?:es)?|remed(?:y|ies)|cures?|workarounds?)\b"
    r"|(?:^|\*\*)(?:fix(?:es)?|remed(?:y|ies)|cures?)\s*:|\bfix\s+(?:the|it|this|that)\b|\bto\s+(?:avoid|prevent)\s+(?:it|this|that|them)\b"
    # "Engines prevent it by reserving one fixed KV pool at startup"
    r"|\b(?:prevents?|avoids?|fix(?:es)?|cures?|solves?)\s+(?:it|this|that|them)\s+(?:by|with)\b",
    re.IGNORECASE,
)
_NEGATED = re.compile(r"\b(?:not|never|rarely)\b|n't\b", re.IGNORECASE)


def _says_what_to_do(kind: str | None) -> bool:
    """An explanation of this kind (explanation_match.question_kind) says what to do: a remedy, or a how-to."""
    return explanation_match.same_kind("remedy", kind)


def remedies_in(previous: Explanation) -> str:
    """The sentences of the previous answer that say what fixes what it describes, in order; "" when it has none."""
    # A fix denied ("Fusion does not fix it") is no remedy; a negation after it ("... memory that never moves") is
    # part of the remedy.
    return " ".join(
        s for s in _sentences(previous) if (fix := _SAYS_THE_FIX.search(s)) and not _NEGATED.search(s[: fix.end()])
    )


# Inline code that sets something: a call, an assignment, a flag ("`torch.set_float32_matmul_precision("high")`",
# "`allow_tf32 = True`", "`TORCH_LOGS=recompiles`", "`--enforce-eager`").
_SETS_SOMETHING = re.compile(r"`[^`\n]*[(=][^`\n]*`|`--?[\w-]+`")


def settings_in(previous: Explanation) -> str:
    """The sentences of the previous answer that name a flag, call or setting in code, in order; "" when none."""
    return " ".join(s for s in _sentences(previous) if _SETS_SOMETHING.search(s))


def _sentences(explanation: Explanation) -> list[str]:
    return [s for paragraph in statements_by_paragraph(explanation.answer) for s in paragraph]


def _ways_to_tell_first(matches: list, previous: Explanation, course_slug: str) -> list:
    """ "how would I spot it in a profiler?" after "What is locality collapse?": an explanation that says how to
    tell, on the previous answer's subject, leads; how to tell something else does not."""
    kinds = explanation_match.get_index(course_slug).kinds
    # By the joined words' score: how well each says how to tell what was just answered. The follow-up's own words
    # ("in a profile") and the previous question's, counted apart, favour whichever shares more with either.
    by_score = sorted(matches, key=lambda m: -m.score)
    telling = _first_on_subject(by_score, previous, course_slug, lambda pk: kinds[pk] == "diagnose")
    if telling is None:
        return matches
    return [telling, *(m for m in matches if m.explanation_id != telling.explanation_id)]


CATCH_CANDIDATES = 40  # how far down the joined words' ranking a catch on the previous answer's subject is looked for


def _catch(query: str, previous: Explanation, course_slug: str) -> explanation_match.Match | None:
    """ "what's the catch?" after an answer on CUDA graphs: the explanation of what something costs or when not to
    use it ("What's the catch with CUDA graphs?", "When should I not fuse kernels?") on the previous answer's
    subject; None where there is none. `query` joins the previous answer's question to the follow-up: the learner's
    own first wording ("stop writing everything back to memory") would rank the cost of something else first
    ("What does it cost to write an intermediate to HBM?")."""
    idx = explanation_match.get_index(course_slug)

    def is_catch(pk: int) -> bool:
        return pk != previous.pk and (idx.kinds[pk] == "cost" or (idx.kinds[pk] == "when" and idx.negated[pk]))

    candidates = explanation_match.match(query, course_slug, k=CATCH_CANDIDATES)
    return _first_on_subject(candidates, previous, course_slug, is_catch)


def _asks_only_how_much(follow_up: str) -> bool:
    """ "how much faster in actual numbers?": a quantity asked of what was just said, naming nothing new."""
    own = set(tokenize(follow_up)) - _FILLER_WORDS - _QUANTITY_WORDS - _HOW_MUCH_WORDS
    return explanation_match.question_kind(follow_up) == "quantity" and not own


_ASKS_FOR_EXAMPLE = re.compile(r"\b(?:examples?|instance)\b", re.IGNORECASE)
_OPENS_EXAMPLE = re.compile(r"(?:for\s+(?:example|instance)|e\.g\.|example:)", re.IGNORECASE)


def already_said(follow_up: str, previous: Explanation) -> str:
    """The sentences of the previous answer that hold every term the follow-up adds ("how long does it
    take?" after an answer that says how long), and its measured numbers when the follow-up asks "how
    much", in order; "" when it does not hold them all."""
    numbers = explanation_match.question_kind(follow_up) == "quantity"
    own = set(tokenize(follow_up)) - _FILLER_WORDS
    if numbers:  # "how long does it take?" asks for the answer's figures, not for the words "long", "take"
        own -= _QUANTITY_WORDS | _HOW_MUCH_WORDS
    elif not own:
        return ""
    # Each term the follow-up adds, with the words an answer says it in ("why not bigger?": "large blocks").
    wanted = [_SAME_SIZE_WORD.get(term, frozenset({term})) for term in own]
    paragraphs = statements_by_paragraph(previous.answer)
    sentences = [s for paragraph in paragraphs for s in paragraph]
    terms = [terms_of(sentence) for sentence in sentences]
    holding = [
        i
        for i, held in enumerate(terms)
        if any(held & forms for forms in wanted) or (numbers and re.search(r"\d", sentences[i]))
    ]
    if numbers and own and len(holding) > 5:
        # "how many threads in it?" after an answer full of figures: the figures said of threads.
        holding = [i for i in holding if re.search(r"\d", sentences[i]) and any(terms[i] & forms for forms in wanted)]
    found = set().union(*(terms[i] for i in holding)) if holding else set()
    if not holding or not all(found & forms for forms in wanted) or len(holding) > (5 if numbers else 3):
        return ""
    if _ASKS_FOR_EXAMPLE.search(follow_up):
        # "give me an example": the example whole, not only its opening sentence ("For example, a shuffle
        # down by 4 ..." goes on to sum 32 values in five steps).
        paragraph_of = [n for n, paragraph in enumerate(paragraphs) for _ in paragraph]
        holding = sorted(
            {
                j
                for i in holding
                for j in (range(i, len(sentences)) if _OPENS_EXAMPLE.match(sentences[i]) else [i])
                if paragraph_of[j] == paragraph_of[i]
            }
        )
    return " ".join(sentences[i] for i in holding)


def _with_subject(follow_up: str, previous: str, earlier: Explanation | None, course_slug: str) -> str:
    """The follow-up with its first pronoun read as the conversation's subject: the term the previous question
    asks to define ("what can't go inside one?" after "what is a cuda graph and why does it help decode?"), else
    the first course term it names ("then why would anyone use it?" after "why doesn't pipeline parallelism
    reduce per-token latency?"), else the term the previous answer defines. Unchanged when there is none."""
    if two_things(previous) or explanation_match.question_kind(previous) in ("difference", "choice"):
        return follow_up  # two things were named: "which one" is not either of them
    if explanation_match.named_term(follow_up, course_slug):
        return follow_up  # "and those all-reduces, how big are they?": it names what its pronoun stands for
    # "and what does it really reach?" after "What's the H100's spec-sheet HBM bandwidth?" asks for the previous
    # answer's figure: "it" is the whole subject asked about, not the first term that question happens to name.
    named = None if explanation_match.question_kind(follow_up) == "quantity" else previous
    subject = (
        explanation_match.asked_term(previous)
        or (named and explanation_match.named_term(named, course_slug))
        or (earlier and explanation_match.asked_term(earlier.question))
    )
    return _SUBJECT_PRONOUN.sub(subject, follow_up, count=1) if subject else follow_up


# A pronoun standing for a thing: not "which one", "each one", "the one", and not "that" or "this", which as
# often stand for what the previous answer said ("before that stops being true").
_SUBJECT_PRONOUN = re.compile(r"(?<!which )(?<!each )(?<!the )(?<!any )\b(?:it|one|them|they)\b", re.IGNORECASE)


def _favour_the_new_part(
    matches,
    new_part: str,
    previous: str,
    course_slug: str,
    *,
    whole: bool = False,
    answered: int | None = None,
    said: bool = False,
):
    """A follow-up is matched with its previous question for the topic; among those matches, rank first
    the ones that also answer what the follow-up adds ("how much faster?", "what about decode?"), and stay
    on the previous question's own topic: after a CUDA-graph question, "what if the batch size changes?"
    asks about graphs and batch sizes, not about batching alone."""
    found = explanation_match.match(new_part, course_slug, k=50)
    alone = {m.explanation_id: m.score for m in found}
    before = {m.explanation_id: m.score for m in explanation_match.match(previous, course_slug, k=50)}
    # Only a new part that the course answers on its own ("decode") reaches past the joint top four;
    # "is that always true?" alone matches nothing in particular.
    pool = matches if found and found[0].answers else matches[:4]
    # `said`: the previous answer already holds what the follow-up asks ("how much of it is there per SM?" after "What
    # is shared memory?"); matched about as well as the best alone, it is not left for a namesake.
    kept = bool(found) and said and alone.get(answered, 0.0) >= found[0].score - SAID_GAP
    if whole and found and found[0].answers and found[0].explanation_id != answered and not kept:
        # With its subject read in (`whole`), the follow-up is a question of its own: the previous question has
        # given what it had to give, and counting it again would only pull the answer back to the previous one.
        # Unless the previous answer (`answered`) is its best match: then the rules for that case apply.
        return sorted(pool, key=lambda m: (-alone.get(m.explanation_id, 0.0), -m.score))
    # The three count alike: weighing the previous question half as much lost more follow-ups than it won.
    return sorted(pool, key=lambda m: -(m.score + alone.get(m.explanation_id, 0.0) + before.get(m.explanation_id, 0.0)))


def _in_short(plan: Plan, previous: Explanation, exclude_card_id: int | None, asked: str) -> Plan:
    """The previous answer's opening paragraphs, on their own: the course has no plainer wording of it."""
    plan.explanation, plan.in_short = previous, asked
    plan.continues = _sections_of(previous)
    plan.check_question = check_yourself(previous, exclude_card_id)
    return plan


def _quoting(plan: Plan, previous, matches, exclude_card_id: int | None, sentences: str) -> Plan:
    """The previous answer (`previous`, its match) given as the sentences of it that answer the follow-up: "The answer
    above already says it", with no lesson quote and nothing named as uncovered."""
    plan = _with_explanation(plan, previous, matches, exclude_card_id)
    plan.already_said, plan.support, plan.quote, plan.uncovered = sentences, None, "", []
    return plan


def _with_explanation(plan: Plan, best, matches, exclude_card_id: int | None) -> Plan:
    explanation = explanation_match.get_index(plan.course.slug).explanations[best.explanation_id]
    plan.kind = "explanation"
    plan.explanation = explanation
    plan.near = [m for m in matches[1:] if m.answers][:2]
    plan.support, plan.quote = supporting_quote(plan.query, explanation, plan.course.slug)
    plan.check_question = check_yourself(explanation, exclude_card_id)
    plan.lab = explanation.lab or None
    # Terms the question names that the explanation does not: the part of the question left uncovered.
    plan.uncovered = [t for t in plan.uncovered if t.lower() not in explanation.answer.lower()]
    return plan


# "the difference between A and B", "A vs B", "how is A different from B", "compare A and B"
_END = r"\s*(?:[?.!,;:]|$)"
_TWO_THINGS = [
    re.compile(r"\bdiffer\w*\s+between\s+(?P<a>.+?)\s+and\s+(?P<b>.+?)" + _END, re.I),
    # "can someone explain prefill vs decode?": the request before the first thing is not part of its name.
    re.compile(
        r"^(?:\W*(?:(?:so|ok|okay|hey|hi)[,\s]+)*(?:what(?:'s|\s+is)|tell\s+me\s+about|help\s+me\s+understand"
        r"|(?:(?:can|could|would)\s+(?:some\s?one|somebody|anyone|you)\s+)?(?:please\s+)?(?:explain|describe))\s+)?"
        r"(?P<a>[^,?]+?)\s+(?:vs\.?|versus)\s+(?P<b>.+?)" + _END,
        re.I,
    ),
    # Not "How are prefill and decode different from the GPU's point of view?": with two things named before
    # "different from", what follows it is a point of view, not the second thing.
    re.compile(
        r"\bhow\s+(?:is|are|does|do)\s+(?P<a>(?:(?!\s+and\s).)+?)\s+differ\w*\s+(?:from|to)\s+(?P<b>.+?)" + _END, re.I
    ),
    re.compile(r"\bcompare\s+(?P<a>.+?)\s+(?:and|with|to)\s+(?P<b>.+?)" + _END, re.I),
]
# Where or what for, not part of the thing's name: "pipeline parallelism for serving", "kernels on a GPU", "the L2
# cache on Hopper" (a GPU's name or generation).
_TRAILER = re.compile(
    r"\s+(?:on|in|for|during)\s+(?:an?\s+|the\s+)?(?:gpu|gpus|cuda|nvidia\s+gpus?|[a-z]{1,2}\d{2,3}[a-z]?s?|hopper|"
    r"ampere|blackwell|serving|(?:llm\s+)?inference|llms?|production|transformers?)\s*$",
    re.I,
)


# "Both L2 and shared memory are on chip, so what's the difference between them?": the two things are named
# before the question refers to them.
_THEM = re.compile(
    r"\bdiffer\w*\s+between\s+(?:them|the\s+two|those\s+two|these\s+two)\b|\bhow\s+do\s+they\s+differ\b"
    r"|\bcompare\s+them\b",
    re.IGNORECASE,
)
_NAMED_PAIR = re.compile(
    r"(?:^|\bboth\s+|[,;:]\s*)(?P<a>[\w.-]+(?:\s+[\w.-]+){0,2}?)\s+and\s+(?P<b>[\w.-]+(?:\s+[\w.-]+){0,2}?)\s+"
    r"(?:are|is|both|each|have|do|use|sound|seem|look)\b",
    re.IGNORECASE,
)
_MIXED_PAIR = re.compile(
    r"\b(?:mix\w*\s+up|confus\w*|heard\s+(?:of|about)|read\s+about)\s+(?P<a>[\w.-]+(?:\s+[\w.-]+){0,2}?)\s+and\s+"
    r"(?P<b>[\w.-]+(?:\s+[\w.-]+){0,2}?)\s*(?:[.,;:?!]|$)",
    re.IGNORECASE,
)


def two_things(question: str) -> tuple[str, str] | None:
    """The two things a "difference between A and B" question names, or None."""
    for pattern in _TWO_THINGS:
        m = pattern.search(question)
        if m:
            a, b = (_TRAILER.sub("", m.group(x)).strip(" '\"") for x in ("a", "b"))
            if a and b and len(a.split()) <= 5 and len(b.split()) <= 5:
                return a, b
    them = _THEM.search(question)
    if them:
        m = _NAMED_PAIR.search(question[: them.start()]) or _MIXED_PAIR.search(question[: them.start()])
        if m:
            a = re.sub(r"^both\s+", "", m.group("a").strip(" '\".,;:?!"), flags=re.IGNORECASE)
            return a, m.group("b").strip(" '\".,;:?!")
    return None


def _compares(explanation: Explanation, side_tokens: list[set[str]]) -> bool:
    """Whether the explanation compares the two things named: one of its wordings asks for a difference and
    names both. A learner's scenario that only mentions a kernel and a warp ("Reading a Hopper kernel, I keep
    seeing warpgroups...") does not compare the two."""
    for text in (explanation.question, *explanation.paraphrases):
        wording = set(tokenize(text))
        asks = explanation_match.question_kind(text) == "difference" or text == explanation.question
        if asks and all(tokens and tokens <= wording for tokens in side_tokens):
            return True
    return False


# "How are prefill and decode different from the GPU's point of view?": two things named together before
# "differ". An explanation comparing the two answers it first; without one, the message is matched as a whole,
# not as two questions about each side (see two_things).
_NAMED_TOGETHER = re.compile(r"\bhow\s+(?:is|are|does|do)\s+(?P<a>[^,?]+?)\s+and\s+(?P<b>[^,?]+?)\s+differ\w*", re.I)


def _named_together(question: str) -> tuple[str, str] | None:
    m = _NAMED_TOGETHER.search(question)
    return (m.group("a"), m.group("b")) if m else None


def _comparison_first(matches: list, sides: tuple[str, str] | None, course_slug: str) -> list:
    """The matches, with an explanation that compares the two things named (`sides`) first ("How are prefill
    and decode different from the GPU's point of view? Which one is limited by what?": a long message may match
    something else a hair better than "What's the difference between prefill and decode?")."""
    if sides is None:
        return matches
    side_tokens = [set(tokenize(side)) for side in sides]
    explanations = explanation_match.get_index(course_slug).explanations
    comparing = [m for m in matches if m.answers and _compares(explanations[m.explanation_id], side_tokens)]
    return comparing[:1] + [m for m in matches if m not in comparing[:1]]


_BASELINE = re.compile(
    r"^(?:the\s+)?(?:regular|standard|normal|plain|vanilla|ordinary|usual|traditional|classic|conventional)\s+", re.I
)


def _each_side(sides: tuple[str, str], course_slug: str, best) -> tuple[Explanation, Explanation] | None:
    """For "the difference between A and B" (`sides`, see two_things): the explanations of A and of B, when the
    best match is not one explanation that covers both (a "difference" explanation naming the two) and each
    side has its own."""
    idx = explanation_match.get_index(course_slug)
    side_tokens = [set(tokenize(side)) for side in sides]
    if best is not None and best.answers and _compares(idx.explanations[best.explanation_id], side_tokens):
        return None
    if any(_BASELINE.match(side) for side in sides):
        # "flash attention vs regular attention": the other side's explanation says what it changes about the
        # usual way; "regular attention" is not a subject of its own ("What is regular attention?" finds paging).
        return None
    found = []
    for side in sides:
        pk = idx.terms.get(bare_term(f"What is {side}?"))
        if pk is None:
            top = explanation_match.match(f"What is {side}?", course_slug, k=1)
            pk = top[0].explanation_id if top and top[0].answers else None
        if pk is None:
            return None
        found.append(idx.explanations[pk])
    return (found[0], found[1]) if found[0].pk != found[1].pk else None


# The second of two things asked gets an explanation of its own only when that explanation matches the part
# alone (with the message's context) and the message's topic both this well; below, a second answer was more
# often beside the point than not (tuned on the tune and dev splits' two-part questions).
PART_ALONE = 0.44
PART_TOPIC = 0.45
PART_OWN_TOP = 3  # a second part that says "it" is answered by one of its own best matches, read alone
_PRONOUN = re.compile(rf"\b(?:{intent.PRONOUNS})\b", re.IGNORECASE)


_WHAT_IS = re.compile(r"^\W*what(?:'s|\s+is|\s+are)\s+(?:an?\s+|the\s+)?\w", re.IGNORECASE)


def _each_part(question: str, rewritten: str, words: frozenset[str], course_slug: str):
    """For a message that asks two things, the explanation answering each, in the order asked; None when it
    asks one thing, when one explanation answers both, or when a part has no confident answer. A part is
    matched with the message's context, and ranked by its own match and the whole message's together (as
    a follow-up is ranked with its previous question), so "how do I tell?" stays on the message's topic."""
    context, asked = question_parts(question)
    if len(asked) < 2:
        return None
    whole = {m.explanation_id: m.score for m in explanation_match.match(rewritten, course_slug, k=50)}
    idx = explanation_match.get_index(course_slug)
    picked: list = []
    for n, part in enumerate(asked[:2]):
        alone = explanation_match.match(rewrite(f"{context} {part}", words), course_slug, k=50)
        topic = whole
        if n and _PRONOUN.search(part):
            # "..., and how many threads does it have?": "it" is the first part's subject, so the second part
            # is read with the first, and only an explanation that wins on the two together answers it.
            own = {m.explanation_id for m in alone[:PART_OWN_TOP]}
            if picked[0].explanation_id in own:
                return None  # the first part's explanation answers the second too
            alone = explanation_match.match(rewrite(f"{context} {asked[0]} {part}", words), course_slug, k=50)
            topic = {m.explanation_id: m.score for m in alone}
            # Read together, the two parts lean on the first part's explanation, but the second asks something
            # else: another explanation, among the best for the second part on its own.
            alone = [m for m in alone if m.explanation_id in own]  # the first part's is not among them
            if not alone:
                return None
        if not n and _WHAT_IS.match(part):
            best = alone[0]  # "What is a block table, and what does it cost?": the definition asked comes first
        else:
            best = max(alone, key=lambda m: (m.score + topic.get(m.explanation_id, 0.0)) / 2)
        if (best.score + topic.get(best.explanation_id, 0.0)) / 2 < explanation_match.ANSWER:
            return None
        if n and (best.score < PART_ALONE or topic.get(best.explanation_id, 0.0) < PART_TOPIC):
            return None  # the second part has no answer of its own, confident both alone and on the topic
        picked.append(best)
    first, second = picked
    if first.explanation_id == second.explanation_id:
        return None
    if already_said(asked[1], idx.explanations[first.explanation_id]):
        return None  # the first answer already says what the second part asks
    return first, second


# Course terms a part needs to have a subject of its own (see _covered_part): "why is the output unchanged?" names
# two ("output", "unchanged"), "why does an inner dimension of 8190 slow down a bf16 matmul?" three, "why does tensor
# parallelism stay inside one NVLink node?" four.
OWN_SUBJECT_TERMS = 3


def _covered_part(question: str, names: list[str], counts: Counter, words: frozenset[str], course: Course):
    """For a message asking several things, some naming what the course never mentions: the strong match of
    the parts that name none of it, or None."""
    if not names:
        return None
    context, asked = question_parts(question)
    # Of a name, the terms the course never uses: "persisting-L2" does not make "the L2 cache" a part it lacks.
    stems = course_stems(course)
    named = {t for name in names for t in tokenize(name) if not stems[t]} or {t for n in names for t in tokenize(n)}
    covered, about_uncovered = [], []
    for _, parts in parts_by_sentence(question):
        # A part that goes on from one naming what the course lacks, in the same sentence, is about that:
        # "How does speculative decoding work, and why does the output stay the same?". Unless it names a subject
        # of its own: "How does AMD's interconnect work and why does tensor parallelism stay inside one NVLink node?"
        after_uncovered = False
        for part in parts or ():
            own = [t for t in _named_course_terms(part, counts) if t not in named]
            after_uncovered = (after_uncovered and len(own) < OWN_SUBJECT_TERMS) or bool(named & set(tokenize(part)))
            (about_uncovered if after_uncovered else covered).append(part)
    if not covered or len(covered) == len(asked):
        return None
    refers_back = any(_PRONOUN.search(part) for part in covered)
    if named & set(tokenize(context)):
        if refers_back:
            return None  # "We run LoRA adapters. How fast is it?": "it" may well be what the course lacks
        # "We serve hundreds of LoRA adapters. How does batching help the base model's decode matmuls, ...?":
        # the scene names it, the covered part asks about something the course has.
        context = " ".join(w for w in context.split() if not named & set(tokenize(w)))
    if refers_back:
        # "Does FlashAttention work the same on AMD GPUs? And what makes it fast?": "it" is the course's
        # subject named beside what it lacks.
        said = " ".join(about_uncovered)
        terms = set(course_terms(said, counts))
        context = " ".join([context, *dict.fromkeys(w for w in re.findall(r"[\w-]+", said) if w.lower() in terms)])
    found = explanation_match.match(rewrite(f"{context} {' '.join(covered)}", words), course.slug, k=1)
    # The bar of any question naming what the course lacks: a middling match is usually a namesake.
    return found[0] if found and found[0].score >= UNCOVERED_ANSWER else None


def _with_each_part(plan: Plan, each, matches, exclude_card_id: int | None) -> Plan:
    """Two explanations, one per part asked, each whole; no lesson quote (the two say enough)."""
    first, second = each
    plan = _with_explanation(plan, first, matches, exclude_card_id)
    plan.also = explanation_match.get_index(plan.course.slug).explanations[second.explanation_id]
    plan.each_part = True
    plan.support, plan.quote = None, ""
    plan.near = [m for m in plan.near if m.explanation_id != second.explanation_id]
    plan.lab = plan.lab or plan.also.lab or None
    plan.uncovered = [t for t in plan.uncovered if t.lower() not in plan.also.answer.lower()]
    return plan


def _with_both_sides(plan: Plan, sides: tuple[Explanation, Explanation], exclude_card_id: int | None) -> Plan:
    plan.kind = "explanation"
    plan.explanation, plan.also = sides
    plan.check_question = check_yourself(plan.explanation, exclude_card_id)
    plan.lab = plan.explanation.lab or plan.also.lab or None
    plan.uncovered = [t for t in plan.uncovered if t.lower() not in f"{sides[0].answer} {sides[1].answer}".lower()]
    return plan


def check_yourself(explanation: Explanation, exclude_card_id: int | None) -> str | None:
    """A question from a card on the same point: a recall, interview, predict or numeric prompt first."""
    cards = [c for c in explanation.cards.all() if c.pk != exclude_card_id]
    for kinds in ((Card.Kind.RECALL, Card.Kind.INTERVIEW, Card.Kind.PREDICT, Card.Kind.NUMERIC), (Card.Kind.BASIC,)):
        for card in cards:
            if card.kind in kinds:
                if card.kind != Card.Kind.BASIC:
                    return card.prompt
                # "Warp" reads "warp"; a name with other capitals stays as written ("FlashAttention", "Nsight Systems").
                plain = not any(c.isupper() for c in card.prompt[1:])
                term = card.prompt[:1].lower() + card.prompt[1:] if plain else card.prompt
                return f"In your own words: what does *{term}* mean?"
    return None


def _other_course(query: str, course: Course) -> Course | None:
    for other in Course.objects.exclude(pk=course.pk).order_by("title"):
        found = explanation_match.match(query, other.slug, k=1)
        if found and found[0].answers:
            return other
    return None
