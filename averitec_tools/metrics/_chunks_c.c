/* Part of the optional _text_c extension: the Treebank chunk tokenizer's planning in C, and
 * ``inert_many(chunks)``: treebank.is_inert's answer where it needs no regular expression.
 *
 * ``plan_sentences(sentences, chunks, tails)`` follows ChunkTokenizer.tokenize_many
 * (averitec_tools/metrics/treebank.py): a sentence is its whitespace-separated chunks before
 * its tail (the last chunk not made of closing quotes and brackets only, and all after it),
 * each chunk with its left context (START, SPACE, OTHER: the start of the text, a space,
 * other whitespace) and its right context (SPACE, OTHER). Its tokens are
 * chunks[(left, right)][chunk] of each chunk, then tails[(left, tail)] -- the remembered
 * tokens the Python rules computed -- or, when one of them is not remembered yet, None (the
 * missing (left, right, chunk) and (left, tail, one_chunk) are reported); False: the tail is
 * the whole sentence (the Python planner takes it). tests/test_text_accel.py checks it
 * against the pure-Python path and the rules themselves.
 *
 * With a fourth argument ``holes`` true, a sentence with something missing is not None but a
 * tuple of its pieces in order: the tokens assembled before the first missing piece (a list),
 * then each later piece's remembered tokens or, where it is missing, its key -- (left, right,
 * chunk) or (left, tail), an int first: a hole. Once the missing pieces are learnt,
 * ``fill_plans(plans, chunks, tails)`` gives such sentences' tokens without scanning them again
 * (a new submission's sentences mostly end in a new tail: planning them twice cost as much as
 * the first plan).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include "_text_c.h"

/* _CLOSING_ONLY: ] ) } > " ' » ” ’ */
static int is_closing(Py_UCS4 c) {
    return c == ']' || c == ')' || c == '}' || c == '>' || c == '"' || c == '\'' || c == 0xbb || c == 0x201d ||
           c == 0x2019;
}

/* Whether the sentence has single spaces only, none at either end (Python's fast path). */
static int simple(int kind, const void *data, Py_ssize_t n) {
    if (n == 0 || PyUnicode_READ(kind, data, 0) == ' ' || PyUnicode_READ(kind, data, n - 1) == ' ')
        return 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (c == ' ' ? PyUnicode_READ(kind, data, i + 1) == ' ' : Py_UNICODE_ISSPACE(c))
            return 0;
    }
    return 1;
}

enum { START, SPACE, OTHER };

typedef struct {
    PyObject *memo[3][3]; /* chunks[(left, right)] (borrowed; NULL: none yet) */
    PyObject *tails;      /* tails[(left, tail)] */
    PyObject *missing_chunks, *missing_tails; /* sets of (left, right, chunk) and (left, tail, one_chunk) */
    int holes;            /* an incomplete sentence's plan is its pieces (see the top) */
    PyObject *pieces;     /* holes mode, from a sentence's first missing piece on: its pieces so far */
} Memos;

/* Extend tokens (NULL: only look) by memo[key]; 1: found, 0: missing, -1: error. */
static int extend(PyObject *tokens, PyObject *memo, PyObject *key) {
    PyObject *found = memo == NULL ? NULL : PyDict_GetItemWithError(memo, key);
    if (found == NULL)
        return PyErr_Occurred() ? -1 : 0;
    if (tokens == NULL)
        return 1;
    Py_ssize_t at = PyList_GET_SIZE(tokens);
    return PyList_SetSlice(tokens, at, at, found) < 0 ? -1 : 1;
}

/* Add (a, b, c) to the set of missing ones. */
static int report(PyObject *missing, PyObject *a, PyObject *b, PyObject *c) {
    PyObject *item = PyTuple_Pack(3, a, b, c);
    int rc = item == NULL ? -1 : PySet_Add(missing, item);
    Py_XDECREF(item);
    return rc;
}

static PyObject *CONTEXTS[3]; /* the ints START, SPACE, OTHER */

/* extend(), or past a missing piece in holes mode, memo[key]'s tokens appended to the pieces. */
static int lookup_piece(PyObject *tokens, PyObject *memo, PyObject *key, Memos *m) {
    if (m->pieces == NULL)
        return extend(tokens, memo, key);
    PyObject *found = memo == NULL ? NULL : PyDict_GetItemWithError(memo, key);
    if (found == NULL)
        return PyErr_Occurred() ? -1 : 0;
    return PyList_Append(m->pieces, found) < 0 ? -1 : 1;
}

