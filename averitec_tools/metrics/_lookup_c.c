/* Part of the optional _text_c extension: table lookups over many token lists at once.
 *
 * ``lookup_many(lists, mapping)`` is ``[[mapping[x] for x in xs] for xs in lists]``;
 * ``join_many(lists, codes)`` is ``[b"".join(codes[x] for x in xs) for xs in lists]``;
 * ``concat_many(lists, mapping)`` is ``[[y for x in xs for y in mapping[x]] for xs in lists]``;
 * ``missing_many(lists, mapping)`` is ``{x for xs in lists for x in xs if x not in mapping}``;
 * ``analyse_many(lists, info)`` is each list's stems, stem ids and joined codes from
 * ``info[word] = (stem, stem id, code)``, in one pass (three lists).
 * A missing key raises KeyError (as the Python expressions do). averitec_tools.metrics.text_accel
 * holds the pure-Python equivalents; tests/test_text_accel.py compares them.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include "_text_c.h"

int require_str(PyObject *item, const char *message) {
    if (PyUnicode_Check(item))
        return 0;
    PyErr_SetString(PyExc_TypeError, message);
    return -1;
}

/* b"".join(row), row a list of bytes. */
static PyObject *joined(PyObject *row) {
    Py_ssize_t m = PyList_GET_SIZE(row), size = 0;
    for (Py_ssize_t j = 0; j < m; j++) {
        PyObject *item = PyList_GET_ITEM(row, j);
        if (!PyBytes_Check(item)) {
            PyErr_SetString(PyExc_TypeError, "codes must be bytes");
            return NULL;
        }
        size += PyBytes_GET_SIZE(item);
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, size);
    if (out == NULL)
        return NULL;
    char *at = PyBytes_AS_STRING(out);
    for (Py_ssize_t j = 0; j < m; j++) {
        PyObject *item = PyList_GET_ITEM(row, j);
        memcpy(at, PyBytes_AS_STRING(item), (size_t)PyBytes_GET_SIZE(item));
        at += PyBytes_GET_SIZE(item);
    }
    return out;
}

/* row's items (sequences) one after another, as one list. */
static PyObject *concatenated(PyObject *row) {
    PyObject *out = PyList_New(0);
    Py_ssize_t m = PyList_GET_SIZE(row);
    for (Py_ssize_t j = 0; out != NULL && j < m; j++) {
        Py_ssize_t at = PyList_GET_SIZE(out);
        if (PyList_SetSlice(out, at, at, PyList_GET_ITEM(row, j)) < 0)
            Py_CLEAR(out);
    }
    return out;
}

enum Mode { LOOKUP, JOIN, CONCAT };

/* [[mapping[x] for x in xs] for xs in lists]; JOIN: b"".join of each row, CONCAT: its items chained. */
static PyObject *map_lists(PyObject *args, enum Mode mode) {
    PyObject *lists, *mapping;
    if (!PyArg_ParseTuple(args, "O!O!", &PyList_Type, &lists, &PyDict_Type, &mapping))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(lists);
    PyObject *out = PyList_New(n);
    for (Py_ssize_t i = 0; out != NULL && i < n; i++) {
        PyObject *xs = PySequence_Fast(PyList_GET_ITEM(lists, i), "lists must hold sequences");
        PyObject *row = NULL;
        if (xs != NULL) {
            Py_ssize_t m = PySequence_Fast_GET_SIZE(xs);
            row = PyList_New(m);
            for (Py_ssize_t j = 0; row != NULL && j < m; j++) {
                PyObject *key = PySequence_Fast_GET_ITEM(xs, j);
                PyObject *value = PyDict_GetItemWithError(mapping, key);
                if (value == NULL) {
                    if (!PyErr_Occurred())
                        PyErr_SetObject(PyExc_KeyError, key);
                    Py_CLEAR(row);
                } else {
                    Py_INCREF(value);
                    PyList_SET_ITEM(row, j, value);
                }
            }
            Py_DECREF(xs);
        }
        if (row != NULL && mode != LOOKUP)
            Py_SETREF(row, mode == JOIN ? joined(row) : concatenated(row));
        if (row == NULL)
            Py_CLEAR(out);
        else
            PyList_SET_ITEM(out, i, row);
    }
    return out;
}

PyObject *lookup_many(PyObject *self, PyObject *args) { return map_lists(args, LOOKUP); }

PyObject *join_many(PyObject *self, PyObject *args) { return map_lists(args, JOIN); }

PyObject *concat_many(PyObject *self, PyObject *args) { return map_lists(args, CONCAT); }

