#!/usr/bin/env python3
"""Reference CrossCodeEval BM25 retrieval (NLTK 3.8.1 word_tokenize + rank_bm25 BM25Okapi).

Written from the rules in DESIGN.md section 4; crossfile's `bm25-cceval` and `bm25-cceval-rg1`
retrievers must agree with it. The corpus is rebuilt for every query, with the caps of the
CrossCodeEval script (1,000 files, 1,000 chunks), as that script does.

usage:
  cceval_reference.py query   < requests.jsonl   one JSON request per line -> one JSON answer per line
  cceval_reference.py query --reuse-tokens        the same, but a file's chunks are tokenized once per
                                                   process (BM25 is still rebuilt per query); for tests
  cceval_reference.py tokens  < texts.jsonl      one JSON string per line -> its token list per line

A request: {"root": DIR, "file": REL, "language": "python|java|typescript|csharp",
            "prompt": TEXT, "top_k": N, "mode": "ranked|rg1"}
An answer: {"hits": [{"path", "chunk_no", "score", "text"}], "seconds": S}
"""
import glob
import json
import os
import re
import sys
import time

import nltk
from rank_bm25 import BM25Okapi

assert nltk.__version__ == "3.8.1", nltk.__version__

EXTS = {"python": ["py"], "java": ["java"], "typescript": ["ts", "tsx"], "csharp": ["cs"]}
WORD = re.compile(r"\w+")
MAX_FILES = 1000
MAX_CHUNKS = 1000
WINDOW = 10
MAX_DISTANCE = 100


def tokenize(text):
    return [w for tok in nltk.word_tokenize(text, preserve_line=True) for w in WORD.findall(tok)]


def read_text(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except UnicodeDecodeError:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", errors="replace")


def file_distance(a, b):
    pa, pb = a.split("/")[:-1], b.split("/")[:-1]
    common = 0
    while common < min(len(pa), len(pb)) and pa[common] == pb[common]:
        common += 1
    return (len(pa) - common) + (len(pb) - common)


def candidate_files(root, current, language):
    found = set()
    for ext in EXTS[language]:
        pattern = f"src/**/*.{ext}" if language == "typescript" else f"**/*.{ext}"
        for p in glob.glob(os.path.join(root, pattern), recursive=True):
            if os.path.isfile(p):
                found.add(os.path.relpath(p, root).replace(os.sep, "/"))
    found.discard(current)
    ranked = sorted((file_distance(current, f), f) for f in found)
    return [f for d, f in ranked if d <= MAX_DISTANCE][:MAX_FILES]


def file_chunks(text):
    lines = [l for l in text.split("\n") if l.strip()]
    chunks = ["\n".join(lines[i:i + WINDOW]) for i in range(0, len(lines), WINDOW)]
    out = []
    for c in chunks:
        toks = tokenize(c)
        if toks:
            out.append((c, toks))
    return out


def query_text(prompt):
    lines = [l for l in prompt.split("\n") if l.strip()]
    return "\n".join(lines[-WINDOW:])


REUSE = {}


def chunks_of(path, reuse):
    if not reuse:
        return file_chunks(read_text(path))
    if path not in REUSE:
        REUSE[path] = file_chunks(read_text(path))
    return REUSE[path]


def retrieve(req, reuse=False):
    root, current = req["root"], req["file"]
    ids, texts, corpus, per_file = [], [], [], {}
    for f in candidate_files(root, current, req["language"]):
        if len(corpus) >= MAX_CHUNKS:
            break  # later files cannot contribute; stopping here changes no result
        chunks = chunks_of(os.path.join(root, f), reuse)
        per_file[f] = [c for c, _ in chunks]
        for no, (c, toks) in enumerate(chunks):
            if len(corpus) < MAX_CHUNKS:
                ids.append((f, no)); texts.append(c); corpus.append(toks)
    if not corpus:
        return []
    bm25 = BM25Okapi(corpus)
    scores = bm25.get_scores(tokenize(query_text(req["prompt"])))
    order = sorted(range(len(corpus)), key=lambda i: (scores[i], f"{ids[i][0]}|{ids[i][1]}"), reverse=True)
    hits = []
    if req.get("mode", "ranked") == "ranked":
        for i in order[: req["top_k"]]:
            hits.append({"path": ids[i][0], "chunk_no": ids[i][1], "score": float(scores[i]), "score_repr": repr(float(scores[i])), "text": texts[i]})
        return hits
    seen = set()
    for i in order[:5]:
        f, no = ids[i]
        nxt = no + 1 if no + 1 < len(per_file[f]) else no
        text = per_file[f][nxt]
        if text in seen:
            continue
        seen.add(text)
        hits.append({"path": f, "chunk_no": nxt, "score": float(scores[i]), "text": text})
    return hits


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "query"
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        if mode == "tokens":
            print(json.dumps(tokenize(req)), flush=True)
        else:
            t = time.perf_counter()
            hits = retrieve(req, reuse="--reuse-tokens" in sys.argv)
            print(json.dumps({"hits": hits, "seconds": time.perf_counter() - t}), flush=True)


if __name__ == "__main__":
    main()