/* Holes mode: a missing piece's key goes on the pieces, which the first one starts with the
 * tokens assembled before it. 0, or -1 on an error. */
static int add_hole(PyObject *tokens, PyObject *hole, Memos *m) {
    if (!m->holes)
        return 0;
    if (m->pieces == NULL) {
        m->pieces = PyList_New(0);
        if (m->pieces == NULL || PyList_Append(m->pieces, tokens) < 0)
            return -1;
    }
    return PyList_Append(m->pieces, hole);
}

/* The chunk sentence[a:b] with its left and right context. */
static int chunk_lookup(PyObject *tokens, PyObject *sentence, Py_ssize_t a, Py_ssize_t b, int left, int right, Memos *m) {
    PyObject *chunk = PyUnicode_Substring(sentence, a, b);
    if (chunk == NULL)
        return -1;
    int got = lookup_piece(tokens, m->memo[left][right], chunk, m);
    if (got == 0) {
        PyObject *hole = PyTuple_Pack(3, CONTEXTS[left], CONTEXTS[right], chunk);
        if (hole == NULL || PySet_Add(m->missing_chunks, hole) < 0 || add_hole(tokens, hole, m) < 0)
            got = -1;
        Py_XDECREF(hole);
    }
    Py_DECREF(chunk);
    return got;
}

/* The tail sentence[start:] after left context left. */
static int tail_lookup(PyObject *tokens, PyObject *sentence, Py_ssize_t start, int left, int one_chunk, Memos *m) {
    PyObject *tail = PyUnicode_Substring(sentence, start, PyUnicode_GET_LENGTH(sentence));
    PyObject *key = tail == NULL ? NULL : PyTuple_Pack(2, CONTEXTS[left], tail);
    int got = key == NULL ? -1 : lookup_piece(tokens, m->tails, key, m);
    if (got == 0 && (report(m->missing_tails, CONTEXTS[left], tail, one_chunk ? Py_True : Py_False) < 0 ||
                     add_hole(tokens, key, m) < 0))
        got = -1;
    Py_XDECREF(tail);
    Py_XDECREF(key);
    return got;
}

static int context(int kind, const void *data, Py_ssize_t at) {
    return PyUnicode_READ(kind, data, at) == ' ' ? SPACE : OTHER;
}

/* Whether sentence[a:b] is made of closing quotes and brackets only (_CLOSING_ONLY). */
static int closing_only(int kind, const void *data, Py_ssize_t a, Py_ssize_t b) {
    for (Py_ssize_t k = a; k < b; k++)
        if (!is_closing(PyUnicode_READ(kind, data, k)))
            return 0;
    return 1;
}

/* Where the tail starts: the start of the last chunk not made of closers only, -1 when that is
 * the first chunk or there is none (the Python planner takes the sentence whole). */
static Py_ssize_t tail_start(int kind, const void *data, Py_ssize_t n, Py_ssize_t *last_chunk) {
    Py_ssize_t end = n, chunks = 0;
    *last_chunk = -1;
    while (end > 0) {
        while (end > 0 && Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, end - 1)))
            end--;
        if (end == 0)
            break;
        Py_ssize_t a = end;
        while (a > 0 && !Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, a - 1)))
            a--;
        if (chunks++ == 0)
            *last_chunk = a;
        if (!closing_only(kind, data, a, end)) {
            Py_ssize_t before = a;
            while (before > 0 && Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, before - 1)))
                before--;
            return before > 0 ? a : -1; /* a chunk before it: a tail; else the first chunk */
        }
        end = a;
    }
    return -1;
}

/* One sentence: a list of tokens, None (something missing; in holes mode its pieces) or False
 * (the Python planner takes it). */
