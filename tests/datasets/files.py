"""Small files in the exact published formats, with every real-file quirk, written by tests.

LongMemEval: a list of instances (question_id, question_type, question, answer — a string or an
integer —, question_date like ``2023/05/30 (Tue) 23:17``, haystack_session_ids, haystack_dates,
haystack_sessions of {role, content[, has_answer]} turns, answer_session_ids; abstention only by
the ``_abs`` id suffix, its answer an explanation). LoCoMo: ``locomo10.json``'s samples
{sample_id, conversation, observation, session_summary, event_summary, qa} with photo turns,
``category`` as the string '5', category-5 evidence as a string repr, integer and missing
answers, ``adversarial_answer``, and a row without evidence.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def turn(role: str, content: str, has_answer: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {"role": role, "content": content}
    if has_answer:
        out["has_answer"] = True
    return out


def lme_instance(qid: str, qtype: str, question: str, answer: Any, sessions: list[tuple[str, str, list]],
                 answer_ids: list[str], asked: str = "2023/05/30 (Tue) 23:17") -> dict[str, Any]:
    return {"question_id": qid, "question_type": qtype, "question": question, "answer": answer,
            "question_date": asked, "haystack_session_ids": [s[0] for s in sessions],
            "haystack_dates": [s[1] for s in sessions], "haystack_sessions": [s[2] for s in sessions],
            "answer_session_ids": answer_ids}


def filler(n: int) -> list[dict[str, Any]]:
    return [turn("user", f"Can you suggest a recipe with lentils, number {n}?"),
            turn("assistant", f"Try a lentil soup with cumin and lemon, variation {n}.")]


def lme_records() -> list[dict[str, Any]]:
    """Six instances: a plain one (sessions given out of date order), an integer answer,
    knowledge-update, temporal, an ``_abs`` question, and a preference (rubric) question."""
    return [
        lme_instance("e47becba", "single-session-user", "What degree did I graduate with?", "Business Administration", [
            ("sharegpt_a1_0", "2023/05/22 (Mon) 10:04", filler(1)),
            ("answer_280352e9", "2023/05/20 (Sat) 02:21", [
                turn("user", "I graduated with a degree in Business Administration last spring.", True),
                turn("assistant", "Congratulations on your Business Administration degree!")]),
            ("ultrachat_9_1", "2023/05/25 (Thu) 18:40", filler(2))], ["answer_280352e9"]),
        lme_instance("118b2229", "multi-session", "How many bikes do I own?", 3, [
            ("answer_b1", "2023/04/02 (Sun) 09:00", [turn("user", "I own 3 bikes: a road bike, a gravel bike and a BMX.", True),
                                                     turn("assistant", "That is a nice collection.")]),
            ("s_2", "2023/04/03 (Mon) 09:00", filler(3))], ["answer_b1"]),
        lme_instance("6a1eabeb", "knowledge-update", "Where do I keep my spare key now?", "under the blue flower pot", [
            ("answer_k1", "2023/03/01 (Wed) 08:00", [turn("user", "My spare key is in the mailbox.")]),
            ("answer_k2", "2023/03/09 (Thu) 08:00", [turn("user", "I moved my spare key under the blue flower pot.", True)])],
            ["answer_k1", "answer_k2"]),
        lme_instance("gpt4_2655b836", "temporal-reasoning", "How many days passed between my dentist visit and the "
                     "concert?", "18 days. 19 days (including the last day) is also acceptable.", [
            ("answer_t1", "2023/02/01 (Wed) 12:00", [turn("user", "Had my dentist visit today.", True)]),
            ("answer_t2", "2023/02/19 (Sun) 21:30", [turn("user", "The concert tonight was amazing!", True)])],
            ["answer_t1", "answer_t2"], asked="2023/03/01 (Wed) 10:00"),
        lme_instance("e47becba_abs", "single-session-user", "What degree did I graduate with in music?",
                     "You did not mention this information. You mentioned a Business Administration degree but not "
                     "a music degree.", [("answer_280352e9", "2023/05/20 (Sat) 02:21", filler(4))], ["answer_280352e9"]),
        lme_instance("0a995998", "single-session-preference", "Can you suggest a weekend activity?",
                     "The user would prefer suggestions involving hiking, since they mentioned loving the mountains.", [
                         ("answer_p1", "2023/01/10 (Tue) 19:00", [turn("user", "I love the mountains.", True)])],
                     ["answer_p1"]),
    ]


def locomo_records() -> list[dict[str, Any]]:
    """Two conversations in locomo10.json's format with every quirk of the real file."""
    conversation = {
        "speaker_a": "Caroline", "speaker_b": "Melanie",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Caroline", "dia_id": "D1:1", "text": "Hey Mel! I went to an LGBTQ support group yesterday."},
            {"speaker": "Melanie", "dia_id": "D1:2", "text": "That's great, Caroline! I painted a sunrise last week."},
            {"speaker": "Caroline", "dia_id": "D1:3", "text": "Look at this!",
             "img_url": ["https://example.invalid/photo.jpg"], "blip_caption": "a photo of a rainbow flag",
             "query": "rainbow flag parade"},
        ],
        "session_2_date_time": "10:04 am on 25 May, 2023",
        "session_2": [
            {"speaker": "Melanie", "dia_id": "D2:1", "text": "I ran a charity race for mental health on Saturday."},
            {"speaker": "Caroline", "dia_id": "D2:2", "text": "Amazing. I'm researching adoption agencies."},
        ],
        "session_3_date_time": "7:00 pm on 1 June, 2023",
        "session_3": [],
    }
    qa = [
        {"question": "When did Caroline go to the LGBTQ support group?", "answer": "7 May 2023", "evidence": ["D1:1"],
         "category": 2},
        {"question": "What did Melanie paint?", "answer": "a sunrise", "evidence": ["D1:2"], "category": 4},
        {"question": "What activities does Melanie do?", "answer": "painting, running", "evidence": ["D1:2", "D2:1"],
         "category": 1},
        {"question": "What would Caroline likely pursue?", "answer": "adoption; she is researching agencies",
         "evidence": ["D2:2"], "category": 3},
        {"question": "How many races did Melanie run?", "answer": 1, "evidence": ["D2:1"], "category": 4},
        {"question": "What did Caroline paint?", "adversarial_answer": "a sunrise", "evidence": "['D1:2']",
         "category": "5"},
        {"question": "What is Melanie's favourite flag?", "evidence": [], "category": 5},
        {"question": "Where does Melanie work?", "answer": None, "evidence": [], "category": 4},
    ]
    second = {
        "speaker_a": "Jon", "speaker_b": "Gina",
        "session_1_date_time": "4:20 pm on 20 January, 2023",
        "session_1": [{"speaker": "Jon", "dia_id": "D1:1", "text": "I lost my job as a banker, so I'm opening a dance studio."},
                      {"speaker": "Gina", "dia_id": "D1:2", "text": "I lost mine too; I'm starting a clothing store."}],
    }
    extras = {"observation": {}, "session_summary": {}, "event_summary": {}}
    return [{"sample_id": "conv-26", "conversation": conversation, "qa": qa, **extras},
            {"sample_id": "conv-30", "conversation": second, "qa": [
                {"question": "What business is Jon starting?", "answer": "a dance studio", "evidence": ["D1:1"],
                 "category": 4}], **extras}]


def write(path: Path, records: list[Any]) -> Path:
    path.write_text(json.dumps(records, indent=1), encoding="utf-8")
    return path
