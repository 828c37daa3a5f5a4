"""Work the teacher would otherwise do on a learner's first question: encoding the course's explanation
wordings and answers, its lessons' passages and quotable sentences (and the intent exemplars) into MiniLM vectors, which
are kept on disk under VAR_DIR/cache."""

from __future__ import annotations

import time

from tutor.teacher import embeddings, explanation_match, intent, lesson_quotes
from tutor.teacher.retrieval import get_index


def encode_wordings(course_slug: str) -> str:
    """Encode (or load from the disk cache) the course's wordings and the exemplars; says what it did."""
    if not explanation_match.paraphrase_vote_available():
        return f"teacher {course_slug}: MiniLM is not installed, so nothing to encode (lexical matching only)"
    t0 = time.perf_counter()
    idx = explanation_match.get_index(course_slug)
    idx.vectors()
    answers = idx.answer_vectors()
    windows = lesson_quotes.window_vectors(course_slug)
    embeddings.passage_matrix(get_index(course_slug))
    for side in ("teacher", "course", "off_topic"):
        intent.exemplar_vectors(side)
    seconds = time.perf_counter() - t0
    return (
        f"teacher {course_slug}: {len(idx.texts)} explanation wordings, {len(answers)} answers and {len(windows)} "
        f"lesson quotes ready ({seconds:.1f} s, host clock)"
    )