static PyObject *plan_one(PyObject *sentence, Memos *m) {
    int kind = PyUnicode_KIND(sentence);
    const void *data = PyUnicode_DATA(sentence);
    Py_ssize_t n = PyUnicode_GET_LENGTH(sentence), last_chunk;
    Py_ssize_t tail = tail_start(kind, data, n, &last_chunk);
    if (tail < 0)
        Py_RETURN_FALSE;
    PyObject *tokens = PyList_New(0);
    if (tokens == NULL)
        return NULL;
    int complete = 1, got = 1;
    Py_ssize_t a = 0;
    while (got >= 0) {
        while (a < tail && Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, a)))
            a++;
        if (a >= tail)
            break;
        Py_ssize_t b = a;
        while (!Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, b)))
            b++; /* a chunk before the tail always has whitespace after it */
        int left = a == 0 ? START : context(kind, data, a - 1);
        got = chunk_lookup(complete || m->holes ? tokens : NULL, sentence, a, b, left, context(kind, data, b), m);
        complete &= got > 0;
        a = b;
    }
    if (got >= 0) {
        int one_chunk = tail == last_chunk && simple(kind, data, n);
        got = tail_lookup(complete || m->holes ? tokens : NULL, sentence, tail, context(kind, data, tail - 1), one_chunk,
                          m);
        complete &= got > 0;
    }
    PyObject *plan = got >= 0 && complete ? Py_NewRef(tokens) : NULL;
    if (got >= 0 && !complete)
        plan = m->pieces != NULL ? PyList_AsTuple(m->pieces) : Py_NewRef(Py_None);
    Py_CLEAR(m->pieces);
    Py_DECREF(tokens);
    return plan;
}

/* The inner memo dicts of chunks[(left, right)] for every pair of contexts. */
static int read_memos(PyObject *chunks, Memos *m) {
    for (int k = 0; k < 3; k++)
        if (CONTEXTS[k] == NULL && (CONTEXTS[k] = PyLong_FromLong(k)) == NULL)
            return -1;
    for (int left = 0; left < 3; left++) {
        for (int right = 0; right < 3; right++) {
            PyObject *key = PyTuple_Pack(2, CONTEXTS[left], CONTEXTS[right]);
            if (key == NULL)
                return -1;
            PyObject *memo = PyDict_GetItemWithError(chunks, key);
            Py_DECREF(key);
            if (memo == NULL && PyErr_Occurred())
                return -1;
            if (memo != NULL && !PyDict_Check(memo)) {
                PyErr_SetString(PyExc_TypeError, "chunks must map (left, right) to dicts");
                return -1;
            }
            m->memo[left][right] = memo;
        }
    }
    return 0;
}

PyObject *plan_sentences(PyObject *self, PyObject *args) {
    PyObject *sentences, *chunks;
    Memos m = {.holes = 0, .pieces = NULL};
    if (!PyArg_ParseTuple(args, "O!O!O!|p", &PyList_Type, &sentences, &PyDict_Type, &chunks, &PyDict_Type, &m.tails,
                          &m.holes))
        return NULL;
    if (read_memos(chunks, &m) < 0)
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(sentences);
    PyObject *out = PyList_New(n), *result = NULL;
    m.missing_chunks = PySet_New(NULL);
    m.missing_tails = PySet_New(NULL);
    if (out == NULL || m.missing_chunks == NULL || m.missing_tails == NULL)
        goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *sentence = PyList_GET_ITEM(sentences, i);
        PyObject *planned = require_str(sentence, "sentences must be str") < 0 ? NULL : plan_one(sentence, &m);
        if (planned == NULL)
            goto done;
        PyList_SET_ITEM(out, i, planned);
    }
    result = Py_BuildValue("(OOO)", out, m.missing_chunks, m.missing_tails);
done:
    Py_XDECREF(out);
    Py_XDECREF(m.missing_chunks);
    Py_XDECREF(m.missing_tails);
    return result;
}

/* A hole's tokens: tails[(left, tail)] or chunks[(left, right)][chunk] (borrowed; NULL with an
 * exception set when it is missing or malformed). */
static PyObject *hole_tokens(PyObject *hole, Memos *m) {
    PyObject *memo = m->tails, *key = hole;
    if (PyTuple_GET_SIZE(hole) == 3) {
        long left = PyLong_AsLong(PyTuple_GET_ITEM(hole, 0));
        PyObject *right_obj = PyTuple_GET_ITEM(hole, 1);
        long right = PyLong_Check(right_obj) ? PyLong_AsLong(right_obj) : -1;
        if (left < 0 || left > 2 || right < 0 || right > 2) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "a hole's contexts must be 0, 1 or 2");
            return NULL;
        }
        memo = m->memo[left][right];
        key = PyTuple_GET_ITEM(hole, 2);
    } else if (PyTuple_GET_SIZE(hole) != 2) {
        PyErr_SetString(PyExc_ValueError, "a hole is (left, right, chunk) or (left, tail)");
        return NULL;
    }
    PyObject *found = memo == NULL ? NULL : PyDict_GetItemWithError(memo, key);
    if (found == NULL && !PyErr_Occurred())
        PyErr_SetObject(PyExc_KeyError, hole);
    return found;
}