PyObject *missing_many(PyObject *self, PyObject *args) {
    PyObject *lists, *mapping;
    if (!PyArg_ParseTuple(args, "O!O!", &PyList_Type, &lists, &PyDict_Type, &mapping))
        return NULL;
    PyObject *out = PySet_New(NULL);
    for (Py_ssize_t i = 0; out != NULL && i < PyList_GET_SIZE(lists); i++) {
        PyObject *xs = PySequence_Fast(PyList_GET_ITEM(lists, i), "lists must hold sequences");
        if (xs == NULL) {
            Py_CLEAR(out);
            break;
        }
        for (Py_ssize_t j = 0; j < PySequence_Fast_GET_SIZE(xs); j++) {
            PyObject *key = PySequence_Fast_GET_ITEM(xs, j);
            int has = PyDict_Contains(mapping, key);
            if (has < 0 || (!has && PySet_Add(out, key) < 0)) {
                Py_CLEAR(out);
                break;
            }
        }
        Py_DECREF(xs);
    }
    return out;
}

/* One list of words: its stems, stem ids and joined codes from info[word] = (stem, stem id, code). */
static int analyse_one(PyObject *xs, PyObject *info, PyObject **stems, PyObject **sids, PyObject **packed) {
    Py_ssize_t m = PySequence_Fast_GET_SIZE(xs), size = 0;
    PyObject **codes = PyMem_Malloc(sizeof(PyObject *) * (size_t)(m + 1)); /* borrowed from info's tuples */
    *stems = PyList_New(m);
    *sids = PyList_New(m);
    if (codes == NULL || *stems == NULL || *sids == NULL) {
        PyMem_Free(codes);
        return -1;
    }
    for (Py_ssize_t j = 0; j < m; j++) {
        PyObject *key = PySequence_Fast_GET_ITEM(xs, j);
        PyObject *entry = PyDict_GetItemWithError(info, key);
        if (entry == NULL || !PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != 3 ||
            !PyBytes_Check(PyTuple_GET_ITEM(entry, 2))) {
            if (!PyErr_Occurred())
                PyErr_SetObject(entry == NULL ? PyExc_KeyError : PyExc_TypeError, key);
            PyMem_Free(codes);
            return -1;
        }
        PyList_SET_ITEM(*stems, j, Py_NewRef(PyTuple_GET_ITEM(entry, 0)));
        PyList_SET_ITEM(*sids, j, Py_NewRef(PyTuple_GET_ITEM(entry, 1)));
        codes[j] = PyTuple_GET_ITEM(entry, 2);
        size += PyBytes_GET_SIZE(codes[j]);
    }
    *packed = PyBytes_FromStringAndSize(NULL, size);
    if (*packed != NULL) {
        char *at = PyBytes_AS_STRING(*packed);
        for (Py_ssize_t j = 0; j < m; j++) { /* info is not changed in between: no Python code ran */
            memcpy(at, PyBytes_AS_STRING(codes[j]), (size_t)PyBytes_GET_SIZE(codes[j]));
            at += PyBytes_GET_SIZE(codes[j]);
        }
    }
    PyMem_Free(codes);
    return *packed == NULL ? -1 : 0;
}

PyObject *analyse_many(PyObject *self, PyObject *args) {
    PyObject *lists, *info;
    if (!PyArg_ParseTuple(args, "O!O!", &PyList_Type, &lists, &PyDict_Type, &info))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(lists);
    PyObject *all_stems = PyList_New(n), *all_sids = PyList_New(n), *all_packed = PyList_New(n), *result = NULL;
    if (all_stems == NULL || all_sids == NULL || all_packed == NULL)
        goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *stems = NULL, *sids = NULL, *packed = NULL;
        PyObject *xs = PySequence_Fast(PyList_GET_ITEM(lists, i), "lists must hold sequences");
        int ok = xs != NULL && analyse_one(xs, info, &stems, &sids, &packed) == 0;
        Py_XDECREF(xs);
        if (!ok) {
            Py_XDECREF(stems);
            Py_XDECREF(sids);
            Py_XDECREF(packed);
            goto done;
        }
        PyList_SET_ITEM(all_stems, i, stems);
        PyList_SET_ITEM(all_sids, i, sids);
        PyList_SET_ITEM(all_packed, i, packed);
    }
    result = PyTuple_Pack(3, all_stems, all_sids, all_packed);
done:
    Py_XDECREF(all_stems);
    Py_XDECREF(all_sids);
    Py_XDECREF(all_packed);
    return result;
}