/* One plan's tokens: its pieces chained, each hole's tokens looked up. */
static PyObject *fill_one(PyObject *plan, Memos *m) {
    if (!PyTuple_Check(plan)) {
        PyErr_SetString(PyExc_TypeError, "plans must be tuples of pieces");
        return NULL;
    }
    PyObject *tokens = PyList_New(0);
    for (Py_ssize_t k = 0; tokens != NULL && k < PyTuple_GET_SIZE(plan); k++) {
        PyObject *piece = PyTuple_GET_ITEM(plan, k);
        int is_hole = PyTuple_Check(piece) && PyTuple_GET_SIZE(piece) > 0 && PyLong_Check(PyTuple_GET_ITEM(piece, 0));
        PyObject *value = is_hole ? hole_tokens(piece, m) : piece;
        Py_ssize_t at = PyList_GET_SIZE(tokens);
        if (value == NULL || PyList_SetSlice(tokens, at, at, value) < 0)
            Py_CLEAR(tokens);
    }
    return tokens;
}

PyObject *fill_plans(PyObject *self, PyObject *args) {
    PyObject *plans, *chunks;
    Memos m = {.holes = 0, .pieces = NULL};
    if (!PyArg_ParseTuple(args, "O!O!O!", &PyList_Type, &plans, &PyDict_Type, &chunks, &PyDict_Type, &m.tails))
        return NULL;
    if (read_memos(chunks, &m) < 0)
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(plans);
    PyObject *out = PyList_New(n);
    for (Py_ssize_t i = 0; out != NULL && i < n; i++) {
        PyObject *tokens = fill_one(PyList_GET_ITEM(plans, i), &m);
        if (tokens == NULL)
            Py_CLEAR(out);
        else
            PyList_SET_ITEM(out, i, tokens);
    }
    return out;
}

/* treebank.is_inert's first two answers: False when a rule character (or "--") is in the chunk;
 * True for an ASCII chunk without one whose lower-case form holds no letter contraction; None
 * otherwise (the Python test decides: contractions matched case-insensitively beyond ASCII). */
static PyObject *inert_one(PyObject *chunk) {
    static const char *const letters[] = {"cannot", "gimme", "gonna", "gotta", "lemme", "wanna"};
    int kind = PyUnicode_KIND(chunk);
    const void *data = PyUnicode_DATA(chunk);
    Py_ssize_t n = PyUnicode_GET_LENGTH(chunk);
    int ascii = 1;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if ((c < 128 && strchr("`\"'.:,;@#$%&?!*()[]{}<>", (int)c) != NULL && c != 0) ||
            c == 0xab || c == 0x201c || c == 0x2018 || c == 0x201e || c == 0xbb || c == 0x201d || c == 0x2019 ||
            (c == '-' && i + 1 < n && PyUnicode_READ(kind, data, i + 1) == '-'))
            Py_RETURN_FALSE;
        ascii &= c < 128;
    }
    if (!ascii)
        Py_RETURN_NONE;
    for (Py_ssize_t i = 0; i < n; i++) {
        for (size_t w = 0; w < sizeof(letters) / sizeof(letters[0]); w++) {
            const char *word = letters[w];
            Py_ssize_t k = 0;
            while (word[k] && i + k < n && Py_TOLOWER(PyUnicode_READ(kind, data, i + k)) == (Py_UCS4)word[k])
                k++;
            if (!word[k])
                Py_RETURN_NONE;
        }
    }
    Py_RETURN_TRUE;
}

PyObject *inert_many(PyObject *self, PyObject *args) {
    PyObject *chunks;
    if (!PyArg_ParseTuple(args, "O!", &PyList_Type, &chunks))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(chunks);
    PyObject *out = PyList_New(n);
    for (Py_ssize_t i = 0; out != NULL && i < n; i++) {
        PyObject *chunk = PyList_GET_ITEM(chunks, i);
        if (require_str(chunk, "chunks must be str") < 0)
            Py_CLEAR(out);
        else
            PyList_SET_ITEM(out, i, inert_one(chunk));
    }
    return out;
}
